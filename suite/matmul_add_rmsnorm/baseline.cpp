// Naive matmul (i-j-k order) plus residual into the output row, then rmsnorm
// of that row in place, all in float.
#include <cmath>

extern "C" void kernel(const float* x, const float* w, const float* z, const float* g,
                       float* out) {
  for (long i = 0; i < M; ++i) {
    float* row = out + i * N;
    for (long j = 0; j < N; ++j) {
      float acc = 0.0f;
      for (long k = 0; k < K; ++k) acc += x[i * K + k] * w[k * N + j];
      row[j] = acc + z[i * N + j];
    }
    float ss = 0.0f;
    for (long j = 0; j < N; ++j) ss += row[j] * row[j];
    const float rms = std::sqrt(ss / N + (float)eps);
    for (long j = 0; j < N; ++j) row[j] = row[j] / rms * g[j];
  }
}
