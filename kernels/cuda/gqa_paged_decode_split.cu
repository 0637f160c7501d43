// Split-KV paged decode (the flash-decoding scheme) for the
// gqa_paged_decode_h32_kv{4,8}_d128_ps1 tasks: a kernel of the project's own,
// measured beside the naive baseline and the anchors.
//
// Each block takes one (request, kv head, split): the query heads that share
// the kv head (num_qo_heads / num_kv_heads of them) over one kSplits-th of the
// request's pages, so every k and v row is read once for all of its query
// heads. Each warp walks every kWarps-th page of the split; a lane holds 4
// elements of head_dim, loaded 8 bytes at a time, and the logits are summed
// across the warp with shuffles, then folded into an online softmax in base 2.
// The warps of a block then merge their states, and a second kernel merges
// the splits of each (request, query head) into the output and the lse.
#include <cuda_bf16.h>
#include <cuda_runtime.h>

static_assert(page_size == 1 && head_dim == 128, "pages of one token; 4 elements of head_dim per lane");

constexpr int kGroup = num_qo_heads / num_kv_heads;
constexpr int kSplits = 16;
constexpr int kWarps = 4;
constexpr int kPerLane = head_dim / 32;
constexpr float kLog2e = 1.4426950408889634f;

// Each split's state per (request, query head, split): its maximum logit and
// sum in base 2 and its unnormalized output. Every call rewrites all of it.
__device__ float partial_max[batch_size * num_qo_heads * kSplits];
__device__ float partial_sum[batch_size * num_qo_heads * kSplits];
__device__ float partial_out[batch_size * num_qo_heads * kSplits * head_dim];

__device__ float4 Load4(const __nv_bfloat16* at) {
  const uint2 raw = *reinterpret_cast<const uint2*>(at);
  const float2 lo = __bfloat1622float2(*reinterpret_cast<const __nv_bfloat162*>(&raw.x));
  const float2 hi = __bfloat1622float2(*reinterpret_cast<const __nv_bfloat162*>(&raw.y));
  return make_float4(lo.x, lo.y, hi.x, hi.y);
}

__device__ float WarpSum(float v) {
  for (int offset = 16; offset > 0; offset >>= 1) v += __shfl_xor_sync(0xffffffffu, v, offset);
  return v;
}

// The weight of a state with maximum `m` in a merge whose maximum is `top`.
__device__ float Rescale(float m, float top) { return m == -INFINITY ? 0.0f : exp2f(m - top); }

