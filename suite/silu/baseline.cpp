// Naive elementwise silu in float.
#include <cmath>

extern "C" void kernel(const float* x, float* out) {
  for (long i = 0; i < M; ++i)
    for (long j = 0; j < N; ++j) {
      const float v = x[i * N + j];
      out[i * N + j] = v / (1.0f + std::exp(-v));
    }
}
