// Matmul in i-k-j order: for each row of lhs, each lhs element scales one
// contiguous row of rhs into the output row, so the inner loop reads rhs with
// unit stride and vectorizes (AVX-512) instead of striding N floats per step.
extern "C" void kernel(const float* lhs, const float* rhs, float* out) {
  for (long i = 0; i < M; ++i) {
    float* __restrict o = out + i * N;
    for (long j = 0; j < N; ++j) o[j] = 0.0f;
    for (long k = 0; k < K; ++k) {
      const float a = lhs[i * K + k];
      const float* __restrict b = rhs + k * N;
#pragma omp simd
      for (long j = 0; j < N; ++j) o[j] += a * b[j];
    }
  }
}
