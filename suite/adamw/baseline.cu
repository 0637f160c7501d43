// Naive AdamW step in float: one thread per element.
#include <cuda_runtime.h>

__global__ void adamw(const float* theta, const float* grad, const float* m, const float* v, float* theta_out,
                      float* m_out, float* v_out, long n) {
  const long e = blockIdx.x * static_cast<long>(blockDim.x) + threadIdx.x;
  if (e >= n) return;
  const float b1 = (float)beta1, c1 = (float)(1.0 - beta1);
  const float b2 = (float)beta2, c2 = (float)(1.0 - beta2);
  const float keep = (float)(1.0 - decay);
  const float lr = (float)step_size, vs = (float)v_scale, ep = (float)eps;
  const float g = grad[e];
  const float m1 = b1 * m[e] + c1 * g;
  const float v1 = b2 * v[e] + c2 * g * g;
  m_out[e] = m1;
  v_out[e] = v1;
  theta_out[e] = theta[e] * keep - lr * m1 / (sqrtf(vs * v1) + ep);
}

extern "C" void kernel(const float* theta, const float* grad, const float* m, const float* v, float* theta_out,
                       float* m_out, float* v_out, cudaStream_t stream) {
  const long n = M * N;
  adamw<<<(n + 255) / 256, 256, 0, stream>>>(theta, grad, m, v, theta_out, m_out, v_out, n);
}
