// Correct outputs, then leaves a thread computing after it returns (say, the
// next call's result): the timer would not see that work.
#include <thread>
extern "C" void kernel(const float* x, float* out) {
  for (long i = 0; i < M * N; ++i) out[i] = 2.0f * x[i];
  std::thread([] {
    volatile double sink = 0;
    for (long i = 0; i < 400000000L; ++i) sink = sink + 1.0;
  }).detach();
}
