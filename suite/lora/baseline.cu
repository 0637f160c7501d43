// Naive LoRA: xa = x @ a into a scratch buffer on the stream (one thread per
// element), then out[i][j] = dot(x_i, w_:j) + dot(xa_i, b_:j), one thread
// per output element.
#include <cuda_runtime.h>

__global__ void down(const float* x, const float* a, float* xa) {
  const long r = blockIdx.x * static_cast<long>(blockDim.x) + threadIdx.x;
  const long i = blockIdx.y;
  if (r >= R) return;
  float acc = 0.0f;
  for (long k = 0; k < K; ++k) acc += x[i * K + k] * a[k * R + r];
  xa[i * R + r] = acc;
}

__global__ void base_plus_up(const float* x, const float* w, const float* xa, const float* b, float* out) {
  const long j = blockIdx.x * static_cast<long>(blockDim.x) + threadIdx.x;
  const long i = blockIdx.y;
  if (j >= N) return;
  float base = 0.0f;
  for (long k = 0; k < K; ++k) base += x[i * K + k] * w[k * N + j];
  float low = 0.0f;
  for (long r = 0; r < R; ++r) low += xa[i * R + r] * b[r * N + j];
  out[i * N + j] = base + low;
}

extern "C" void kernel(const float* x, const float* w, const float* a, const float* b, float* out,
                       cudaStream_t stream) {
  float* xa = nullptr;
  cudaMallocAsync(&xa, M * R * sizeof(float), stream);
  down<<<dim3((R + 127) / 128, M), 128, 0, stream>>>(x, a, xa);
  base_plus_up<<<dim3((N + 127) / 128, M), 128, 0, stream>>>(x, w, xa, b, out);
  cudaFreeAsync(xa, stream);
}
