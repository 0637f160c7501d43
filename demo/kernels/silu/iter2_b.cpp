// silu with explicit SIMD intrinsics: vectorized float exp (range reduction, degree-6
// polynomial, 2^n from the exponent bits), each core takes a contiguous chunk of the
// array, and results go out with non-temporal stores so the output lines are not
// first read into the cache (no read-for-ownership traffic).
// It has an AVX-512 path (16 lanes, _mm512_scalef_ps for 2^n, masked tail), an
// AVX2/FMA path (8 lanes, 2^n built in the exponent field, masked tail) and a plain
// C++ path for other machines, chosen at compile time by the -march feature macros.
#if defined(__AVX512F__) || (defined(__AVX2__) && defined(__FMA__))
#include <immintrin.h>
#endif

#include <bit>
#include <cstdint>

#if defined(__AVX512F__)

static inline __m512 exp_poly(__m512 x) {
  x = _mm512_max_ps(x, _mm512_set1_ps(-87.0f));
  x = _mm512_min_ps(x, _mm512_set1_ps(88.0f));
  // n = round(x / ln2); r = x - n * ln2 with ln2 split in two parts.
  const __m512 n = _mm512_roundscale_ps(_mm512_mul_ps(x, _mm512_set1_ps(1.44269504088896341f)),
                                        _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m512 r = _mm512_fnmadd_ps(n, _mm512_set1_ps(0.693359375f), x);
  r = _mm512_fnmadd_ps(n, _mm512_set1_ps(-2.12194440e-4f), r);
  // e^r on [-ln2/2, ln2/2] (Cephes expf coefficients).
  __m512 p = _mm512_set1_ps(1.9875691500e-4f);
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.3981999507e-3f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(8.3334519073e-3f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(4.1665795894e-2f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.6666665459e-1f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(5.0000001201e-1f));
  p = _mm512_fmadd_ps(p, _mm512_mul_ps(r, r), _mm512_add_ps(r, _mm512_set1_ps(1.0f)));
  // p * 2^n without building the exponent by hand.
  return _mm512_scalef_ps(p, n);
}

static inline __m512 silu16(__m512 v) {
  const __m512 e = exp_poly(_mm512_sub_ps(_mm512_setzero_ps(), v));
  return _mm512_div_ps(v, _mm512_add_ps(_mm512_set1_ps(1.0f), e));
}

extern "C" void kernel(const float* x, float* out) {
  constexpr long total = M * N;
  constexpr long vec_end = total / 32 * 32;
  // Chunks of 32 floats (two cache lines) keep every thread's stores line-aligned.
#pragma omp parallel
  {
#pragma omp for schedule(static) nowait
    for (long i = 0; i < vec_end; i += 32) {
      const __m512 a = silu16(_mm512_load_ps(x + i));
      const __m512 b = silu16(_mm512_load_ps(x + i + 16));
      _mm512_stream_ps(out + i, a);
      _mm512_stream_ps(out + i + 16, b);
    }
    // Each thread drains its own streaming stores before the closing barrier.
    _mm_sfence();
  }
  // Tail of fewer than 32 elements: masked loads and stores, 16 lanes at a time.
  for (long i = vec_end; i < total; i += 16) {
    const long left = total - i < 16 ? total - i : 16;
    const __mmask16 m = static_cast<__mmask16>((1u << left) - 1u);
    _mm512_mask_storeu_ps(out + i, m, silu16(_mm512_maskz_loadu_ps(m, x + i)));
  }
}

#elif defined(__AVX2__) && defined(__FMA__)

static inline __m256 exp_poly(__m256 x) {
  x = _mm256_max_ps(x, _mm256_set1_ps(-87.0f));
  x = _mm256_min_ps(x, _mm256_set1_ps(88.0f));
  // n = round(x / ln2); r = x - n * ln2 with ln2 split in two parts.
  const __m256 n = _mm256_round_ps(_mm256_mul_ps(x, _mm256_set1_ps(1.44269504088896341f)),
                                   _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m256 r = _mm256_fnmadd_ps(n, _mm256_set1_ps(0.693359375f), x);
  r = _mm256_fnmadd_ps(n, _mm256_set1_ps(-2.12194440e-4f), r);
  // e^r on [-ln2/2, ln2/2] (Cephes expf coefficients).
  __m256 p = _mm256_set1_ps(1.9875691500e-4f);
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.3981999507e-3f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(8.3334519073e-3f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(4.1665795894e-2f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.6666665459e-1f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(5.0000001201e-1f));
  p = _mm256_fmadd_ps(p, _mm256_mul_ps(r, r), _mm256_add_ps(r, _mm256_set1_ps(1.0f)));
  // p * 2^n, 2^n built in the exponent field (n is in [-126, 127] after the clamp).
  const __m256i e = _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127)), 23);
  return _mm256_mul_ps(p, _mm256_castsi256_ps(e));
}

static inline __m256 silu8(__m256 v) {
  const __m256 e = exp_poly(_mm256_sub_ps(_mm256_setzero_ps(), v));
  return _mm256_div_ps(v, _mm256_add_ps(_mm256_set1_ps(1.0f), e));
}

extern "C" void kernel(const float* x, float* out) {
  constexpr long total = M * N;
  constexpr long vec_end = total / 32 * 32;
  // Chunks of 32 floats (two cache lines) keep every thread's stores line-aligned.
#pragma omp parallel
  {
#pragma omp for schedule(static) nowait
    for (long i = 0; i < vec_end; i += 32) {
      const __m256 a = silu8(_mm256_load_ps(x + i));
      const __m256 b = silu8(_mm256_load_ps(x + i + 8));
      const __m256 c = silu8(_mm256_load_ps(x + i + 16));
      const __m256 d = silu8(_mm256_load_ps(x + i + 24));
      _mm256_stream_ps(out + i, a);
      _mm256_stream_ps(out + i + 8, b);
      _mm256_stream_ps(out + i + 16, c);
      _mm256_stream_ps(out + i + 24, d);
    }
    // Each thread drains its own streaming stores before the closing barrier.
    _mm_sfence();
  }
  // Tail of fewer than 32 elements: masked loads and stores, 8 lanes at a time.
  for (long i = vec_end; i < total; i += 8) {
    const __m256i m = _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(total - i)),
                                         _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
    _mm256_maskstore_ps(out + i, m, silu8(_mm256_maskload_ps(x + i, m)));
  }
}

#else

static inline float exp_poly(float x) {
  x = x < -87.0f ? -87.0f : x;
  x = x > 88.0f ? 88.0f : x;
  // n = round(x / ln2) with the 1.5 * 2^23 trick; r = x - n * ln2 with ln2 split in two parts.
  const float shifter = 12582912.0f;
  const float n = (x * 1.44269504088896341f + shifter) - shifter;
  float r = x - n * 0.693359375f;
  r = r - n * -2.12194440e-4f;
  // e^r on [-ln2/2, ln2/2] (Cephes expf coefficients).
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  p = p * r * r + r + 1.0f;
  // 2^n from the exponent field.
  return p * std::bit_cast<float>((static_cast<int32_t>(n) + 127) << 23);
}

extern "C" void kernel(const float* x, float* out) {
#pragma omp parallel for simd schedule(static)
  for (long i = 0; i < M * N; ++i) {
    const float v = x[i];
    out[i] = v / (1.0f + exp_poly(-v));
  }
}

#endif
