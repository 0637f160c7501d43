// Naive selective scan in float, loops in the order of the definition: c, s, t.
#include <cmath>

extern "C" void kernel(const float* delta, const float* u, const float* A, const float* Bm,
                       const float* Cm, float* y) {
  for (long i = 0; i < C * M; ++i) y[i] = 0.0f;
  for (long c = 0; c < C; ++c)
    for (long s = 0; s < S; ++s) {
      float h = 0.0f;
      for (long t = 0; t < M; ++t) {
        const float dt = delta[c * M + t];
        h = std::exp(dt * A[c * S + s]) * h + dt * Bm[s * M + t] * u[c * M + t];
        y[c * M + t] += Cm[s * M + t] * h;
      }
    }
}
