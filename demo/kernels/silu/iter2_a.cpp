// silu with a vectorizable float exp (range reduction, degree-6 polynomial, 2^n from the
// exponent bits) and the flat element loop split across both cores: each thread runs
// AVX-512 lanes over its own contiguous chunk.
#include <bit>
#include <cstdint>

static inline float exp_poly(float x) {
  // Clamp so 2^n stays a normal float; silu saturates long before this matters.
  x = x < -87.0f ? -87.0f : x;
  x = x > 88.0f ? 88.0f : x;
  // n = round(x / ln2) with the 1.5 * 2^23 trick (no libm call, vectorizes).
  const float shifter = 12582912.0f;
  const float t = x * 1.44269504088896341f + shifter;
  const float n = t - shifter;
  // r = x - n * ln2, with ln2 split in a high and a low part for accuracy.
  float r = x - n * 0.693359375f;
  r = r - n * -2.12194440e-4f;
  // e^r on [-ln2/2, ln2/2] (Cephes expf coefficients, about 1e-7 relative).
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  p = p * r * r + r + 1.0f;
  // 2^n from the exponent field.
  const float scale = std::bit_cast<float>((static_cast<int32_t>(n) + 127) << 23);
  return p * scale;
}

extern "C" void kernel(const float* x, float* out) {
#pragma omp parallel for simd schedule(static)
  for (long i = 0; i < M * N; ++i) {
    const float v = x[i];
    out[i] = v / (1.0f + exp_poly(-v));
  }
}
