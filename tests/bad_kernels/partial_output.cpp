// Leaves the last row of the output unwritten.
extern "C" void kernel(const float* x, float* out) {
  for (long i = 0; i < (M - 1) * N; ++i) out[i] = 2.0f * x[i];
}
