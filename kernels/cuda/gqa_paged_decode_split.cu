// Split-KV paged decode (the flash-decoding scheme) for the
// gqa_paged_decode_h32_kv{4,8}_d128_ps1 tasks: a kernel of the project's own,
// measured beside the naive baseline and the anchors. One source for both
// tasks: everything follows from the shape constants.
//
// Work is cut into chunks of at most kChunk pages: request b holds
// ceil(len_b / kChunk) of them, numbered consecutively over the batch, so every
// block gets the same amount of work whatever the spread of the lengths. The
// grid is (kv head, chunk slot) with kMaxChunks slots, an upper bound known
// from the shape (num_kv_indices / kChunk + batch_size); each block finds its
// request by a warp scan over kv_indptr, and the slots past the last chunk
// exit at once.
//
// A block takes one (chunk, kv head): the chunk's page ids go to shared
// memory first, then each warp walks its share of the pages in steps of 2 x
// kUnroll: a half-warp holds one k/v row, 8 elements of head_dim per lane in
// one 16-byte load, and each lane issues kUnroll k loads and kUnroll v loads
// before using any, so many independent loads are in flight. The query heads
// sharing the kv head are split over kHeadParts warps of kHeadsPerWarp heads
// (those warps read the same rows, mostly from L1). Logits are summed over the
// 16 lanes with shuffles and folded into an online softmax in base 2 (sm_scale
// * log2(e) is folded into q), rescaling once per kUnroll rows. The two halves
// of a warp, then the warps of a block, merge their states; the block writes
// the chunk's state (maximum, sum, unnormalized output per query head), and a
// second small kernel merges the chunks of each (request, query head) into the
// output and the lse. A request without pages gets zeros and -inf.
#include <cuda_bf16.h>
#include <cuda_runtime.h>

static_assert(page_size == 1 && head_dim == 128, "pages of one token; 16 lanes x 8 elements per row");
static_assert(num_qo_heads % num_kv_heads == 0, "query heads grouped over kv heads");

constexpr int kGroup = num_qo_heads / num_kv_heads;
constexpr int kHeadsPerWarp = kGroup < 4 ? kGroup : 4;
static_assert(kGroup % kHeadsPerWarp == 0, "the group splits evenly over warps");
constexpr int kHeadParts = kGroup / kHeadsPerWarp;
constexpr int kPageWarps = 4;                          // warps splitting the pages of a chunk
constexpr int kWarps = kPageWarps * kHeadParts;
constexpr int kThreads = kWarps * 32;
constexpr int kUnroll = 4;                             // rows per half-warp per step
constexpr int kPagesPerStep = kPageWarps * 2 * kUnroll;  // pages per block per step
constexpr int kChunk = 256;                            // pages per block at most
static_assert(kChunk % kPagesPerStep == 0, "whole steps per chunk");
constexpr int kMaxChunks = static_cast<int>(num_kv_indices / kChunk + batch_size);
static_assert(kMaxChunks <= 65535, "chunk slots fit in gridDim.y");
constexpr float kLog2e = 1.4426950408889634f;
constexpr unsigned kFull = 0xffffffffu;

// Each chunk's state per query head: (maximum logit, sum) in base 2 and the
// unnormalized output. Every call rewrites each entry the merge reads.
__device__ float2 partial_ml[kMaxChunks * num_qo_heads];
__device__ float partial_out[static_cast<long>(kMaxChunks) * num_qo_heads * head_dim];

__device__ __forceinline__ int ChunksOf(int len) { return len > 0 ? (len + kChunk - 1) / kChunk : 0; }

// The request holding chunk `c` and the number of its first chunk;
// batch_size when `c` is past the last chunk. All 32 lanes call it.
__device__ void FindChunk(const int* __restrict__ kv_indptr, int c, int& b_out, int& first_out) {
  const int lane = threadIdx.x % 32;
  int base = 0;
  for (int b0 = 0; b0 < batch_size; b0 += 32) {
    const int b = b0 + lane;
    const int n = b < batch_size ? ChunksOf(kv_indptr[b + 1] - kv_indptr[b]) : 0;
    int incl = n;
    for (int off = 1; off < 32; off <<= 1) {
      const int t = __shfl_up_sync(kFull, incl, off);
      if (lane >= off) incl += t;
    }
    const int excl = base + incl - n;
    const unsigned hit = __ballot_sync(kFull, c >= excl && c < excl + n);
    if (hit) {
      const int src = __ffs(hit) - 1;
      b_out = b0 + src;
      first_out = __shfl_sync(kFull, excl, src);
      return;
    }
    base += __shfl_sync(kFull, incl, 31);
  }
  b_out = batch_size;
  first_out = base;
}

// The number of the first chunk of request `b`. All 32 lanes call it.
__device__ int ChunkStart(const int* __restrict__ kv_indptr, int b) {
  const int lane = threadIdx.x % 32;
  int total = 0;
  for (int b0 = 0; b0 < b; b0 += 32) {
    const int r = b0 + lane;
    total += r < b ? ChunksOf(kv_indptr[r + 1] - kv_indptr[r]) : 0;
  }
  for (int off = 16; off > 0; off >>= 1) total += __shfl_xor_sync(kFull, total, off);
  return total;
}

