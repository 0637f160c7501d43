// Raises its own address-space limit (as root it could) to escape the memory
// limit, through prlimit64 with a new limit. Reading limits stays allowed.
#include <sys/resource.h>

extern "C" void kernel(const float* x, float* out) {
  rlimit unlimited{RLIM_INFINITY, RLIM_INFINITY};
  long ret;
  asm volatile("syscall"
               : "=a"(ret)
               : "a"(302L), "D"(0L), "S"(static_cast<long>(RLIMIT_AS)), "d"(&unlimited)  // prlimit64(0, AS, new, -)
               : "rcx", "r11", "memory");
  for (long i = 0; i < M * N; ++i) out[i] = 2.0f * x[i] + static_cast<float>(ret) * 0;
}
