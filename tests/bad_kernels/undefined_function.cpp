// Calls a function nobody defines: fails at link time.
extern "C" void helper_that_does_not_exist(float*);
extern "C" void kernel(const float* x, float* out) {
  helper_that_does_not_exist(out);
  out[0] = x[0];
}
