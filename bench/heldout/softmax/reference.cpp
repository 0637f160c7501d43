// out[i][j] = exp(x[i][j] - max_j x[i]) / sum_j exp(...), in double.
#include <algorithm>
#include <cmath>

extern "C" void reference(const float* x, double* out) {
  for (long i = 0; i < M; ++i) {
    const float* row = x + i * N;
    double* o = out + i * N;
    double mx = row[0];
    for (long j = 1; j < N; ++j) mx = std::max(mx, (double)row[j]);
    double sum = 0.0;
    for (long j = 0; j < N; ++j) {
      o[j] = std::exp((double)row[j] - mx);
      sum += o[j];
    }
    for (long j = 0; j < N; ++j) o[j] /= sum;
  }
}
