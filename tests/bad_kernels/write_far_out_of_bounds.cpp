// Writes a page beyond the output: lands on the guard page.
extern "C" void kernel(const float* x, float* out) {
  for (long i = 0; i < M * N; ++i) out[i] = 2.0f * x[i];
  out[M * N + 4096] = 1;
}
