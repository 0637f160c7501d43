// Naive grouped-query attention: for each query row, scores, softmax, then
// a weighted sum of value rows, all in float.
#include <cmath>
#include <vector>

extern "C" void kernel(const float* q, const float* k, const float* v, float* out) {
  const long group = QH / KH;
  const float scale = 1.0f / std::sqrt((float)D);
  std::vector<float> p(N);
  for (long b = 0; b < B; ++b)
    for (long h = 0; h < QH; ++h) {
      const long kh = h / group;
      const float* qh = q + (b * QH + h) * N * D;
      const float* kk = k + (b * KH + kh) * N * D;
      const float* vv = v + (b * KH + kh) * N * D;
      float* o = out + (b * QH + h) * N * D;
      for (long i = 0; i < N; ++i) {
        for (long j = 0; j < N; ++j) {
          float s = 0.0f;
          for (long d = 0; d < D; ++d) s += qh[i * D + d] * kk[j * D + d];
          p[j] = s * scale;
        }
        float mx = p[0];
        for (long j = 1; j < N; ++j)
          if (p[j] > mx) mx = p[j];
        float sum = 0.0f;
        for (long j = 0; j < N; ++j) {
          p[j] = std::exp(p[j] - mx);
          sum += p[j];
        }
        for (long j = 0; j < N; ++j) p[j] = p[j] / sum;
        for (long d = 0; d < D; ++d) {
          float acc = 0.0f;
          for (long j = 0; j < N; ++j) acc += p[j] * vv[j * D + d];
          o[i * D + d] = acc;
        }
      }
    }
}
