// Naive LoRA: xa = x @ a first, then out[i][j] = dot(x_i, w_:j) + dot(xa_i, b_:j).
#include <vector>

extern "C" void kernel(const float* x, const float* w, const float* a, const float* b,
                       float* out) {
  std::vector<float> xa(M * R);
  for (long i = 0; i < M; ++i)
    for (long r = 0; r < R; ++r) {
      float acc = 0.0f;
      for (long k = 0; k < K; ++k) acc += x[i * K + k] * a[k * R + r];
      xa[i * R + r] = acc;
    }
  for (long i = 0; i < M; ++i)
    for (long j = 0; j < N; ++j) {
      float base = 0.0f;
      for (long k = 0; k < K; ++k) base += x[i * K + k] * w[k * N + j];
      float low = 0.0f;
      for (long r = 0; r < R; ++r) low += xa[i * R + r] * b[r * N + j];
      out[i * N + j] = base + low;
    }
}
