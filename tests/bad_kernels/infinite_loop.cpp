extern "C" void kernel(const float* x, float* out) {
  volatile float sink = 0;
  for (;;) sink = sink + x[0];
  out[0] = sink;
}
