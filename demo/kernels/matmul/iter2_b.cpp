// Matmul in i-k-j order with cache blocking over K: each thread owns a slice of
// output columns (OpenMP), and walks K in panels of 256 rows of rhs. One panel of
// its column slice (256 x 192 floats, about 192 KiB at the bench shape) stays in
// the core's L2 while all M output rows accumulate against it, so rhs comes from
// L3 once per call instead of once per output row.
#include <omp.h>

namespace {

constexpr long kPanel = 256;  // rows of rhs per K panel

// Columns [c0, c1) of N for thread t of nt, in blocks of 16 floats (64 bytes).
inline void SplitCols(int t, int nt, long& c0, long& c1) {
  const long blocks = (N + 15) / 16;
  c0 = blocks * t / nt * 16;
  c1 = blocks * (t + 1) / nt * 16;
  if (c0 > N) c0 = N;
  if (c1 > N) c1 = N;
}

}  // namespace

extern "C" void kernel(const float* lhs, const float* rhs, float* out) {
#pragma omp parallel
  {
    long c0, c1;
    SplitCols(omp_get_thread_num(), omp_get_num_threads(), c0, c1);
    for (long i = 0; i < M; ++i)
      for (long j = c0; j < c1; ++j) out[i * N + j] = 0.0f;
    for (long k0 = 0; k0 < K; k0 += kPanel) {
      const long k1 = k0 + kPanel < K ? k0 + kPanel : K;
      for (long i = 0; i < M; ++i) {
        float* __restrict o = out + i * N;
        for (long k = k0; k < k1; ++k) {
          const float a = lhs[i * K + k];
          const float* __restrict b = rhs + k * N;
#pragma omp simd
          for (long j = c0; j < c1; ++j) o[j] += a * b[j];
        }
      }
    }
  }
}
