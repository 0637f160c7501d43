// out = gelu_tanh(x @ w + b), accumulated and evaluated in double.
#include <cmath>

extern "C" void reference(const float* x, const float* w, const float* b, double* out) {
  for (long i = 0; i < M; ++i) {
    double* o = out + i * N;
    for (long j = 0; j < N; ++j) o[j] = b[j];
    for (long k = 0; k < K; ++k) {
      const double a = x[i * K + k];
      for (long j = 0; j < N; ++j) o[j] += a * w[k * N + j];
    }
    for (long j = 0; j < N; ++j) {
      const double t = o[j];
      o[j] = 0.5 * t * (1.0 + std::tanh(0.7978845608028654 * (t + 0.044715 * t * t * t)));
    }
  }
}
