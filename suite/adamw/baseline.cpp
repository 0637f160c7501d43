// Naive AdamW step in float, one element at a time.
#include <cmath>

extern "C" void kernel(const float* theta, const float* grad, const float* m, const float* v,
                       float* theta_out, float* m_out, float* v_out) {
  const float b1 = (float)beta1, c1 = (float)(1.0 - beta1);
  const float b2 = (float)beta2, c2 = (float)(1.0 - beta2);
  const float keep = (float)(1.0 - decay);
  const float lr = (float)step_size, vs = (float)v_scale, ep = (float)eps;
  for (long i = 0; i < M; ++i)
    for (long j = 0; j < N; ++j) {
      const long e = i * N + j;
      const float g = grad[e];
      const float m1 = b1 * m[e] + c1 * g;
      const float v1 = b2 * v[e] + c2 * g * g;
      m_out[e] = m1;
      v_out[e] = v1;
      theta_out[e] = theta[e] * keep - lr * m1 / (std::sqrt(vs * v1) + ep);
    }
}
