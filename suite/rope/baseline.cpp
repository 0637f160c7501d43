// Naive rotate-half rotary embedding in float.
extern "C" void kernel(const float* x, const float* cos_tab, const float* sin_tab, float* out) {
  const long half = D / 2;
  for (long b = 0; b < B; ++b)
    for (long h = 0; h < H; ++h)
      for (long n = 0; n < N; ++n) {
        const float* xr = x + ((b * H + h) * N + n) * D;
        float* o = out + ((b * H + h) * N + n) * D;
        for (long i = 0; i < half; ++i) {
          const float c = cos_tab[n * half + i];
          const float s = sin_tab[n * half + i];
          o[i] = xr[i] * c - xr[i + half] * s;
          o[i + half] = xr[i + half] * c + xr[i] * s;
        }
      }
}
