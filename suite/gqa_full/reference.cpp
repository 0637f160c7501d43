// Grouped-query attention without mask, in double.
#include <cmath>
#include <vector>

extern "C" void reference(const float* q, const float* k, const float* v, double* out) {
  const long group = QH / KH;
  const double scale = 1.0 / std::sqrt((double)D);
  std::vector<double> p(N);
  for (long b = 0; b < B; ++b)
    for (long h = 0; h < QH; ++h) {
      const long kh = h / group;
      const float* qh = q + (b * QH + h) * N * D;
      const float* kk = k + (b * KH + kh) * N * D;
      const float* vv = v + (b * KH + kh) * N * D;
      double* o = out + (b * QH + h) * N * D;
      for (long i = 0; i < N; ++i) {
        double mx = -INFINITY;
        for (long j = 0; j < N; ++j) {
          double s = 0.0;
          for (long d = 0; d < D; ++d) s += (double)qh[i * D + d] * kk[j * D + d];
          p[j] = s * scale;
          mx = std::max(mx, p[j]);
        }
        double sum = 0.0;
        for (long j = 0; j < N; ++j) {
          p[j] = std::exp(p[j] - mx);
          sum += p[j];
        }
        for (long d = 0; d < D; ++d) o[i * D + d] = 0.0;
        for (long j = 0; j < N; ++j) {
          const double w = p[j] / sum;
          for (long d = 0; d < D; ++d) o[i * D + d] += w * vv[j * D + d];
        }
      }
    }
}
