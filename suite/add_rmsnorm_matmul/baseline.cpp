// Naive add + rmsnorm then matmul: build one normalized row, then one dot
// product per output element (i-j-k order), all in float.
#include <cmath>
#include <vector>

extern "C" void kernel(const float* x, const float* z, const float* g, const float* w,
                       float* out) {
  std::vector<float> hn(K);
  for (long i = 0; i < M; ++i) {
    float ss = 0.0f;
    for (long k = 0; k < K; ++k) {
      hn[k] = x[i * K + k] + z[i * K + k];
      ss += hn[k] * hn[k];
    }
    const float rms = std::sqrt(ss / K + (float)eps);
    for (long k = 0; k < K; ++k) hn[k] = hn[k] / rms * g[k];
    for (long j = 0; j < N; ++j) {
      float acc = 0.0f;
      for (long k = 0; k < K; ++k) acc += hn[k] * w[k * N + j];
      out[i * N + j] = acc;
    }
  }
}
