// Naive SwiGLU MLP in float: h = silu(x @ w_gate) * (x @ w_up) with one pair of
// dot products per element of h, then out = h @ w_down (i-j-k order).
#include <cmath>
#include <vector>

extern "C" void kernel(const float* x, const float* w_gate, const float* w_up,
                       const float* w_down, float* out) {
  std::vector<float> h(M * N);
  for (long i = 0; i < M; ++i)
    for (long j = 0; j < N; ++j) {
      float gate = 0.0f, up = 0.0f;
      for (long k = 0; k < K; ++k) {
        gate += x[i * K + k] * w_gate[k * N + j];
        up += x[i * K + k] * w_up[k * N + j];
      }
      h[i * N + j] = gate / (1.0f + std::exp(-gate)) * up;
    }
  for (long i = 0; i < M; ++i)
    for (long k = 0; k < K; ++k) {
      float acc = 0.0f;
      for (long j = 0; j < N; ++j) acc += h[i * N + j] * w_down[j * K + k];
      out[i * K + k] = acc;
    }
}
