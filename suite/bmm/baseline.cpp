// Naive batched matmul: one dot product per output element, b-i-j-k order.
extern "C" void kernel(const float* lhs, const float* rhs, float* out) {
  for (long b = 0; b < B; ++b)
    for (long i = 0; i < M; ++i)
      for (long j = 0; j < N; ++j) {
        float acc = 0.0f;
        for (long k = 0; k < K; ++k)
          acc += lhs[(b * M + i) * K + k] * rhs[(b * K + k) * N + j];
        out[(b * M + i) * N + j] = acc;
      }
}
