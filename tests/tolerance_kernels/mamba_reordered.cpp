// Honest: the selective scan with the time loop outside the state loop (one
// pass over time per channel, every state's h kept in registers), in float.
#include <cmath>
extern "C" void kernel(const float* delta, const float* u, const float* A, const float* Bm, const float* Cm, float* y) {
  for (long c = 0; c < C; ++c) {
    float h[S] = {};
    for (long t = 0; t < M; ++t) {
      const float dt = delta[c * M + t], du = dt * u[c * M + t];
      float acc = 0.0f;
      for (long s = 0; s < S; ++s) {
        h[s] = std::fma(std::exp(dt * A[c * S + s]), h[s], du * Bm[s * M + t]);
        acc = std::fma(Cm[s * M + t], h[s], acc);
      }
      y[c * M + t] = acc;
    }
  }
}
