// Naive batched matmul: one thread per output element, a dot product over k.
#include <cuda_runtime.h>

__global__ void bmm(const float* lhs, const float* rhs, float* out) {
  const long j = blockIdx.x * static_cast<long>(blockDim.x) + threadIdx.x;
  const long i = blockIdx.y, b = blockIdx.z;
  if (j >= N) return;
  float acc = 0.0f;
  for (long k = 0; k < K; ++k) acc += lhs[(b * M + i) * K + k] * rhs[(b * K + k) * N + j];
  out[(b * M + i) * N + j] = acc;
}

extern "C" void kernel(const float* lhs, const float* rhs, float* out, cudaStream_t stream) {
  bmm<<<dim3((N + 127) / 128, M, B), 128, 0, stream>>>(lhs, rhs, out);
}
