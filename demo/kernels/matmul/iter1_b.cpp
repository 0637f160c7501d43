// Naive matmul with the output rows split across the cores by OpenMP; each
// thread computes the dot products of its own rows.
extern "C" void kernel(const float* lhs, const float* rhs, float* out) {
#pragma omp parallel for schedule(static)
  for (long i = 0; i < M; ++i)
    for (long j = 0; j < N; ++j) {
      float acc = 0.0f;
      for (long k = 0; k < K; ++k) acc += lhs[i * K + k] * rhs[k * N + j];
      out[i * N + j] = acc;
    }
}
