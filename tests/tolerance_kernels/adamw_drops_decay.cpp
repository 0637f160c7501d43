// Wrong within the L2 tolerance: drops the weight decay, theta * (1 - 1e-5),
// an error of 1e-5 of theta: half the task's relative L2 tolerance, yet far
// beyond float32 rounding.
#include <cmath>
extern "C" void kernel(const float* theta, const float* grad, const float* m, const float* v, float* theta_out,
                       float* m_out, float* v_out) {
  const float b1 = beta1, c1 = 1.0 - beta1, b2 = beta2, c2 = 1.0 - beta2;
  const float lr = step_size, vs = v_scale, ep = eps;
  for (long e = 0; e < M * N; ++e) {
    const float g = grad[e];
    const float m1 = b1 * m[e] + c1 * g;
    const float v1 = b2 * v[e] + c2 * g * g;
    m_out[e] = m1;
    v_out[e] = v1;
    theta_out[e] = theta[e] - lr * m1 / (std::sqrt(vs * v1) + ep);
  }
}
