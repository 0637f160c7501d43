// Vendor anchor: LoRA with OpenBLAS cblas_sgemm: xa = x @ a, then out = x @ w and out += xa @ b (beta = 1), column slices split over the OpenMP team.
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

#include <cstdlib>
#include <memory>

extern "C" void kernel(const float* x, const float* w, const float* a, const float* b,
                       float* out) {
  BlasSingleThread();
  std::unique_ptr<float, decltype(&std::free)> xa_buf(
      static_cast<float*>(std::aligned_alloc(64, ((M * R * sizeof(float) + 63) / 64) * 64)),
      &std::free);
  float* xa = xa_buf.get();
#pragma omp parallel
  {
    const int t = omp_get_thread_num(), nt = omp_get_num_threads();
    long c0, c1;
    SplitCols(R, t, nt, c0, c1);  // xa = x @ a, [M, R]
    if (c1 > c0)
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)M, (int)(c1 - c0), (int)K, 1.0f,
                  x, (int)K, a + c0, (int)R, 0.0f, xa + c0, (int)R);
    SplitCols(N, t, nt, c0, c1);  // out = x @ w, independent of xa
    if (c1 > c0)
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)M, (int)(c1 - c0), (int)K, 1.0f,
                  x, (int)K, w + c0, (int)N, 0.0f, out + c0, (int)N);
#pragma omp barrier
    if (c1 > c0)  // out += xa @ b
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)M, (int)(c1 - c0), (int)R, 1.0f,
                  xa, (int)R, b + c0, (int)N, 1.0f, out + c0, (int)N);
  }
}
