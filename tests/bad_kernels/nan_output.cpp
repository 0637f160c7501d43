#include <cmath>
extern "C" void kernel(const float* x, float* out) {
  for (long i = 0; i < M * N; ++i) out[i] = 2.0f * x[i];
  out[5] = std::nanf("");
}
