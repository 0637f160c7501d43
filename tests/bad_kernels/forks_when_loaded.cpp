// Forks from a constructor, which runs when the library is loaded, before the
// kernel is ever called. The child lingers as a stray process.
static long RawFork() {
  long ret;
  asm volatile("syscall" : "=a"(ret) : "a"(57L) : "rcx", "r11", "memory");  // fork on x86-64
  return ret;
}

__attribute__((constructor)) static void AtLoad() {
  if (RawFork() == 0)
    for (volatile long spin = 0;; spin = spin + 1) {
    }
}

extern "C" void kernel(const float* x, float* out) {
  for (long i = 0; i < M * N; ++i) out[i] = 2.0f * x[i];
}
