// Naive rotate-half rotary embedding in float: one thread per pair (i, i + D/2).
#include <cuda_runtime.h>

__global__ void rope(const float* x, const float* cos_tab, const float* sin_tab, float* out, long pairs) {
  const long p = blockIdx.x * static_cast<long>(blockDim.x) + threadIdx.x;
  if (p >= pairs) return;
  const long half = D / 2;
  const long row = p / half, i = p % half;  // row: (b, h, n) flattened
  const long n = row % N;
  const float* xr = x + row * D;
  float* o = out + row * D;
  const float c = cos_tab[n * half + i];
  const float s = sin_tab[n * half + i];
  o[i] = xr[i] * c - xr[i + half] * s;
  o[i + half] = xr[i + half] * c + xr[i] * s;
}

extern "C" void kernel(const float* x, const float* cos_tab, const float* sin_tab, float* out,
                       cudaStream_t stream) {
  const long pairs = B * H * N * (D / 2);
  rope<<<(pairs + 255) / 256, 256, 0, stream>>>(x, cos_tab, sin_tab, out, pairs);
}
