// out = x @ w + (x @ a) @ b, in double.
#include <vector>

extern "C" void reference(const float* x, const float* w, const float* a, const float* b,
                          double* out) {
  std::vector<double> xa(R);
  for (long i = 0; i < M; ++i) {
    for (long r = 0; r < R; ++r) xa[r] = 0.0;
    for (long j = 0; j < N; ++j) out[i * N + j] = 0.0;
    for (long k = 0; k < K; ++k) {
      const double xv = x[i * K + k];
      for (long r = 0; r < R; ++r) xa[r] += xv * a[k * R + r];
      for (long j = 0; j < N; ++j) out[i * N + j] += xv * w[k * N + j];
    }
    for (long r = 0; r < R; ++r)
      for (long j = 0; j < N; ++j) out[i * N + j] += xa[r] * b[r * N + j];
  }
}
