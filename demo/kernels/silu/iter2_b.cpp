// silu with AVX-512 intrinsics: vectorized float exp (range reduction, degree-6
// polynomial, 2^n from the exponent bits), each core takes a contiguous chunk of the
// array, and results go out with non-temporal stores so the output lines are not
// first read into the cache (no read-for-ownership traffic).
#include <immintrin.h>

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
