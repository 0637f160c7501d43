// out = (x / rms(x)) @ w with rms over the last axis, no gain, no eps; in double.
#include <cmath>
#include <vector>

extern "C" void reference(const float* x, const float* w, double* out) {
  std::vector<double> xn(K);
  for (long i = 0; i < M; ++i) {
    double ss = 0.0;
    for (long k = 0; k < K; ++k) ss += (double)x[i * K + k] * x[i * K + k];
    const double rms = std::sqrt(ss / K);
    for (long k = 0; k < K; ++k) xn[k] = x[i * K + k] / rms;
    for (long j = 0; j < N; ++j) out[i * N + j] = 0.0;
    for (long k = 0; k < K; ++k)
      for (long j = 0; j < N; ++j) out[i * N + j] += xn[k] * w[k * N + j];
  }
}