// 8 bf16 (one 16-byte word) as floats.
__device__ __forceinline__ void Unpack(const uint4 raw, float (&f)[8]) {
  const unsigned w[4] = {raw.x, raw.y, raw.z, raw.w};
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    f[2 * i] = __uint_as_float(w[i] << 16);
    f[2 * i + 1] = __uint_as_float(w[i] & 0xffff0000u);
  }
}

// The weight of a state with maximum `m` in a merge whose maximum is `top`.
__device__ __forceinline__ float Rescale(float m, float top) { return m == -INFINITY ? 0.0f : exp2f(m - top); }

__global__ void __launch_bounds__(kThreads, 2)
    split_decode(const __nv_bfloat16* __restrict__ q, const __nv_bfloat16* __restrict__ k_cache,
                 const __nv_bfloat16* __restrict__ v_cache, const int* __restrict__ kv_indptr,
                 const int* __restrict__ kv_indices, const float* __restrict__ sm_scale) {
  const int kh = blockIdx.x, c = blockIdx.y;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  int b, first;
  FindChunk(kv_indptr, c, b, first);  // the same answer in every warp
  if (b >= batch_size) return;        // a slot past the last chunk: the whole block leaves
  const int lo = kv_indptr[b] + (c - first) * kChunk;
  const int n = min(kChunk, kv_indptr[b + 1] - lo);  // 1 .. kChunk pages

  __shared__ int s_page[kChunk];
  for (int i = threadIdx.x; i < n; i += kThreads) s_page[i] = kv_indices[lo + i];

  const int pw = warp % kPageWarps, part = warp / kPageWarps;
  const int half = lane / 16, sub = lane % 16;
  const int g0 = part * kHeadsPerWarp;  // this warp's first head within the group
  const float scale = *sm_scale * kLog2e;

  float qf[kHeadsPerWarp][8], acc[kHeadsPerWarp][8], m[kHeadsPerWarp], l[kHeadsPerWarp];
#pragma unroll
  for (int i = 0; i < kHeadsPerWarp; ++i) {
    const long at = (static_cast<long>(b) * num_qo_heads + kh * kGroup + g0 + i) * head_dim + sub * 8;
    Unpack(__ldg(reinterpret_cast<const uint4*>(q + at)), qf[i]);
#pragma unroll
    for (int e = 0; e < 8; ++e) qf[i][e] *= scale, acc[i][e] = 0.0f;
    m[i] = -INFINITY, l[i] = 0.0f;
  }
  const __nv_bfloat16* k_base = k_cache + kh * head_dim + sub * 8;
  const __nv_bfloat16* v_base = v_cache + kh * head_dim + sub * 8;
  __syncthreads();  // s_page is written

  for (int step = 0; step < n; step += kPagesPerStep) {  // the same trip count in every warp
    uint4 kr[kUnroll], vr[kUnroll];
    bool valid[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const int j = step + (u * kPageWarps + pw) * 2 + half;
      valid[u] = j < n;
      kr[u] = vr[u] = make_uint4(0, 0, 0, 0);
      if (valid[u]) {
        const long row = static_cast<long>(s_page[j]) * (num_kv_heads * head_dim);
        kr[u] = __ldg(reinterpret_cast<const uint4*>(k_base + row));
        vr[u] = __ldg(reinterpret_cast<const uint4*>(v_base + row));
      }
    }
    float s[kHeadsPerWarp][kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      float kf[8];
      Unpack(kr[u], kf);
#pragma unroll
      for (int i = 0; i < kHeadsPerWarp; ++i) {
        float dot = 0.0f;
#pragma unroll
        for (int e = 0; e < 8; ++e) dot = fmaf(qf[i][e], kf[e], dot);
        s[i][u] = dot;
      }
    }
#pragma unroll
    for (int off = 8; off > 0; off >>= 1)  // within each half-warp
#pragma unroll
      for (int i = 0; i < kHeadsPerWarp; ++i)
#pragma unroll
        for (int u = 0; u < kUnroll; ++u) s[i][u] += __shfl_xor_sync(kFull, s[i][u], off);

    float p[kHeadsPerWarp][kUnroll];
#pragma unroll
    for (int i = 0; i < kHeadsPerWarp; ++i) {
      float top = m[i];
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) {
        if (!valid[u]) s[i][u] = -INFINITY;
        top = fmaxf(top, s[i][u]);
      }
      const float safe = top == -INFINITY ? 0.0f : top;  // no row yet: every weight is 0
      const float corr = exp2f(m[i] - safe);
      float sum = 0.0f;
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) sum += p[i][u] = exp2f(s[i][u] - safe);
      l[i] = l[i] * corr + sum;
      m[i] = top;
#pragma unroll
      for (int e = 0; e < 8; ++e) acc[i][e] *= corr;
    }
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      float vf[8];
      Unpack(vr[u], vf);
#pragma unroll
      for (int i = 0; i < kHeadsPerWarp; ++i)
