// rmsnorm fused into an i-k-j matmul with cache blocking over K. Each thread owns
// a slice of output columns (OpenMP); after the row norms are known it walks K in
// panels of 64 rows of w. One panel of its column slice (64 x 1024 floats, 256 KiB
// at the bench shape) stays in the core's L2 while all M output rows accumulate
// against it, so w comes from L3 once per call instead of once per output row.
// Each normalized value x[i][k] * inv_rms[i] is formed on the fly.
#include <omp.h>

#include <cmath>

namespace {

constexpr long kPanel = 64;  // rows of w per K panel

// Columns [c0, c1) of N for thread t of nt, in blocks of 16 floats (64 bytes).
inline void SplitCols(int t, int nt, long& c0, long& c1) {
  const long blocks = (N + 15) / 16;
  c0 = blocks * t / nt * 16;
  c1 = blocks * (t + 1) / nt * 16;
  if (c0 > N) c0 = N;
  if (c1 > N) c1 = N;
}

}  // namespace

extern "C" void kernel(const float* x, const float* w, float* out) {
  float inv_rms[M];
#pragma omp parallel
  {
#pragma omp for schedule(static)
    for (long i = 0; i < M; ++i) {
      const float* xi = x + i * K;
      float ss = 0.0f;
#pragma omp simd reduction(+ : ss)
      for (long k = 0; k < K; ++k) ss += xi[k] * xi[k];
      inv_rms[i] = 1.0f / std::sqrt(ss / (float)K);
    }  // implicit barrier: every 1/rms is ready
    long c0, c1;
    SplitCols(omp_get_thread_num(), omp_get_num_threads(), c0, c1);
    for (long i = 0; i < M; ++i)
      for (long j = c0; j < c1; ++j) out[i * N + j] = 0.0f;
    for (long k0 = 0; k0 < K; k0 += kPanel) {
      const long k1 = k0 + kPanel < K ? k0 + kPanel : K;
      for (long i = 0; i < M; ++i) {
        const float s = inv_rms[i];
        float* __restrict o = out + i * N;
        for (long k = k0; k < k1; ++k) {
          const float a = x[i * K + k] * s;
          const float* __restrict b = w + k * N;
#pragma omp simd
          for (long j = c0; j < c1; ++j) o[j] += a * b[j];
        }
      }
    }
  }
}
