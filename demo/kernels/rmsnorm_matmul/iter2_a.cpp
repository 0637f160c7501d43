// rmsnorm + matmul with register blocking. The row scale is linear, so the tiles
// multiply raw x by w and apply 1/rms once per output element at the store.
// Each task computes an 8-row x 48-column output tile whose 24 AVX-512
// accumulators stay in registers for the whole K loop: per k it loads three
// vectors of one contiguous row of w (i-k-j order) and broadcasts eight x values.
// OpenMP splits first the row norms, then the column blocks across the cores.
#include <immintrin.h>

#include <cmath>

namespace {

constexpr int kRows = 8;   // output rows per tile
constexpr int kCols = 48;  // output columns per tile (three zmm vectors)

inline __mmask16 Mask(long n) {  // first n lanes (n clamped to [0, 16])
  if (n <= 0) return 0;
  if (n >= 16) return 0xFFFF;
  return static_cast<__mmask16>((1u << n) - 1u);
}

template <int R>
void Tile(const float* x, const float* w, const float* inv_rms, float* out, long i0, long j0) {
  const long cols = N - j0 < kCols ? N - j0 : kCols;
  const __mmask16 m0 = Mask(cols), m1 = Mask(cols - 16), m2 = Mask(cols - 32);
  __m512 acc[R][3];
  for (int r = 0; r < R; ++r) acc[r][0] = acc[r][1] = acc[r][2] = _mm512_setzero_ps();
  const float* a = x + i0 * K;
  const float* b = w + j0;
  for (long k = 0; k < K; ++k, b += N) {
    const __m512 b0 = _mm512_maskz_loadu_ps(m0, b);
    const __m512 b1 = _mm512_maskz_loadu_ps(m1, b + 16);
    const __m512 b2 = _mm512_maskz_loadu_ps(m2, b + 32);
    for (int r = 0; r < R; ++r) {
      const __m512 av = _mm512_set1_ps(a[r * K + k]);
      acc[r][0] = _mm512_fmadd_ps(av, b0, acc[r][0]);
      acc[r][1] = _mm512_fmadd_ps(av, b1, acc[r][1]);
      acc[r][2] = _mm512_fmadd_ps(av, b2, acc[r][2]);
    }
  }
  for (int r = 0; r < R; ++r) {
    const __m512 s = _mm512_set1_ps(inv_rms[i0 + r]);
    float* o = out + (i0 + r) * N + j0;
    _mm512_mask_storeu_ps(o, m0, _mm512_mul_ps(acc[r][0], s));
    _mm512_mask_storeu_ps(o + 16, m1, _mm512_mul_ps(acc[r][1], s));
    _mm512_mask_storeu_ps(o + 32, m2, _mm512_mul_ps(acc[r][2], s));
  }
}

void TileRows(long rows, const float* x, const float* w, const float* inv_rms, float* out, long i0,
              long j0) {
  switch (rows) {
    case 8: Tile<8>(x, w, inv_rms, out, i0, j0); break;
    case 7: Tile<7>(x, w, inv_rms, out, i0, j0); break;
    case 6: Tile<6>(x, w, inv_rms, out, i0, j0); break;
    case 5: Tile<5>(x, w, inv_rms, out, i0, j0); break;
    case 4: Tile<4>(x, w, inv_rms, out, i0, j0); break;
    case 3: Tile<3>(x, w, inv_rms, out, i0, j0); break;
    case 2: Tile<2>(x, w, inv_rms, out, i0, j0); break;
    default: Tile<1>(x, w, inv_rms, out, i0, j0); break;
  }
}

}  // namespace

extern "C" void kernel(const float* x, const float* w, float* out) {
  constexpr long col_blocks = (N + kCols - 1) / kCols;
  constexpr long row_blocks = (M + kRows - 1) / kRows;
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
    // Column blocks outermost: each thread owns a contiguous slice of w's columns.
#pragma omp for collapse(2) schedule(static)
    for (long jb = 0; jb < col_blocks; ++jb)
      for (long ib = 0; ib < row_blocks; ++ib) {
        const long i0 = ib * kRows;
        const long rows = M - i0 < kRows ? M - i0 : kRows;
        TileRows(rows, x, w, inv_rms, out, i0, jb * kCols);
      }
  }
}
