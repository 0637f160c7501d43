// Honest: normalization by a reciprocal, then i-k-j order with fused
// multiply-adds, partial sums over blocks of 64 k added at the end.
#include <cmath>
#include <vector>
extern "C" void kernel(const float* x, const float* w, float* out) {
  std::vector<float> acc(N), part(N);
  for (long i = 0; i < M; ++i) {
    float ss = 0.0f;
    for (long k = 0; k < K; ++k) ss = std::fma(x[i * K + k], x[i * K + k], ss);
    const float inv = 1.0f / std::sqrt(ss / K);
    for (long j = 0; j < N; ++j) acc[j] = 0.0f;
    for (long k0 = 0; k0 < K; k0 += 64) {
      for (long j = 0; j < N; ++j) part[j] = 0.0f;
      for (long k = k0; k < K && k < k0 + 64; ++k) {
        const float a = x[i * K + k] * inv;
        for (long j = 0; j < N; ++j) part[j] = std::fma(a, w[k * N + j], part[j]);
      }
      for (long j = 0; j < N; ++j) acc[j] += part[j];
    }
    for (long j = 0; j < N; ++j) out[i * N + j] = acc[j];
  }
}
