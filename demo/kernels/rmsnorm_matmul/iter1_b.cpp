// Naive rmsnorm then matmul with the output rows split across the cores by
// OpenMP; each thread normalizes its rows into its own scratch row and computes
// their dot products.
#include <cmath>
#include <vector>

extern "C" void kernel(const float* x, const float* w, float* out) {
#pragma omp parallel
  {
    std::vector<float> xn(K);
#pragma omp for schedule(static)
    for (long i = 0; i < M; ++i) {
      float ss = 0.0f;
      for (long k = 0; k < K; ++k) ss += x[i * K + k] * x[i * K + k];
      const float rms = std::sqrt(ss / K);
      for (long k = 0; k < K; ++k) xn[k] = x[i * K + k] / rms;
      for (long j = 0; j < N; ++j) {
        float acc = 0.0f;
        for (long k = 0; k < K; ++k) acc += xn[k] * w[k * N + j];
        out[i * N + j] = acc;
      }
    }
  }
}
