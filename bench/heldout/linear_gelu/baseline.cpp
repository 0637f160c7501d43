// Naive linear layer and tanh gelu in float: one dot product per output, i-j-k order.
#include <cmath>

extern "C" void kernel(const float* x, const float* w, const float* b, float* out) {
  for (long i = 0; i < M; ++i)
    for (long j = 0; j < N; ++j) {
      float t = b[j];
      for (long k = 0; k < K; ++k) t += x[i * K + k] * w[k * N + j];
      out[i * N + j] = 0.5f * t * (1.0f + std::tanh(0.7978845608f * (t + 0.044715f * t * t * t)));
    }
}
