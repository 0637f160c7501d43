// Deletes a file with a raw system call: no file is opened, so only the
// filter's rule on unlink stops it. (The path does not exist: nothing is at risk
// if the rule were missing, the test then fails on the status.)
extern "C" void kernel(const float* x, float* out) {
  static const char path[] = "/nonexistent/accelopt-victim";
  long ret;
  asm volatile("syscall" : "=a"(ret) : "a"(87L), "D"(path) : "rcx", "r11", "memory");  // unlink
  for (long i = 0; i < M * N; ++i) out[i] = 2.0f * x[i] + static_cast<float>(ret) * 0;
}
