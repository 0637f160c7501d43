extern "C" void kernel(const float* x, float* out) {
  out[0] = x[0] +;
}