#pragma unroll
        for (int e = 0; e < 8; ++e) acc[i][e] = fmaf(p[i][u], vf[e], acc[i][e]);
    }
  }

  // The two halves of the warp, then the kPageWarps warps of each head part.
  __shared__ float s_m[kPageWarps][kGroup], s_l[kPageWarps][kGroup];
  __shared__ __align__(16) float s_acc[kPageWarps][kGroup][head_dim];
#pragma unroll
  for (int i = 0; i < kHeadsPerWarp; ++i) {
    const float m_o = __shfl_xor_sync(kFull, m[i], 16), l_o = __shfl_xor_sync(kFull, l[i], 16);
    const float top = fmaxf(m[i], m_o);
    const float fa = Rescale(m[i], top), fb = Rescale(m_o, top);
    l[i] = l[i] * fa + l_o * fb;
#pragma unroll
    for (int e = 0; e < 8; ++e) acc[i][e] = acc[i][e] * fa + __shfl_xor_sync(kFull, acc[i][e], 16) * fb;
    if (half == 0) {
      float4* to = reinterpret_cast<float4*>(&s_acc[pw][g0 + i][sub * 8]);
      to[0] = make_float4(acc[i][0], acc[i][1], acc[i][2], acc[i][3]);
      to[1] = make_float4(acc[i][4], acc[i][5], acc[i][6], acc[i][7]);
    }
    if (lane == 0) s_m[pw][g0 + i] = top, s_l[pw][g0 + i] = l[i];
  }
  __syncthreads();
  for (int idx = threadIdx.x; idx < kGroup * head_dim; idx += kThreads) {
    const int g = idx / head_dim, d = idx % head_dim;
    float top = -INFINITY;
#pragma unroll
    for (int w = 0; w < kPageWarps; ++w) top = fmaxf(top, s_m[w][g]);
    float sum = 0.0f, out = 0.0f;
#pragma unroll
    for (int w = 0; w < kPageWarps; ++w) {
      const float f = Rescale(s_m[w][g], top);
      sum += s_l[w][g] * f;
      out += s_acc[w][g][d] * f;
    }
    const long at = static_cast<long>(c) * num_qo_heads + kh * kGroup + g;
    partial_out[at * head_dim + d] = out;
    if (d == 0) partial_ml[at] = make_float2(top, sum);
  }
}

// One warp per (request, query head): merges the chunks of its request.
constexpr int kMergeWarps = 4;

__global__ void __launch_bounds__(kMergeWarps * 32)
    merge_chunks(const int* __restrict__ kv_indptr, __nv_bfloat16* __restrict__ output, float* __restrict__ lse) {
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const long row = static_cast<long>(blockIdx.x) * kMergeWarps + warp;  // b * num_qo_heads + h
  if (row >= static_cast<long>(batch_size) * num_qo_heads) return;     // the whole warp
  const int b = static_cast<int>(row / num_qo_heads), h = static_cast<int>(row % num_qo_heads);
  const int first = ChunkStart(kv_indptr, b);
  const int n = ChunksOf(kv_indptr[b + 1] - kv_indptr[b]);
  float top = -INFINITY;
  for (int s = 0; s < n; ++s) top = fmaxf(top, partial_ml[static_cast<long>(first + s) * num_qo_heads + h].x);
  float sum = 0.0f;
  float4 out = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
  for (int s = 0; s < n; ++s) {
    const long at = static_cast<long>(first + s) * num_qo_heads + h;
    const float2 ml = partial_ml[at];
    const float f = Rescale(ml.x, top);
    const float4 a = reinterpret_cast<const float4*>(partial_out + at * head_dim)[lane];
    sum += ml.y * f;
    out = make_float4(out.x + a.x * f, out.y + a.y * f, out.z + a.z * f, out.w + a.w * f);
  }
  const bool empty = n == 0 || sum == 0.0f;  // a request without pages: zeros and -inf, as FlashInfer-Bench
  const float inv = empty ? 0.0f : 1.0f / sum;
  __nv_bfloat162* o = reinterpret_cast<__nv_bfloat162*>(output + row * head_dim + lane * 4);
  o[0] = __floats2bfloat162_rn(out.x * inv, out.y * inv);
  o[1] = __floats2bfloat162_rn(out.z * inv, out.w * inv);
  if (lane == 0) lse[row] = empty ? -INFINITY : top + log2f(sum);
}

extern "C" void kernel(const __nv_bfloat16* q, const __nv_bfloat16* k_cache, const __nv_bfloat16* v_cache,
                       const int* kv_indptr, const int* kv_indices, const float* sm_scale, __nv_bfloat16* output,
                       float* lse, cudaStream_t stream) {
  split_decode<<<dim3(num_kv_heads, kMaxChunks), kThreads, 0, stream>>>(q, k_cache, v_cache, kv_indptr, kv_indices,
                                                                        sm_scale);
  constexpr long kRows = static_cast<long>(batch_size) * num_qo_heads;
  merge_chunks<<<static_cast<unsigned>((kRows + kMergeWarps - 1) / kMergeWarps), kMergeWarps * 32, 0, stream>>>(
      kv_indptr, output, lse);
}
