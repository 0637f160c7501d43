// A correct, threaded, vectorized kernel: must pass.
extern "C" void kernel(const float* x, float* out) {
#pragma omp parallel for simd
  for (long i = 0; i < M * N; ++i) out[i] = 2.0f * x[i];
}
