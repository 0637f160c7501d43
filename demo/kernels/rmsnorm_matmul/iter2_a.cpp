// rmsnorm + matmul with register blocking. The row scale is linear, so the tiles
// multiply raw x by w and apply 1/rms once per output element at the store.
// Each task computes an 8-row x 48-column output tile with its accumulators in
// registers for the whole K loop, loading contiguous rows of w (i-k-j order) and
// broadcasting x values. OpenMP splits first the row norms, then the column
// blocks across the cores.
// AVX-512 path: the tile's 24 zmm accumulators (8 rows x 3 vectors); per k it
// loads three vectors of one row of w and broadcasts eight x values.
// AVX2/FMA path (16 ymm registers, so 48 accumulators would spill): the same
// 8x48 tile is computed as four 4-row x 24-column register blocks, each with 12
// ymm accumulators (per k: three vectors of w, four broadcasts, twelve FMAs).
// Plain C++ path for other machines: the same tiles with `omp simd` over columns.
#if defined(__AVX512F__) || (defined(__AVX2__) && defined(__FMA__))
#include <immintrin.h>
#endif

#include <cmath>

#if defined(__AVX512F__)

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

#elif defined(__AVX2__) && defined(__FMA__)

namespace {

constexpr int kRows = 8;      // output rows per tile
constexpr int kCols = 48;     // output columns per tile
constexpr int kSubRows = 4;   // rows of one register block
constexpr int kSubCols = 24;  // columns of one register block (three ymm vectors)

inline __m256i Mask(long n) {  // first n lanes (n clamped to [0, 8])
  const int c = n <= 0 ? 0 : (n >= 8 ? 8 : static_cast<int>(n));
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(c), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

// Rows [0, R) x columns [0, cols) of a register block (cols <= 24; Full: cols == 24).
template <int R, bool Full>
void Block(const float* a, const float* b, const float* inv_rms, float* o, long cols) {
  __m256i m0, m1, m2;
  if constexpr (!Full) m0 = Mask(cols), m1 = Mask(cols - 8), m2 = Mask(cols - 16);
  __m256 acc[R][3];
  for (int r = 0; r < R; ++r) acc[r][0] = acc[r][1] = acc[r][2] = _mm256_setzero_ps();
  for (long k = 0; k < K; ++k, b += N) {
    __m256 b0, b1, b2;
    if constexpr (Full) {
      b0 = _mm256_loadu_ps(b);
      b1 = _mm256_loadu_ps(b + 8);
      b2 = _mm256_loadu_ps(b + 16);
    } else {
      b0 = _mm256_maskload_ps(b, m0);
      b1 = _mm256_maskload_ps(b + 8, m1);
      b2 = _mm256_maskload_ps(b + 16, m2);
    }
    for (int r = 0; r < R; ++r) {
      const __m256 av = _mm256_broadcast_ss(a + r * K + k);
      acc[r][0] = _mm256_fmadd_ps(av, b0, acc[r][0]);
      acc[r][1] = _mm256_fmadd_ps(av, b1, acc[r][1]);
      acc[r][2] = _mm256_fmadd_ps(av, b2, acc[r][2]);
    }
  }
  for (int r = 0; r < R; ++r) {
    const __m256 s = _mm256_set1_ps(inv_rms[r]);
    for (int v = 0; v < 3; ++v) acc[r][v] = _mm256_mul_ps(acc[r][v], s);
    if constexpr (Full) {
      _mm256_storeu_ps(o + r * N, acc[r][0]);
      _mm256_storeu_ps(o + r * N + 8, acc[r][1]);
      _mm256_storeu_ps(o + r * N + 16, acc[r][2]);
    } else {
      _mm256_maskstore_ps(o + r * N, m0, acc[r][0]);
      _mm256_maskstore_ps(o + r * N + 8, m1, acc[r][1]);
      _mm256_maskstore_ps(o + r * N + 16, m2, acc[r][2]);
    }
  }
}

template <bool Full>
void BlockRows(long rows, const float* a, const float* b, const float* inv_rms, float* o, long cols) {
  switch (rows) {
    case 4: Block<4, Full>(a, b, inv_rms, o, cols); break;
    case 3: Block<3, Full>(a, b, inv_rms, o, cols); break;
    case 2: Block<2, Full>(a, b, inv_rms, o, cols); break;
    default: Block<1, Full>(a, b, inv_rms, o, cols); break;
  }
}

// One 8-row x 48-column output tile as up to four 4x24 register blocks; the two
// row halves of a column half run back to back, so the second finds the w
// columns it shares with the first in cache.
void Tile(long rows, const float* x, const float* w, const float* inv_rms, float* out, long i0, long j0) {
  const long cols = N - j0 < kCols ? N - j0 : kCols;
  for (long c = 0; c < cols; c += kSubCols) {
    const long sub_cols = cols - c < kSubCols ? cols - c : kSubCols;
    for (long r = 0; r < rows; r += kSubRows) {
      const long sub_rows = rows - r < kSubRows ? rows - r : kSubRows;
      const float* a = x + (i0 + r) * K;
      const float* b = w + j0 + c;
      float* o = out + (i0 + r) * N + j0 + c;
      if (sub_cols == kSubCols)
        BlockRows<true>(sub_rows, a, b, inv_rms + i0 + r, o, sub_cols);
      else
        BlockRows<false>(sub_rows, a, b, inv_rms + i0 + r, o, sub_cols);
    }
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
        Tile(rows, x, w, inv_rms, out, i0, jb * kCols);
      }
  }
}

#else

namespace {

constexpr int kRows = 8;   // output rows per tile
constexpr int kCols = 48;  // output columns per tile

// One 8-row x 48-column output tile; the accumulators live in a small array.
void Tile(long rows, const float* x, const float* w, const float* inv_rms, float* out, long i0, long j0) {
  const long cols = N - j0 < kCols ? N - j0 : kCols;
  float acc[kRows][kCols] = {};
  const float* a = x + i0 * K;
  const float* b = w + j0;
  for (long k = 0; k < K; ++k, b += N)
    for (long r = 0; r < rows; ++r) {
      const float av = a[r * K + k];
#pragma omp simd
      for (long j = 0; j < cols; ++j) acc[r][j] += av * b[j];
    }
  for (long r = 0; r < rows; ++r) {
    const float s = inv_rms[i0 + r];
    float* o = out + (i0 + r) * N + j0;
#pragma omp simd
    for (long j = 0; j < cols; ++j) o[j] = acc[r][j] * s;
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
        Tile(rows, x, w, inv_rms, out, i0, jb * kCols);
      }
  }
}

#endif
