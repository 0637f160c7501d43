// Naive SwiGLU MLP in float: h = silu(x @ w_gate) * (x @ w_up) into a scratch
// buffer on the stream (one thread per element of h), then out = h @ w_down
// (one thread per output element).
#include <cuda_runtime.h>

__global__ void gate_up(const float* x, const float* w_gate, const float* w_up, float* h) {
  const long j = blockIdx.x * static_cast<long>(blockDim.x) + threadIdx.x;
  const long i = blockIdx.y;
  if (j >= N) return;
  float gate = 0.0f, up = 0.0f;
  for (long k = 0; k < K; ++k) {
    gate += x[i * K + k] * w_gate[k * N + j];
    up += x[i * K + k] * w_up[k * N + j];
  }
  h[i * N + j] = gate / (1.0f + expf(-gate)) * up;
}

__global__ void project_down(const float* h, const float* w_down, float* out) {
  const long k = blockIdx.x * static_cast<long>(blockDim.x) + threadIdx.x;
  const long i = blockIdx.y;
  if (k >= K) return;
  float acc = 0.0f;
  for (long j = 0; j < N; ++j) acc += h[i * N + j] * w_down[j * K + k];
  out[i * K + k] = acc;
}

extern "C" void kernel(const float* x, const float* w_gate, const float* w_up, const float* w_down, float* out,
                       cudaStream_t stream) {
  float* h = nullptr;
  cudaMallocAsync(&h, M * N * sizeof(float), stream);
  gate_up<<<dim3((N + 127) / 128, M), 128, 0, stream>>>(x, w_gate, w_up, h);
  project_down<<<dim3((K + 127) / 128, M), 128, 0, stream>>>(h, w_down, out);
  cudaFreeAsync(h, stream);
}
