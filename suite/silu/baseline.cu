// Naive elementwise silu in float: one thread per element.
#include <cuda_runtime.h>

__global__ void silu(const float* x, float* out, long n) {
  const long i = blockIdx.x * static_cast<long>(blockDim.x) + threadIdx.x;
  if (i < n) {
    const float v = x[i];
    out[i] = v / (1.0f + expf(-v));
  }
}

extern "C" void kernel(const float* x, float* out, cudaStream_t stream) {
  const long n = M * N;
  silu<<<(n + 255) / 256, 256, 0, stream>>>(x, out, n);
}
