// Naive matmul plus residual, one thread per output element, then rmsnorm of
// each output row in place, one block per row.
#include <cuda_runtime.h>

constexpr int kThreads = 256;

__global__ void matmul_add(const float* x, const float* w, const float* z, float* out) {
  const long j = blockIdx.x * static_cast<long>(blockDim.x) + threadIdx.x;
  const long i = blockIdx.y;
  if (j >= N) return;
  float acc = 0.0f;
  for (long k = 0; k < K; ++k) acc += x[i * K + k] * w[k * N + j];
  out[i * N + j] = acc + z[i * N + j];
}

__global__ void rmsnorm_rows(const float* g, float* out) {
  __shared__ float part[kThreads];
  float* row = out + blockIdx.x * N;
  float ss = 0.0f;
  for (long j = threadIdx.x; j < N; j += kThreads) ss += row[j] * row[j];
  part[threadIdx.x] = ss;
  __syncthreads();
  for (int half = kThreads / 2; half > 0; half /= 2) {
    if (threadIdx.x < half) part[threadIdx.x] += part[threadIdx.x + half];
    __syncthreads();
  }
  const float rms = sqrtf(part[0] / N + (float)eps);
  for (long j = threadIdx.x; j < N; j += kThreads) row[j] = row[j] / rms * g[j];
}

extern "C" void kernel(const float* x, const float* w, const float* z, const float* g, float* out,
                       cudaStream_t stream) {
  matmul_add<<<dim3((N + 127) / 128, M), 128, 0, stream>>>(x, w, z, out);
  rmsnorm_rows<<<M, kThreads, 0, stream>>>(g, out);
}
