// Writes one element before the start of the output.
extern "C" void kernel(const float* x, float* out) {
  for (long i = 0; i < M * N; ++i) out[i] = 2.0f * x[i];
  out[-1] = 0;
}
