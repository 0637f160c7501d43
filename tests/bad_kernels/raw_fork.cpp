// Forks with a raw system call, invisible to the import check: the seccomp
// filter in the child still stops it.
extern "C" void kernel(const float* x, float* out) {
  long ret;
  asm volatile("syscall" : "=a"(ret) : "a"(57L) : "rcx", "r11", "memory");  // fork on x86-64
  for (long i = 0; i < M * N; ++i) out[i] = 2.0f * x[i] + static_cast<float>(ret) * 0;
}
