// s = lhs[b] @ rhs[b]; out[b][i][j] = exp(s[i][j] - max_j s[i]) / sum_j exp(...), in double.
#include <cmath>
#include <vector>

extern "C" void reference(const float* lhs, const float* rhs, double* out) {
  std::vector<double> s(N);
  for (long b = 0; b < B; ++b)
    for (long i = 0; i < M; ++i) {
      for (long j = 0; j < N; ++j) s[j] = 0.0;
      for (long k = 0; k < K; ++k) {
        const double a = lhs[(b * M + i) * K + k];
        for (long j = 0; j < N; ++j) s[j] += a * rhs[(b * K + k) * N + j];
      }
      double mx = s[0];
      for (long j = 1; j < N; ++j) mx = std::max(mx, s[j]);
      double sum = 0.0;
      for (long j = 0; j < N; ++j) {
        s[j] = std::exp(s[j] - mx);
        sum += s[j];
      }
      for (long j = 0; j < N; ++j) out[(b * M + i) * N + j] = s[j] / sum;
    }
}