__global__ void __launch_bounds__(kWarps * 32, 4)
    split_decode(const __nv_bfloat16* __restrict__ q, const __nv_bfloat16* __restrict__ k_cache,
                 const __nv_bfloat16* __restrict__ v_cache, const int* __restrict__ kv_indptr,
                 const int* __restrict__ kv_indices, const float* __restrict__ sm_scale) {
  const int split = blockIdx.x, kh = blockIdx.y, b = blockIdx.z;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const long begin = kv_indptr[b], len = kv_indptr[b + 1] - begin;
  const long lo = begin + len * split / kSplits, hi = begin + len * (split + 1) / kSplits;
  const float scale = *sm_scale * kLog2e;

  float4 qv[kGroup];
  float m[kGroup], l[kGroup];
  float4 acc[kGroup];
  for (int g = 0; g < kGroup; ++g) {
    qv[g] = Load4(q + (static_cast<long>(b) * num_qo_heads + kh * kGroup + g) * head_dim + lane * kPerLane);
    m[g] = -INFINITY, l[g] = 0.0f, acc[g] = make_float4(0, 0, 0, 0);
  }
  for (long j = lo + warp; j < hi; j += kWarps) {
    const long row = (static_cast<long>(kv_indices[j]) * num_kv_heads + kh) * head_dim + lane * kPerLane;
    const float4 k = Load4(k_cache + row), v = Load4(v_cache + row);
    for (int g = 0; g < kGroup; ++g) {
      const float s = WarpSum(qv[g].x * k.x + qv[g].y * k.y + qv[g].z * k.z + qv[g].w * k.w) * scale;
      const float top = fmaxf(m[g], s);
      const float c = exp2f(m[g] - top), p = exp2f(s - top);
      l[g] = l[g] * c + p;
      acc[g] = make_float4(acc[g].x * c + p * v.x, acc[g].y * c + p * v.y, acc[g].z * c + p * v.z,
                           acc[g].w * c + p * v.w);
      m[g] = top;
    }
  }

  __shared__ float s_max[kWarps][kGroup], s_sum[kWarps][kGroup];
  __shared__ float4 s_acc[kWarps][kGroup][32];
  for (int g = 0; g < kGroup; ++g) {
    if (lane == 0) s_max[warp][g] = m[g], s_sum[warp][g] = l[g];
    s_acc[warp][g][lane] = acc[g];
  }
  __syncthreads();
  for (int g = warp; g < kGroup; g += kWarps) {
    float top = -INFINITY;
    for (int w = 0; w < kWarps; ++w) top = fmaxf(top, s_max[w][g]);
    float sum = 0.0f;
    float4 out = make_float4(0, 0, 0, 0);
    for (int w = 0; w < kWarps; ++w) {
      const float f = Rescale(s_max[w][g], top);
      const float4 a = s_acc[w][g][lane];
      sum += s_sum[w][g] * f;
      out = make_float4(out.x + a.x * f, out.y + a.y * f, out.z + a.z * f, out.w + a.w * f);
    }
    const long at = (static_cast<long>(b) * num_qo_heads + kh * kGroup + g) * kSplits + split;
    if (lane == 0) partial_max[at] = top, partial_sum[at] = sum;
    reinterpret_cast<float4*>(partial_out + at * head_dim)[lane] = out;
  }
}

// One warp per (request, query head): merges its splits.
__global__ void merge_splits(__nv_bfloat16* __restrict__ output, float* __restrict__ lse) {
  const long row = blockIdx.x;  // b * num_qo_heads + h
  const int lane = threadIdx.x;
  const long first = row * kSplits;
  float top = -INFINITY;
  for (int s = 0; s < kSplits; ++s) top = fmaxf(top, partial_max[first + s]);
  float sum = 0.0f;
  float4 out = make_float4(0, 0, 0, 0);
  for (int s = 0; s < kSplits; ++s) {
    const float f = Rescale(partial_max[first + s], top);
    const float4 a = reinterpret_cast<const float4*>(partial_out + (first + s) * head_dim)[lane];
    sum += partial_sum[first + s] * f;
    out = make_float4(out.x + a.x * f, out.y + a.y * f, out.z + a.z * f, out.w + a.w * f);
  }
  const bool empty = sum == 0.0f;  // a request without pages: zeros and -inf, as FlashInfer-Bench
  const float inv = empty ? 0.0f : 1.0f / sum;
  __nv_bfloat162* o = reinterpret_cast<__nv_bfloat162*>(output + row * head_dim + lane * kPerLane);
  o[0] = __floats2bfloat162_rn(out.x * inv, out.y * inv);
  o[1] = __floats2bfloat162_rn(out.z * inv, out.w * inv);
  if (lane == 0) lse[row] = empty ? -INFINITY : top + log2f(sum);
}

extern "C" void kernel(const __nv_bfloat16* q, const __nv_bfloat16* k_cache, const __nv_bfloat16* v_cache,
                       const int* kv_indptr, const int* kv_indices, const float* sm_scale, __nv_bfloat16* output,
                       float* lse, cudaStream_t stream) {
  split_decode<<<dim3(kSplits, num_kv_heads, batch_size), kWarps * 32, 0, stream>>>(q, k_cache, v_cache, kv_indptr,
                                                                                     kv_indices, sm_scale);
  merge_splits<<<batch_size * num_qo_heads, 32, 0, stream>>>(output, lse);
}
