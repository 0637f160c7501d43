// Naive matmul: one dot product per output element, i-j-k order.
extern "C" void kernel(const float* lhs, const float* rhs, float* out) {
  for (long i = 0; i < M; ++i)
    for (long j = 0; j < N; ++j) {
      float acc = 0.0f;
      for (long k = 0; k < K; ++k) acc += lhs[i * K + k] * rhs[k * N + j];
      out[i * N + j] = acc;
    }
}
