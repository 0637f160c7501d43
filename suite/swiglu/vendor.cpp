// Vendor anchor: SwiGLU MLP with OpenBLAS cblas_sgemm: gate = x @ w_gate and up = x @ w_up per column slice, float silu(gate) * up, then out = h @ w_down; slices split over the OpenMP team.
#include <cblas.h>
#include <omp.h>

#include <algorithm>

// Under the evaluator (OMP_PROC_BIND=close) OpenBLAS starts on a pinned thread, sees one CPU and
// runs single-threaded, so the parallelism comes from OpenMP: each thread calls a single-threaded
// sgemm on its own slice. Keep OpenBLAS at one thread so no sgemm call spawns threads of its own.
static inline void BlasSingleThread() {
  if (openblas_get_num_threads() != 1) openblas_set_num_threads(1);
}

// Columns [c0, c1) of n for thread t of nt, in blocks of 16 floats (64 bytes).
static inline void SplitCols(long n, int t, int nt, long& c0, long& c1) {
  const long blocks = (n + 15) / 16;
  c0 = std::min(n, blocks * t / nt * 16);
  c1 = std::min(n, blocks * (t + 1) / nt * 16);
}

#include <bit>
#include <cstdint>
#include <cstdlib>
#include <memory>

// exp(x) in float that the compiler can vectorize (std::exp does not vectorize without
// -ffast-math): Cody-Waite reduction by ln 2 and a degree-7 Taylor polynomial, relative error
// about 1e-7 over [-87, 88]; inputs are clamped to that range.
static inline float ExpF(float x) {
  x = x < -87.0f ? -87.0f : (x > 88.0f ? 88.0f : x);
  const float r = (x * 1.44269504088896341f + 12582912.0f) - 12582912.0f;  // round(x / ln 2)
  const float f = (x - r * 0.693359375f) + r * 2.12194440e-4f;             // x - r ln 2
  float p = 1.0f / 5040.0f;
  p = p * f + 1.0f / 720.0f;
  p = p * f + 1.0f / 120.0f;
  p = p * f + 1.0f / 24.0f;
  p = p * f + 1.0f / 6.0f;
  p = p * f + 0.5f;
  p = p * f + 1.0f;
  p = p * f + 1.0f;
  const float scale = std::bit_cast<float>(static_cast<int32_t>((static_cast<int32_t>(r) + 127) << 23));
  return p * scale;
}

extern "C" void kernel(const float* x, const float* w_gate, const float* w_up,
                       const float* w_down, float* out) {
  BlasSingleThread();
  const size_t bytes = ((M * N * sizeof(float) + 63) / 64) * 64;
  std::unique_ptr<float, decltype(&std::free)> h_buf(static_cast<float*>(std::aligned_alloc(64, bytes)),
                                                     &std::free);
  std::unique_ptr<float, decltype(&std::free)> up_buf(static_cast<float*>(std::aligned_alloc(64, bytes)),
                                                      &std::free);
  float* h = h_buf.get();
  float* up = up_buf.get();
#pragma omp parallel
  {
    const int t = omp_get_thread_num(), nt = omp_get_num_threads();
    long c0, c1;
    SplitCols(N, t, nt, c0, c1);
    const long n = c1 - c0;
    if (n > 0) {
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)M, (int)n, (int)K, 1.0f, x,
                  (int)K, w_gate + c0, (int)N, 0.0f, h + c0, (int)N);
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)M, (int)n, (int)K, 1.0f, x,
                  (int)K, w_up + c0, (int)N, 0.0f, up + c0, (int)N);
      for (long i = 0; i < M; ++i) {
        float* hi = h + i * N + c0;
        const float* ui = up + i * N + c0;
#pragma omp simd
        for (long j = 0; j < n; ++j) hi[j] = hi[j] / (1.0f + ExpF(-hi[j])) * ui[j];
      }
    }
#pragma omp barrier
    SplitCols(K, t, nt, c0, c1);  // out = h @ w_down, [M, K]
    if (c1 > c0)
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)M, (int)(c1 - c0), (int)N, 1.0f,
                  h, (int)N, w_down + c0, (int)K, 0.0f, out + c0, (int)K);
  }
}
