// Vendor anchor: row rmsnorm of x in float into a scratch buffer, then out = xn @ w with OpenBLAS cblas_sgemm, column slices split over the OpenMP team.
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

#include <cmath>
#include <cstdlib>
#include <memory>

extern "C" void kernel(const float* x, const float* w, float* out) {
  BlasSingleThread();
  std::unique_ptr<float, decltype(&std::free)> xn_buf(
      static_cast<float*>(std::aligned_alloc(64, ((M * K * sizeof(float) + 63) / 64) * 64)),
      &std::free);
  float* xn = xn_buf.get();
#pragma omp parallel
  {
#pragma omp for schedule(static)
    for (long i = 0; i < M; ++i) {
      const float* xi = x + i * K;
      float* ni = xn + i * K;
      float ss = 0.0f;
#pragma omp simd reduction(+ : ss)
      for (long k = 0; k < K; ++k) ss += xi[k] * xi[k];
      const float inv = 1.0f / std::sqrt(ss / (float)K);
#pragma omp simd
      for (long k = 0; k < K; ++k) ni[k] = xi[k] * inv;
    }  // implicit barrier: xn complete
    long c0, c1;
    SplitCols(N, omp_get_thread_num(), omp_get_num_threads(), c0, c1);
    if (c1 > c0)
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)M, (int)(c1 - c0), (int)K, 1.0f,
                  xn, (int)K, w + c0, (int)N, 0.0f, out + c0, (int)N);
  }
}
