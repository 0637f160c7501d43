// Right in the correctness calls, the warm-up and the first timed series;
// writes zeros in the second and third series, hoping that only the first
// series is checked. Counted for the test's settings: 2 seeds, 1 warm-up call,
// 3 series of 50 calls.
extern "C" void kernel(const float* x, float* out) {
  static int calls = 0;
  ++calls;
  bool later_series = calls > 2 + 1 + 50 && calls <= 2 + 1 + 150;
  for (long i = 0; i < M * N; ++i) out[i] = later_series ? 0.0f : 2.0f * x[i];
}
