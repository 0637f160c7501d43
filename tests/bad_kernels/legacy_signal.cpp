// The same trick through the older ways of installing a handler, which an
// import check that knows only sigaction and signal misses.
#include <signal.h>
#include <unistd.h>
extern "C" __sighandler_t bsd_signal(int, __sighandler_t);
static const float* g_x;
static float* g_out;
static void Compute(int) {
  for (long i = 0; i < M * N; ++i) g_out[i] = 2.0f * g_x[i];
}
extern "C" void kernel(const float* x, float* out) {
  g_x = x, g_out = out;
  sysv_signal(SIGALRM, Compute);
  bsd_signal(SIGUSR1, Compute);
  sigset(SIGUSR2, Compute);
  ualarm(50, 0);
}
