#include <cstdio>
extern "C" void kernel(const float* x, float* out) {
  for (;;) std::printf("flooding the log with line after line of text %f\n", x[0]);
  out[0] = 0;
}
