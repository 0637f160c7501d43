// Issue 24 (isolation by construction): a system call that no list of
// forbidden calls in this project ever named, kcmp, which tells whether two
// processes share a resource (a probe of the engine's processes), made raw
// (no import to refuse). The filter is an allowlist: a call it does not allow
// is refused, however obscure.
#include <sys/syscall.h>
#include <unistd.h>

static long g_answer = 0;

__attribute__((constructor)) static void Probe() {
  long ret;
  asm volatile("syscall"
               : "=a"(ret)
               : "a"(static_cast<long>(SYS_kcmp)), "D"(static_cast<long>(getpid())), "S"(1L), "d"(0L)
               : "rcx", "r11", "memory");
  g_answer = ret;
}

extern "C" void kernel(const float* x, float* out) {
  for (long i = 0; i < M * N; ++i) out[i] = 2.0f * x[i] + static_cast<float>(g_answer > 0);
}
