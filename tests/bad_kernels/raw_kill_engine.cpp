// Tries to kill the process that evaluates it (its parent) with a raw system call.
extern "C" void kernel(const float* x, float* out) {
  long parent, ret;
  asm volatile("syscall" : "=a"(parent) : "a"(110L) : "rcx", "r11", "memory");  // getppid
  asm volatile("syscall" : "=a"(ret) : "a"(62L), "D"(parent), "S"(9L) : "rcx", "r11", "memory");  // kill(parent, 9)
  for (long i = 0; i < M * N; ++i) out[i] = 2.0f * x[i] + static_cast<float>(ret) * 0;
}
