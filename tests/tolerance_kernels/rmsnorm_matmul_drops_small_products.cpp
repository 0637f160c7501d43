// Wrong within the L2 tolerance: skips every product smaller than 2e-4 (a
// "sparsity" shortcut). Few terms, each tiny against the L2 norm, but the
// elements they fall in are off by far more than float32 rounding.
#include <cmath>
#include <vector>
extern "C" void kernel(const float* x, const float* w, float* out) {
  std::vector<float> xn(K);
  for (long i = 0; i < M; ++i) {
    float ss = 0.0f;
    for (long k = 0; k < K; ++k) ss += x[i * K + k] * x[i * K + k];
    const float rms = std::sqrt(ss / K);
    for (long k = 0; k < K; ++k) xn[k] = x[i * K + k] / rms;
    for (long j = 0; j < N; ++j) out[i * N + j] = 0.0f;
    for (long k = 0; k < K; ++k)
      for (long j = 0; j < N; ++j) {
        const float p = xn[k] * w[k * N + j];
        if (std::fabs(p) >= 2e-4f) out[i * N + j] += p;
      }
  }
}
