// One AdamW step, in double.
#include <cmath>

extern "C" void reference(const float* theta, const float* grad, const float* m, const float* v,
                          double* theta_out, double* m_out, double* v_out) {
  for (long i = 0; i < M * N; ++i) {
    const double g = grad[i];
    const double m1 = beta1 * m[i] + (1.0 - beta1) * g;
    const double v1 = beta2 * v[i] + (1.0 - beta2) * g * g;
    m_out[i] = m1;
    v_out[i] = v1;
    theta_out[i] = theta[i] * (1.0 - decay) - step_size * m1 / (std::sqrt(v_scale * v1) + eps);
  }
}
