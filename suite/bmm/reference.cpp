// out[b][i][j] = sum_k lhs[b][i][k] * rhs[b][k][j], accumulated in double.
extern "C" void reference(const float* lhs, const float* rhs, double* out) {
  for (long b = 0; b < B; ++b) {
    const float* l = lhs + b * M * K;
    const float* r = rhs + b * K * N;
    double* o = out + b * M * N;
    for (long i = 0; i < M; ++i) {
      for (long j = 0; j < N; ++j) o[i * N + j] = 0.0;
      for (long k = 0; k < K; ++k) {
        const double a = l[i * K + k];
        for (long j = 0; j < N; ++j) o[i * N + j] += a * r[k * N + j];
      }
    }
  }
}
