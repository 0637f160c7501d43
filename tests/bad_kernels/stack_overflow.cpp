// Unbounded recursion.
static float Deep(const float* x, long depth) {
  volatile float pad[64];
  pad[depth % 64] = x[0];
  return Deep(x, depth + 1) + pad[0];
}
extern "C" void kernel(const float* x, float* out) { out[0] = Deep(x, 0); }
