// Naive batched matmul, then a row softmax: one thread per output element
// for the matmul, then one thread per row for the softmax.
#include <cuda_runtime.h>

__global__ void bmm(const float* lhs, const float* rhs, float* out) {
  const long j = blockIdx.x * static_cast<long>(blockDim.x) + threadIdx.x;
  const long i = blockIdx.y, b = blockIdx.z;
  if (j >= N) return;
  float acc = 0.0f;
  for (long k = 0; k < K; ++k) acc += lhs[(b * M + i) * K + k] * rhs[(b * K + k) * N + j];
  out[(b * M + i) * N + j] = acc;
}

__global__ void softmax_rows(float* out, long rows) {
  const long r = blockIdx.x * static_cast<long>(blockDim.x) + threadIdx.x;
  if (r >= rows) return;
  float* row = out + r * N;
  float mx = row[0];
  for (long j = 1; j < N; ++j) mx = fmaxf(mx, row[j]);
  float sum = 0.0f;
  for (long j = 0; j < N; ++j) {
    row[j] = expf(row[j] - mx);
    sum += row[j];
  }
  for (long j = 0; j < N; ++j) row[j] = row[j] / sum;
}

extern "C" void kernel(const float* lhs, const float* rhs, float* out, cudaStream_t stream) {
  bmm<<<dim3((N + 127) / 128, M, B), 128, 0, stream>>>(lhs, rhs, out);
  softmax_rows<<<(B * M + 127) / 128, 128, 0, stream>>>(out, B * M);
}
