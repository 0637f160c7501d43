// Honest: the AdamW step in float with fused multiply-adds and the division
// written as a multiplication by the reciprocal: a few ulp from the reference.
#include <cmath>
extern "C" void kernel(const float* theta, const float* grad, const float* m, const float* v, float* theta_out,
                       float* m_out, float* v_out) {
  const float b1 = beta1, c1 = 1.0 - beta1, b2 = beta2, c2 = 1.0 - beta2;
  const float keep = 1.0 - decay, lr = step_size, vs = v_scale, ep = eps;
  for (long e = 0; e < M * N; ++e) {
    const float g = grad[e];
    const float m1 = std::fma(b1, m[e], c1 * g);
    const float v1 = std::fma(b2, v[e], c2 * g * g);
    m_out[e] = m1;
    v_out[e] = v1;
    theta_out[e] = std::fma(theta[e], keep, -lr * m1 * (1.0f / (std::sqrt(vs * v1) + ep)));
  }
}
