// Issue 24, class 3 (disturbing the other side): while it is loaded it sets
// the cores of every other process it can see (the engine, the sibling kernel
// of a comparison) with sched_setaffinity. It sets each to the cores it
// already has, so the test that runs it disturbs nothing; that it could shows
// in a wrong answer. Isolated, it sees no such process and moves none.
#include <dirent.h>
#include <sched.h>
#include <unistd.h>

#include <cstdlib>

static int g_moved = 0;

__attribute__((constructor)) static void Attack() {
  DIR* proc = opendir("/proc");
  if (!proc) return;
  const long self = getpid();
  while (dirent* e = readdir(proc)) {
    char* end = nullptr;
    const long pid = std::strtol(e->d_name, &end, 10);
    if (*end || pid <= 0 || pid == self) continue;
    cpu_set_t cores;
    if (sched_getaffinity(static_cast<pid_t>(pid), sizeof cores, &cores) != 0) continue;
    if (sched_setaffinity(static_cast<pid_t>(pid), sizeof cores, &cores) == 0) ++g_moved;
  }
  closedir(proc);
}

extern "C" void kernel(const float* x, float* out) {
  for (long i = 0; i < M * N; ++i) out[i] = 2.0f * x[i] + static_cast<float>(g_moved);
}
