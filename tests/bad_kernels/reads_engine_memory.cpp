// Issue 24, class 2 (reading the monitor): while it is loaded, before the
// filter closes files, it opens /proc/PID/mem of every other process it can
// see (the engine's among them), to read the monitor's secrets later. What it
// reached shows in a wrong answer; isolated, it sees no process of the engine
// and reaches none.
#include <dirent.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>

static int g_reached = 0;

static long RawOpenReadOnly(const char* path) {
  long ret;
  asm volatile("syscall" : "=a"(ret) : "a"(257L), "D"(-100L), "S"(path), "d"(0L) : "rcx", "r11", "memory");
  return ret;
}

__attribute__((constructor)) static void Attack() {
  DIR* proc = opendir("/proc");
  if (!proc) return;
  const long self = getpid();
  while (dirent* e = readdir(proc)) {
    char* end = nullptr;
    const long pid = std::strtol(e->d_name, &end, 10);
    if (*end || pid <= 0 || pid == self) continue;
    char path[64];
    std::snprintf(path, sizeof path, "/proc/%ld/mem", pid);
    const long fd = RawOpenReadOnly(path);
    if (fd >= 0) {
      ++g_reached;
      close(static_cast<int>(fd));
    }
  }
  closedir(proc);
}

extern "C" void kernel(const float* x, float* out) {
  for (long i = 0; i < M * N; ++i) out[i] = 2.0f * x[i] + static_cast<float>(g_reached);
}
