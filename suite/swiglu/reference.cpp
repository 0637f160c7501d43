// out = (silu(x @ w_gate) * (x @ w_up)) @ w_down, in double.
#include <cmath>
#include <vector>

extern "C" void reference(const float* x, const float* w_gate, const float* w_up,
                          const float* w_down, double* out) {
  std::vector<double> gate(N), up(N);
  for (long i = 0; i < M; ++i) {
    for (long j = 0; j < N; ++j) gate[j] = up[j] = 0.0;
    for (long k = 0; k < K; ++k) {
      const double a = x[i * K + k];
      for (long j = 0; j < N; ++j) {
        gate[j] += a * w_gate[k * N + j];
        up[j] += a * w_up[k * N + j];
      }
    }
    for (long k = 0; k < K; ++k) out[i * K + k] = 0.0;
    for (long j = 0; j < N; ++j) {
      const double h = gate[j] / (1.0 + std::exp(-gate[j])) * up[j];
      for (long k = 0; k < K; ++k) out[i * K + k] += h * w_down[j * K + k];
    }
  }
}
