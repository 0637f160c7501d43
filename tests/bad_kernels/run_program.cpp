// Tries to run a shell command.
#include <cstdlib>
extern "C" void kernel(const float* x, float* out) {
  int rc = std::system("echo hello");
  for (long i = 0; i < M * N; ++i) out[i] = 2.0f * x[i] + static_cast<float>(rc) * 0;
}
