// Naive matmul: one thread per output element, a dot product over k.
#include <cuda_runtime.h>

__global__ void matmul(const float* lhs, const float* rhs, float* out) {
  const long j = blockIdx.x * static_cast<long>(blockDim.x) + threadIdx.x;
  const long i = blockIdx.y;
  if (j >= N) return;
  float acc = 0.0f;
  for (long k = 0; k < K; ++k) acc += lhs[i * K + k] * rhs[k * N + j];
  out[i * N + j] = acc;
}

extern "C" void kernel(const float* lhs, const float* rhs, float* out, cudaStream_t stream) {
  matmul<<<dim3((N + 127) / 128, M), 128, 0, stream>>>(lhs, rhs, out);
}
