// Vendor anchor: out = z then out += x @ w with OpenBLAS cblas_sgemm (beta = 1) per column slice, then a float row rmsnorm times g; slices split over the OpenMP team.
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
#include <vector>

extern "C" void kernel(const float* x, const float* w, const float* z, const float* g,
                       float* out) {
  BlasSingleThread();
  const int max_threads = omp_get_max_threads();
  std::vector<float> partial(static_cast<size_t>(max_threads) * M);  // per-thread row sums of h^2
#pragma omp parallel
  {
    const int t = omp_get_thread_num(), nt = omp_get_num_threads();
    long c0, c1;
    SplitCols(N, t, nt, c0, c1);
    const long n = c1 - c0;
    float* ss = partial.data() + static_cast<size_t>(t) * M;
    if (n > 0) {
      for (long i = 0; i < M; ++i) std::copy(z + i * N + c0, z + i * N + c1, out + i * N + c0);
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)M, (int)n, (int)K, 1.0f, x,
                  (int)K, w + c0, (int)N, 1.0f, out + c0, (int)N);
    }
    for (long i = 0; i < M; ++i) {
      const float* h = out + i * N + c0;
      float s = 0.0f;
#pragma omp simd reduction(+ : s)
      for (long j = 0; j < n; ++j) s += h[j] * h[j];
      ss[i] = s;
    }
#pragma omp barrier
    for (long i = 0; i < M; ++i) {
      float s = 0.0f;
      for (int u = 0; u < nt; ++u) s += partial[static_cast<size_t>(u) * M + i];
      const float inv = 1.0f / std::sqrt(s / (float)N + (float)eps);
      float* h = out + i * N + c0;
      const float* gg = g + c0;
#pragma omp simd
      for (long j = 0; j < n; ++j) h[j] = h[j] * inv * gg[j];
    }
  }
}
