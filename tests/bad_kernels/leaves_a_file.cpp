// Issue 24, class 5 (leaving something behind): while it loads it creates a
// file in /tmp, a channel to a later evaluation, with a raw openat (no import
// to refuse). Opening for writing or creating is not among the calls a
// kernel may make.
#include <fcntl.h>

static long g_fd = -1;

__attribute__((constructor)) static void Leave() {
  const char* path = "/tmp/accelopt-left-by-a-kernel";
  long ret;
  asm volatile("syscall"
               : "=a"(ret)
               : "a"(257L), "D"(-100L), "S"(path), "d"(static_cast<long>(O_CREAT | O_WRONLY)), "r"(0644L)
               : "rcx", "r11", "memory");
  g_fd = ret;
}

extern "C" void kernel(const float* x, float* out) {
  for (long i = 0; i < M * N; ++i) out[i] = 2.0f * x[i] + static_cast<float>(g_fd >= 0);
}
