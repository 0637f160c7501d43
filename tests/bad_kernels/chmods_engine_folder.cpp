// Issue 24, class 5 (leaving something behind): while it is loaded it opens
// its working folder, the engine's, read-only and changes its permissions
// through that descriptor (fchmod: no path, no write access needed by the
// owner). It sets the mode the folder already has, so the test that runs it
// breaks nothing; that it could shows in a wrong answer. As a user of its
// own it cannot.
#include <sys/stat.h>
#include <unistd.h>

static int g_changed = 0;

static long RawOpenReadOnly(const char* path) {
  long ret;
  asm volatile("syscall" : "=a"(ret) : "a"(257L), "D"(-100L), "S"(path), "d"(0L) : "rcx", "r11", "memory");
  return ret;
}

__attribute__((constructor)) static void Attack() {
  const long fd = RawOpenReadOnly(".");
  if (fd < 0) return;
  struct stat st;
  if (fstat(static_cast<int>(fd), &st) == 0 && fchmod(static_cast<int>(fd), st.st_mode & 07777) == 0) ++g_changed;
  close(static_cast<int>(fd));
}

extern "C" void kernel(const float* x, float* out) {
  for (long i = 0; i < M * N; ++i) out[i] = 2.0f * x[i] + static_cast<float>(g_changed);
}
