// Off by 0.1%: close, but far outside a float32 tolerance.
extern "C" void kernel(const float* x, float* out) {
  for (long i = 0; i < M * N; ++i) out[i] = 2.002f * x[i];
}
