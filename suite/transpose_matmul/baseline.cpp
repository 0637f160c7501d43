// Naive transposed matmul: out[i][j] = dot(column i of lhs, column j of rhs).
extern "C" void kernel(const float* lhs, const float* rhs, float* out) {
  for (long i = 0; i < M; ++i)
    for (long j = 0; j < N; ++j) {
      float acc = 0.0f;
      for (long k = 0; k < K; ++k) acc += lhs[k * M + i] * rhs[k * N + j];
      out[i * N + j] = acc;
    }
}
