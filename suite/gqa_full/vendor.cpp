// Vendor anchor: GQA per query head: S = q k^T / sqrt(D) with OpenBLAS cblas_sgemm (CblasTrans on k), float row softmax, out = P @ v with cblas_sgemm; heads split over the OpenMP team.
#include <cblas.h>
#include <omp.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <memory>

// Under the evaluator (OMP_PROC_BIND=close) OpenBLAS starts on a pinned thread, sees one CPU and
// runs single-threaded, so the parallelism comes from OpenMP: each thread calls a single-threaded
// sgemm on its own heads. Keep OpenBLAS at one thread so no sgemm call spawns threads of its own.
static inline void BlasSingleThread() {
  if (openblas_get_num_threads() != 1) openblas_set_num_threads(1);
}

// exp(x) in float that the compiler can vectorize (std::exp does not vectorize without
// -ffast-math): Cody-Waite reduction by ln 2 and a degree-7 Taylor polynomial, relative error
// about 1e-7 over [-87, 88]. Inputs below -87 give about 1.6e-38 instead of a denormal or 0.
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

static inline void SoftmaxRow(float* row, long n) {
  float mx = row[0];
#pragma omp simd reduction(max : mx)
  for (long j = 0; j < n; ++j) mx = row[j] > mx ? row[j] : mx;
  float sum = 0.0f;
#pragma omp simd reduction(+ : sum)
  for (long j = 0; j < n; ++j) {
    const float e = ExpF(row[j] - mx);
    row[j] = e;
    sum += e;
  }
  const float inv = 1.0f / sum;
#pragma omp simd
  for (long j = 0; j < n; ++j) row[j] *= inv;
}

extern "C" void kernel(const float* q, const float* k, const float* v, float* out) {
  BlasSingleThread();
  const long group = QH / KH;
  const float scale = 1.0f / std::sqrt((float)D);
  const long per_thread = ((N * N + 15) / 16) * 16;  // one N x N score block per thread
  const int max_threads = omp_get_max_threads();
  std::unique_ptr<float, decltype(&std::free)> s_buf(
      static_cast<float*>(std::aligned_alloc(64, sizeof(float) * per_thread * max_threads)),
      &std::free);
#pragma omp parallel
  {
    float* s = s_buf.get() + per_thread * omp_get_thread_num();
#pragma omp for schedule(static)
    for (long bh = 0; bh < B * QH; ++bh) {
      const long b = bh / QH, h = bh % QH, kh = h / group;
      const float* qh = q + bh * N * D;
      const float* kk = k + (b * KH + kh) * N * D;
      const float* vv = v + (b * KH + kh) * N * D;
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)N, (int)N, (int)D, scale, qh,
                  (int)D, kk, (int)D, 0.0f, s, (int)N);
      for (long i = 0; i < N; ++i) SoftmaxRow(s + i * N, N);
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)N, (int)D, (int)N, 1.0f, s,
                  (int)N, vv, (int)D, 0.0f, out + bh * N * D, (int)D);
    }
  }
}
