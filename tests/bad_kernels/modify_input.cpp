// Correct output, but scribbles on its input afterwards.
extern "C" void kernel(const float* x, float* out) {
  for (long i = 0; i < M * N; ++i) out[i] = 2.0f * x[i];
  const_cast<float*>(x)[3] = 0;
}
