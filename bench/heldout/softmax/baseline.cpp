// Naive row softmax in float: three passes over each row.
#include <cmath>

extern "C" void kernel(const float* x, float* out) {
  for (long i = 0; i < M; ++i) {
    float mx = x[i * N];
    for (long j = 1; j < N; ++j)
      if (x[i * N + j] > mx) mx = x[i * N + j];
    float sum = 0.0f;
    for (long j = 0; j < N; ++j) {
      out[i * N + j] = std::exp(x[i * N + j] - mx);
      sum += out[i * N + j];
    }
    for (long j = 0; j < N; ++j) out[i * N + j] = out[i * N + j] / sum;
  }
}
