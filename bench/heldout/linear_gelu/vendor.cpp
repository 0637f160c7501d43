// Vendor anchor: x @ w with OpenBLAS cblas_sgemm on column slices split over the OpenMP team,
// then the bias and the tanh gelu on each thread's slice.
#include <cblas.h>
#include <omp.h>

#include <algorithm>
#include <cmath>

extern "C" void kernel(const float* x, const float* w, const float* b, float* out) {
  // One OpenBLAS thread per call: the parallelism is the OpenMP team's (see suite/matmul/vendor.cpp).
  if (openblas_get_num_threads() != 1) openblas_set_num_threads(1);
#pragma omp parallel
  {
    const int nt = omp_get_num_threads(), t = omp_get_thread_num();
    const long blocks = (N + 15) / 16;
    const long c0 = std::min(N, blocks * t / nt * 16), c1 = std::min(N, blocks * (t + 1) / nt * 16);
    if (c1 > c0) {
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)M, (int)(c1 - c0), (int)K, 1.0f, x, (int)K,
                  w + c0, (int)N, 0.0f, out + c0, (int)N);
      for (long i = 0; i < M; ++i)
        for (long j = c0; j < c1; ++j) {
          const float v = out[i * N + j] + b[j];
          out[i * N + j] = 0.5f * v * (1.0f + std::tanh(0.7978845608f * (v + 0.044715f * v * v * v)));
        }
    }
  }
}
