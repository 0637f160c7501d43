// Naive batched matmul followed by a row softmax, all in float.
#include <cmath>

extern "C" void kernel(const float* lhs, const float* rhs, float* out) {
  for (long b = 0; b < B; ++b)
    for (long i = 0; i < M; ++i) {
      float* row = out + (b * M + i) * N;
      for (long j = 0; j < N; ++j) {
        float acc = 0.0f;
        for (long k = 0; k < K; ++k)
          acc += lhs[(b * M + i) * K + k] * rhs[(b * K + k) * N + j];
        row[j] = acc;
      }
      float mx = row[0];
      for (long j = 1; j < N; ++j)
        if (row[j] > mx) mx = row[j];
      float sum = 0.0f;
      for (long j = 0; j < N; ++j) {
        row[j] = std::exp(row[j] - mx);
        sum += row[j];
      }
      for (long j = 0; j < N; ++j) row[j] = row[j] / sum;
    }
}
