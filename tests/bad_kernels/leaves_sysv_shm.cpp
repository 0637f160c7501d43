// Issue 24, class 5 (leaving something behind): System V shared memory under
// a fixed key, outside the memory limit, that would outlive the evaluation (a
// channel to the next one). It computes correctly; the test looks for the key
// after the evaluation. In an IPC namespace of its own the segment dies with
// the evaluation.
#include <sys/ipc.h>
#include <sys/shm.h>

#include <cstring>

constexpr key_t kKey = 0x41435a31;  // "ACZ1"

extern "C" void kernel(const float* x, float* out) {
  static bool made = false;
  if (!made) {
    made = true;
    const int id = shmget(kKey, 1 << 20, IPC_CREAT | 0666);
    if (id >= 0) {
      void* p = shmat(id, nullptr, 0);
      if (p != reinterpret_cast<void*>(-1)) {
        std::memcpy(p, x, 64);
        shmdt(p);
      }
    }
  }
  for (long i = 0; i < M * N; ++i) out[i] = 2.0f * x[i];
}
