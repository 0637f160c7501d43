// Naive grouped-query attention: one thread per query row. A first pass over
// the keys finds the largest score; a second accumulates exp(score - max)
// times each value row straight into the output row, which is then divided
// by the sum of the weights.
#include <cuda_runtime.h>

__global__ void attention(const float* q, const float* k, const float* v, float* out) {
  const long row = blockIdx.x * static_cast<long>(blockDim.x) + threadIdx.x;  // (b, h, i) flattened
  if (row >= B * QH * N) return;
  const long i = row % N, h = (row / N) % QH, b = row / (N * QH);
  const long kh = h / (QH / KH);
  const float scale = 1.0f / sqrtf((float)D);
  const float* qi = q + row * D;
  const float* kk = k + (b * KH + kh) * N * D;
  const float* vv = v + (b * KH + kh) * N * D;
  float* o = out + row * D;
  float mx = -INFINITY;
  for (long j = 0; j < N; ++j) {
    float s = 0.0f;
    for (long d = 0; d < D; ++d) s += qi[d] * kk[j * D + d];
    mx = fmaxf(mx, s * scale);
  }
  for (long d = 0; d < D; ++d) o[d] = 0.0f;
  float sum = 0.0f;
  for (long j = 0; j < N; ++j) {
    float s = 0.0f;
    for (long d = 0; d < D; ++d) s += qi[d] * kk[j * D + d];
    const float p = expf(s * scale - mx);
    sum += p;
    for (long d = 0; d < D; ++d) o[d] += p * vv[j * D + d];
  }
  for (long d = 0; d < D; ++d) o[d] = o[d] / sum;
}

extern "C" void kernel(const float* q, const float* k, const float* v, float* out, cudaStream_t stream) {
  const long rows = B * QH * N;
  attention<<<(rows + 127) / 128, 128, 0, stream>>>(q, k, v, out);
}
