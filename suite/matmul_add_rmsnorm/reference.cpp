// h = x @ w + z; out = h / sqrt(mean(h^2) + eps) * g; in double.
#include <cmath>
#include <vector>

extern "C" void reference(const float* x, const float* w, const float* z, const float* g,
                          double* out) {
  std::vector<double> h(N);
  for (long i = 0; i < M; ++i) {
    for (long j = 0; j < N; ++j) h[j] = 0.0;
    for (long k = 0; k < K; ++k) {
      const double a = x[i * K + k];
      for (long j = 0; j < N; ++j) h[j] += a * w[k * N + j];
    }
    double ss = 0.0;
    for (long j = 0; j < N; ++j) {
      h[j] += z[i * N + j];
      ss += h[j] * h[j];
    }
    const double rms = std::sqrt(ss / N + eps);
    for (long j = 0; j < N; ++j) out[i * N + j] = h[j] / rms * g[j];
  }
}
