// h = x + z; out = (h / sqrt(mean(h^2) + eps) * g) @ w; in double.
#include <cmath>
#include <vector>

extern "C" void reference(const float* x, const float* z, const float* g, const float* w,
                          double* out) {
  std::vector<double> hn(K);
  for (long i = 0; i < M; ++i) {
    double ss = 0.0;
    for (long k = 0; k < K; ++k) {
      hn[k] = (double)x[i * K + k] + (double)z[i * K + k];
      ss += hn[k] * hn[k];
    }
    const double rms = std::sqrt(ss / K + eps);
    for (long k = 0; k < K; ++k) hn[k] = hn[k] / rms * g[k];
    for (long j = 0; j < N; ++j) out[i * N + j] = 0.0;
    for (long k = 0; k < K; ++k)
      for (long j = 0; j < N; ++j) out[i * N + j] += hn[k] * w[k * N + j];
  }
}
