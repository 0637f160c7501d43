// Selective scan in double:
// for each channel c and state s: h = 0; for t: h = exp(delta[c,t]*A[c,s])*h
//   + delta[c,t]*Bm[s,t]*u[c,t]; y[c,t] += Cm[s,t]*h.
#include <cmath>

extern "C" void reference(const float* delta, const float* u, const float* A, const float* Bm,
                          const float* Cm, double* y) {
  for (long i = 0; i < C * M; ++i) y[i] = 0.0;
  for (long c = 0; c < C; ++c)
    for (long s = 0; s < S; ++s) {
      const double a = A[c * S + s];
      double h = 0.0;
      for (long t = 0; t < M; ++t) {
        const double dt = delta[c * M + t];
        h = std::exp(dt * a) * h + dt * (double)Bm[s * M + t] * (double)u[c * M + t];
        y[c * M + t] += (double)Cm[s * M + t] * h;
      }
    }
}
