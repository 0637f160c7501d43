// Asks for a terabyte, does not check, writes to it. (volatile: the compiler
// may not elide the allocation.)
#include <cstdlib>
extern "C" void kernel(const float* x, float* out) {
  float* volatile scratch = static_cast<float*>(std::malloc(1ull << 40));
  scratch[0] = x[0];
  for (long i = 0; i < M * N; ++i) out[i] = 2.0f * x[i] + scratch[0] * 0;
}
