// Dereferences a null pointer.
extern "C" void kernel(const float* x, float* out) {
  volatile float* p = nullptr;
  *p = x[0];
  out[0] = 0;
}
