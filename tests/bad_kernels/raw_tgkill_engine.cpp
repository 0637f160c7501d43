// Tries to kill the process that evaluates it (its parent) with tgkill, the
// call raise() uses: allowed on itself, trapped on any other process.
extern "C" void kernel(const float* x, float* out) {
  long parent, ret;
  asm volatile("syscall" : "=a"(parent) : "a"(110L) : "rcx", "r11", "memory");  // getppid
  asm volatile("syscall"
               : "=a"(ret)
               : "a"(234L), "D"(parent), "S"(parent), "d"(9L)  // tgkill(parent, parent, SIGKILL)
               : "rcx", "r11", "memory");
  for (long i = 0; i < M * N; ++i) out[i] = 2.0f * x[i] + static_cast<float>(ret) * 0;
}
