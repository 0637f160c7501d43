// Wrong within the L2 tolerance: exp(delta * A) from its Taylor series cut
// after the cubic term (delta * A lies in [-0.1, -0.001]): a few 1e-6 per
// step, small for the L2 norm, far beyond float32 rounding.
extern "C" void kernel(const float* delta, const float* u, const float* A, const float* Bm, const float* Cm, float* y) {
  for (long i = 0; i < C * M; ++i) y[i] = 0.0f;
  for (long c = 0; c < C; ++c)
    for (long s = 0; s < S; ++s) {
      float h = 0.0f;
      for (long t = 0; t < M; ++t) {
        const float dt = delta[c * M + t], x = dt * A[c * S + s];
        const float e = 1.0f + x * (1.0f + x * (0.5f + x * (1.0f / 6.0f)));
        h = e * h + dt * Bm[s * M + t] * u[c * M + t];
        y[c * M + t] += Cm[s * M + t] * h;
      }
    }
}
