// Unmaps everything it shares with the monitor but its own arguments (the
// control memory), hoping to leave the monitor waiting or reading garbage.
#include <sys/mman.h>
#include <cstdint>
#include <cstdlib>
#include <cstring>
static long Raw(long n, long a = 0, long b = 0, long c = 0, long d = 0) {
  long r;
  register long r10 asm("r10") = d;
  asm volatile("syscall" : "=a"(r) : "a"(n), "D"(a), "S"(b), "d"(c), "r"(r10) : "rcx", "r11", "memory");
  return r;
}
static uintptr_t g_start = 0, g_end = 0;
__attribute__((constructor)) static void Find() {
  static char maps[1 << 16];
  long fd = Raw(257, -100, reinterpret_cast<long>("/proc/self/maps"), 0);
  if (fd < 0) return;
  long n = 0;
  for (long got; (got = Raw(0, fd, reinterpret_cast<long>(maps + n), sizeof maps - 1 - n)) > 0;) n += got;
  maps[n] = 0;
  char* line = std::strstr(maps, "accelopt-control");
  if (!line) return;
  while (line > maps && line[-1] != '\n') --line;
  char* dash;
  g_start = std::strtoull(line, &dash, 16);
  g_end = std::strtoull(dash + 1, nullptr, 16);
}
extern "C" void kernel(const float* x, float* out) {
  for (long i = 0; i < M * N; ++i) out[i] = 2.0f * x[i];
  if (g_start) munmap(reinterpret_cast<void*>(g_start), g_end - g_start);
}
