// Naive paged causal prefill: one block per (query token, query head), one
// thread per element of head_dim. The kv positions the token may see are
// visited one at a time: each logit is summed across the block, then folded
// into an online softmax.
#include <cuda_bf16.h>
#include <cuda_runtime.h>

static_assert(page_size == 1 && head_dim % 32 == 0 && head_dim <= 1024, "one thread per head_dim element");

// The sum of v over the block; `scratch` holds one float per warp.
__device__ float BlockSum(float v, float* scratch) {
  for (int offset = 16; offset > 0; offset >>= 1) v += __shfl_xor_sync(0xffffffffu, v, offset);
  if (threadIdx.x % 32 == 0) scratch[threadIdx.x / 32] = v;
  __syncthreads();
  float total = 0.0f;
  for (int w = 0; w < head_dim / 32; ++w) total += scratch[w];
  __syncthreads();
  return total;
}

__global__ void prefill(const __nv_bfloat16* q, const __nv_bfloat16* k_cache, const __nv_bfloat16* v_cache,
                        const int* qo_indptr, const int* kv_indptr, const int* kv_indices, const float* sm_scale,
                        __nv_bfloat16* output, float* lse) {
  __shared__ float scratch[head_dim / 32];
  const long t = blockIdx.x / num_qo_heads, h = blockIdx.x % num_qo_heads;
  long b = 0;
  while (qo_indptr[b + 1] <= t) ++b;  // the request holding token t
  const long i = t - qo_indptr[b], q_len = qo_indptr[b + 1] - qo_indptr[b];
  const long kv_begin = kv_indptr[b], kv_len = kv_indptr[b + 1] - kv_begin;
  const long seen = min(kv_len, i + kv_len - q_len + 1);  // causal: positions 0 .. seen-1
  const long kh = h / (num_qo_heads / num_kv_heads);
  const int d = threadIdx.x;
  const long row = t * num_qo_heads + h;
  const float qd = __bfloat162float(q[row * head_dim + d]);
  const float scale = *sm_scale;
  float m = -INFINITY, l = 0.0f, acc = 0.0f;
  for (long j = 0; j < seen; ++j) {
    const long at = (static_cast<long>(kv_indices[kv_begin + j]) * num_kv_heads + kh) * head_dim + d;
    const float s = BlockSum(qd * __bfloat162float(k_cache[at]), scratch) * scale;
    const float m_new = fmaxf(m, s);
    const float correction = expf(m - m_new), p = expf(s - m_new);
    l = l * correction + p;
    acc = acc * correction + p * __bfloat162float(v_cache[at]);
    m = m_new;
  }
  const bool empty = l == 0.0f;  // nothing visible: zeros and -inf, as FlashInfer-Bench
  output[row * head_dim + d] = __float2bfloat16_rn(empty ? 0.0f : acc / l);
  if (d == 0) lse[row] = empty ? -INFINITY : m * 1.4426950408889634f + log2f(l);
}

extern "C" void kernel(const __nv_bfloat16* q, const __nv_bfloat16* k_cache, const __nv_bfloat16* v_cache,
                       const int* qo_indptr, const int* kv_indptr, const int* kv_indices, const float* sm_scale,
                       __nv_bfloat16* output, float* lse, cudaStream_t stream) {
  prefill<<<total_q * num_qo_heads, head_dim, 0, stream>>>(q, k_cache, v_cache, qo_indptr, kv_indptr, kv_indices,
                                                           sm_scale, output, lse);
}
