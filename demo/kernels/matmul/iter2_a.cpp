// Matmul with register blocking: each task computes an 8-row x 48-column output
// tile whose 24 AVX-512 accumulators stay in registers for the whole K loop.
// Per k it loads three vectors of one contiguous rhs row (i-k-j order) and
// broadcasts eight lhs values, so every rhs load feeds eight FMAs and the
// output is written once. OpenMP splits the column blocks across the cores.
#include <immintrin.h>

namespace {

constexpr int kRows = 8;     // output rows per tile
constexpr int kCols = 48;    // output columns per tile (three zmm vectors)

inline __mmask16 Mask(long n) {  // first n lanes (n clamped to [0, 16])
  if (n <= 0) return 0;
  if (n >= 16) return 0xFFFF;
  return static_cast<__mmask16>((1u << n) - 1u);
}

template <int R>
void Tile(const float* lhs, const float* rhs, float* out, long i0, long j0) {
  const long cols = N - j0 < kCols ? N - j0 : kCols;
  const __mmask16 m0 = Mask(cols), m1 = Mask(cols - 16), m2 = Mask(cols - 32);
  __m512 acc[R][3];
  for (int r = 0; r < R; ++r) acc[r][0] = acc[r][1] = acc[r][2] = _mm512_setzero_ps();
  const float* a = lhs + i0 * K;
  const float* b = rhs + j0;
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
    float* o = out + (i0 + r) * N + j0;
    _mm512_mask_storeu_ps(o, m0, acc[r][0]);
    _mm512_mask_storeu_ps(o + 16, m1, acc[r][1]);
    _mm512_mask_storeu_ps(o + 32, m2, acc[r][2]);
  }
}

void TileRows(long rows, const float* lhs, const float* rhs, float* out, long i0, long j0) {
  switch (rows) {
    case 8: Tile<8>(lhs, rhs, out, i0, j0); break;
    case 7: Tile<7>(lhs, rhs, out, i0, j0); break;
    case 6: Tile<6>(lhs, rhs, out, i0, j0); break;
    case 5: Tile<5>(lhs, rhs, out, i0, j0); break;
    case 4: Tile<4>(lhs, rhs, out, i0, j0); break;
    case 3: Tile<3>(lhs, rhs, out, i0, j0); break;
    case 2: Tile<2>(lhs, rhs, out, i0, j0); break;
    default: Tile<1>(lhs, rhs, out, i0, j0); break;
  }
}

}  // namespace

extern "C" void kernel(const float* lhs, const float* rhs, float* out) {
  constexpr long col_blocks = (N + kCols - 1) / kCols;
  constexpr long row_blocks = (M + kRows - 1) / kRows;
  // Column blocks outermost: each thread owns a contiguous slice of rhs columns.
#pragma omp parallel for collapse(2) schedule(static)
  for (long jb = 0; jb < col_blocks; ++jb)
    for (long ib = 0; ib < row_blocks; ++ib) {
      const long i0 = ib * kRows;
      const long rows = M - i0 < kRows ? M - i0 : kRows;
      TileRows(rows, lhs, rhs, out, i0, jb * kCols);
    }
}
