// out[i][j] = sum_k lhs[k][i] * rhs[k][j], accumulated in double.
extern "C" void reference(const float* lhs, const float* rhs, double* out) {
  for (long i = 0; i < M * N; ++i) out[i] = 0.0;
  for (long k = 0; k < K; ++k)
    for (long i = 0; i < M; ++i) {
      const double a = lhs[k * M + i];
      for (long j = 0; j < N; ++j) out[i * N + j] += a * rhs[k * N + j];
    }
}
