// out[i][j] = sum_k lhs[i][k] * rhs[k][j], accumulated in double.
extern "C" void reference(const float* lhs, const float* rhs, double* out) {
  for (long i = 0; i < M; ++i) {
    for (long j = 0; j < N; ++j) out[i * N + j] = 0.0;
    for (long k = 0; k < K; ++k) {
      const double a = lhs[i * K + k];
      for (long j = 0; j < N; ++j) out[i * N + j] += a * rhs[k * N + j];
    }
  }
}
