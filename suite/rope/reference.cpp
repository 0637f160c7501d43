// Rotate-half rotary embedding, in double. With half = D/2 and i < half:
//   out[i]        = x[i] * cos[n][i] - x[i + half] * sin[n][i]
//   out[i + half] = x[i + half] * cos[n][i] + x[i] * sin[n][i]
extern "C" void reference(const float* x, const float* cos_tab, const float* sin_tab,
                          double* out) {
  const long half = D / 2;
  for (long bh = 0; bh < B * H; ++bh)
    for (long n = 0; n < N; ++n) {
      const float* xr = x + (bh * N + n) * D;
      double* o = out + (bh * N + n) * D;
      for (long i = 0; i < half; ++i) {
        const double c = cos_tab[n * half + i];
        const double s = sin_tab[n * half + i];
        const double x1 = xr[i];
        const double x2 = xr[i + half];
        o[i] = x1 * c - x2 * s;
        o[i + half] = x2 * c + x1 * s;
      }
    }
}
