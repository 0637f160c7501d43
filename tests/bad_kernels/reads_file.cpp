// Opens a file (here: its own inputs' neighbourhood); kernels may not touch files.
#include <cstdio>
extern "C" void kernel(const float* x, float* out) {
  if (FILE* f = std::fopen("/proc/self/maps", "r")) std::fclose(f);
  for (long i = 0; i < M * N; ++i) out[i] = 2.0f * x[i];
}
