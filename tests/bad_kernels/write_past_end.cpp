// Correct values, plus one element written past the end of the output.
extern "C" void kernel(const float* x, float* out) {
  for (long i = 0; i <= M * N; ++i) out[i] = 2.0f * x[i < M * N ? i : 0];
}
