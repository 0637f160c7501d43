// Split-KV paged decode (the flash-decoding scheme) on tensor cores for the
// gqa_paged_decode_h32_kv{4,8}_d128_ps1 tasks: a kernel of the project's own,
// measured beside the naive baseline and the anchors. One source for both
// tasks: everything follows from the shape constants.
//
// Work is cut into chunks of at most kChunk pages: request b holds
// ceil(len_b / kChunk) of them, numbered consecutively over the batch, so every
// block gets about the same work whatever the spread of the lengths. The grid
// is (kv head, chunk slot) with kMaxChunks slots, an upper bound known from the
// shape (num_kv_indices / kChunk + batch_size); each block finds its request
// by a warp scan over kv_indptr, and the slots past the last chunk exit at once.
//
// A block takes one (chunk, kv head). The chunk's page ids go to shared memory
// first; then tiles of kTile = 64 pages are gathered through them with 16-byte
// cp.async into a two-stage ring (the next tile loads while one is computed;
// rows past the chunk are zero-filled), so the block always has loads in
// flight. Each of the 4 warps takes 16 pages of a tile: the group's query heads
// are the rows of a bf16 mma.sync m16n8k16 (kGroup of its 16 rows used: 8 for
// kv4, 4 for kv8), s = q k^T with k fragments by ldmatrix, then an online
// softmax in base 2 on the accumulator fragments, then o += p v with p packed
// to bf16 as the A fragment and v fragments by ldmatrix.trans, fp32
// accumulation throughout.
// The warps of a block merge their states through shared memory and write the
// chunk's state (maximum, sum, unnormalized output per query head); a second
// small kernel merges the chunks of each (request, query head) into the output
// and the lse. A request without pages gets zeros and -inf.
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdint>

static_assert(page_size == 1 && head_dim == 128, "pages of one token; head_dim 128");
static_assert(num_qo_heads % num_kv_heads == 0, "query heads grouped over kv heads");

constexpr int kGroup = num_qo_heads / num_kv_heads;
static_assert(kGroup <= 16, "the group's heads are the 16 rows of an mma tile");
constexpr int kWarps = 4;
constexpr int kThreads = kWarps * 32;
constexpr int kTile = 64;    // pages per tile, 16 per warp
constexpr int kStages = 2;   // tiles in the shared-memory ring
constexpr int kChunk = 768;  // pages per block at most
static_assert(kChunk % kTile == 0, "whole tiles per chunk");
constexpr int kStride = head_dim + 8;  // shared row stride in bf16: 272 bytes, no bank conflicts
constexpr int kSteps = head_dim / 16;  // mma k-steps over head_dim
constexpr int kStageElems = kTile * kStride;
constexpr int kSmemBytes = 2 * kStages * kStageElems * 2;  // k and v
static_assert(kSmemBytes >= (kWarps * kGroup * head_dim + 2 * kWarps * 16) * 4, "the merge fits the ring");
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

__device__ __forceinline__ unsigned SharedAddress(const void* p) {
  return static_cast<unsigned>(__cvta_generic_to_shared(p));
}

// 16 bytes from global to shared; zeros when `bytes` is 0 (nothing is read).
__device__ __forceinline__ void CopyAsync16(void* dst, const void* src, int bytes) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(SharedAddress(dst)), "l"(src), "r"(bytes)
               : "memory");
}
__device__ __forceinline__ void CommitGroup() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
// Waits until at most one group (the latest) is still loading.
__device__ __forceinline__ void WaitAllButLatestGroup() { asm volatile("cp.async.wait_group 1;\n" ::: "memory"); }

__device__ __forceinline__ void LoadMatrices(const void* at, uint32_t (&r)[4]) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(SharedAddress(at))
               : "memory");
}
__device__ __forceinline__ void LoadMatricesTransposed(const void* at, uint32_t (&r)[4]) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(SharedAddress(at))
               : "memory");
}

// d += a b for one m16n8k16 bf16 tile, fp32 accumulation.
__device__ __forceinline__ void Mma(float (&d)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
      "{%0, %1, %2, %3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

__device__ __forceinline__ uint32_t PackBf16(float lo, float hi) {
  const __nv_bfloat162 v = __floats2bfloat162_rn(lo, hi);  // lo in the low half
  return *reinterpret_cast<const uint32_t*>(&v);
}

// The weight of a state with maximum `m` in a merge whose maximum is `top`.
__device__ __forceinline__ float Rescale(float m, float top) { return m == -INFINITY ? 0.0f : exp2f(m - top); }

__global__ void __launch_bounds__(kThreads)
    split_decode(const __nv_bfloat16* __restrict__ q, const __nv_bfloat16* __restrict__ k_cache,
                 const __nv_bfloat16* __restrict__ v_cache, const int* __restrict__ kv_indptr,
                 const int* __restrict__ kv_indices, const float* __restrict__ sm_scale) {
  extern __shared__ __align__(16) unsigned char smem[];
  __nv_bfloat16(*ks)[kTile][kStride] = reinterpret_cast<__nv_bfloat16(*)[kTile][kStride]>(smem);
  __nv_bfloat16(*vs)[kTile][kStride] = reinterpret_cast<__nv_bfloat16(*)[kTile][kStride]>(smem + kSmemBytes / 2);
  __shared__ int s_page[kChunk];

  const int kh = blockIdx.x, c = blockIdx.y;
  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
  const int gq = lane / 4, tq = lane % 4;  // the mma fragment's row group and column pair
  int b, first;
  FindChunk(kv_indptr, c, b, first);  // the same answer in every warp
  if (b >= batch_size) return;        // a slot past the last chunk: the whole block leaves
  const int lo = kv_indptr[b] + (c - first) * kChunk;
  const int n = min(kChunk, kv_indptr[b + 1] - lo);  // 1 .. kChunk pages
  const int n_tiles = (n + kTile - 1) / kTile;
  for (int i = tid; i < n; i += kThreads) s_page[i] = __ldg(kv_indices + lo + i);

  // q as A fragments, rows = the group's heads: a0 (row gq, k 2tq..), a1 (row gq+8),
  // a2 (row gq, k 2tq+8..), a3 (row gq+8, k 2tq+8..); rows past the group are zero.
  uint32_t qa[kSteps][4];
#pragma unroll
  for (int rr = 0; rr < 2; ++rr) {
    const int r = gq + 8 * rr;
    const bool valid = r < kGroup;
    const __nv_bfloat16* row =
        q + (static_cast<long>(b) * num_qo_heads + kh * kGroup + (valid ? r : 0)) * head_dim + 2 * tq;
#pragma unroll
    for (int s = 0; s < kSteps; ++s) {
      qa[s][rr] = valid ? __ldg(reinterpret_cast<const unsigned*>(row + s * 16)) : 0u;
      qa[s][2 + rr] = valid ? __ldg(reinterpret_cast<const unsigned*>(row + s * 16 + 8)) : 0u;
    }
  }
  const float scale = *sm_scale * kLog2e;

  // Gathering: thread tid copies 16-byte column tid % 16 of tile rows tid / 16 + 8 i, of k and of v.
  constexpr int kCopies = kTile * head_dim / 8 / kThreads;  // 8
  static_assert(kCopies * kThreads * 8 == kTile * head_dim && kThreads % 16 == 0, "whole 16-byte copies");
  const int copy_row = tid / 16, copy_col = (tid % 16) * 8;
  auto issue = [&](int t, int stage) {
#pragma unroll
    for (int i = 0; i < kCopies; ++i) {
      const int r = copy_row + i * (kThreads / 16), j = t * kTile + r;
      const bool valid = j < n;
      const long at = valid ? (static_cast<long>(s_page[j]) * num_kv_heads + kh) * head_dim + copy_col : 0;
      CopyAsync16(&ks[stage][r][copy_col], k_cache + at, valid ? 16 : 0);
      CopyAsync16(&vs[stage][r][copy_col], v_cache + at, valid ? 16 : 0);
    }
  };

  float o[head_dim / 8][4];
#pragma unroll
  for (int d = 0; d < head_dim / 8; ++d) o[d][0] = o[d][1] = o[d][2] = o[d][3] = 0.0f;
  float m[2] = {-INFINITY, -INFINITY}, l[2] = {0.0f, 0.0f};

  __syncthreads();  // s_page is written
  issue(0, 0);      // n >= 1: at least one tile
  CommitGroup();
  if (n_tiles > 1) issue(1, 1);
  CommitGroup();  // possibly empty: keeps the group count uniform
  for (int t = 0; t < n_tiles; ++t) {
    const int stage = t % kStages;
    WaitAllButLatestGroup();  // tile t; tile t + 1 may still load
    __syncthreads();

    // s = q k^T for the warp's 16 pages of the tile: s[n][0..1] row gq, s[n][2..3] row gq + 8,
    // pages warp * 16 + n * 8 + 2 tq (+1).
    const int p0 = warp * 16;
    float s[2][4];
#pragma unroll
    for (int nt = 0; nt < 2; ++nt) {
      s[nt][0] = s[nt][1] = s[nt][2] = s[nt][3] = 0.0f;
#pragma unroll
      for (int s2 = 0; s2 < kSteps / 2; ++s2) {
        uint32_t kb[4];  // b0, b1 of k-step 2 s2, then of k-step 2 s2 + 1
        LoadMatrices(&ks[stage][p0 + nt * 8 + lane % 8][s2 * 32 + (lane / 8) * 8], kb);
        Mma(s[nt], qa[2 * s2], kb[0], kb[1]);
        Mma(s[nt], qa[2 * s2 + 1], kb[2], kb[3]);
      }
    }
    // Online softmax in base 2 on the fragments; pages past the chunk are masked.
#pragma unroll
    for (int rr = 0; rr < 2; ++rr) {
      float top = -INFINITY;
#pragma unroll
      for (int nt = 0; nt < 2; ++nt)
#pragma unroll
        for (int e = 0; e < 2; ++e) {
          float x = s[nt][2 * rr + e] * scale;
          if (t * kTile + p0 + nt * 8 + 2 * tq + e >= n) x = -INFINITY;
          s[nt][2 * rr + e] = x;
          top = fmaxf(top, x);
        }
      top = fmaxf(top, __shfl_xor_sync(kFull, top, 1));
      top = fmaxf(top, __shfl_xor_sync(kFull, top, 2));
      top = fmaxf(top, m[rr]);
      const float safe = top == -INFINITY ? 0.0f : top;  // nothing seen yet: every weight is 0
      const float corr = exp2f(m[rr] - safe);
      m[rr] = top;
      float sum = 0.0f;
#pragma unroll
      for (int nt = 0; nt < 2; ++nt)
#pragma unroll
        for (int e = 0; e < 2; ++e) sum += s[nt][2 * rr + e] = exp2f(s[nt][2 * rr + e] - safe);
      l[rr] = l[rr] * corr + sum;  // this thread's share of the row; the quad is summed at the end
#pragma unroll
      for (int d = 0; d < head_dim / 8; ++d) o[d][2 * rr] *= corr, o[d][2 * rr + 1] *= corr;
    }
    // o += p v over the warp's 16 pages: p's accumulator fragments are the A fragment.
    const uint32_t pa[4] = {PackBf16(s[0][0], s[0][1]), PackBf16(s[0][2], s[0][3]), PackBf16(s[1][0], s[1][1]),
                            PackBf16(s[1][2], s[1][3])};
#pragma unroll
    for (int n2 = 0; n2 < head_dim / 16; ++n2) {
      uint32_t vb[4];  // b0, b1 of dims n2 * 16 .. +8, then of n2 * 16 + 8 .. +16
      LoadMatricesTransposed(&vs[stage][p0 + lane % 8 + ((lane / 8) % 2) * 8][n2 * 16 + (lane / 16) * 8], vb);
      Mma(o[2 * n2], pa, vb[0], vb[1]);
      Mma(o[2 * n2 + 1], pa, vb[2], vb[3]);
    }
    __syncthreads();  // every warp is done with this stage
    if (t + kStages < n_tiles) issue(t + kStages, stage);
    CommitGroup();
  }
  asm volatile("cp.async.wait_all;\n" ::: "memory");  // only empty groups are left; the ring is reused below
  __syncthreads();

  // The warps' states through shared memory (reusing the ring), then the chunk's.
  float* s_acc = reinterpret_cast<float*>(smem);    // [kWarps][kGroup][head_dim]
  float* s_m = s_acc + kWarps * kGroup * head_dim;  // [kWarps][16]
  float* s_l = s_m + kWarps * 16;                   // [kWarps][16]
#pragma unroll
  for (int rr = 0; rr < 2; ++rr) {
    l[rr] += __shfl_xor_sync(kFull, l[rr], 1);
    l[rr] += __shfl_xor_sync(kFull, l[rr], 2);
    const int g = gq + 8 * rr;
    if (g >= kGroup) continue;
    float* to = s_acc + (warp * kGroup + g) * head_dim + 2 * tq;
#pragma unroll
    for (int d = 0; d < head_dim / 8; ++d)
      *reinterpret_cast<float2*>(to + d * 8) = make_float2(o[d][2 * rr], o[d][2 * rr + 1]);
    if (tq == 0) s_m[warp * 16 + g] = m[rr], s_l[warp * 16 + g] = l[rr];
  }
  __syncthreads();
  for (int idx = tid; idx < kGroup * head_dim; idx += kThreads) {
    const int g = idx / head_dim, d = idx % head_dim;
    float top = -INFINITY;
#pragma unroll
    for (int w = 0; w < kWarps; ++w) top = fmaxf(top, s_m[w * 16 + g]);
    float sum = 0.0f, out = 0.0f;
#pragma unroll
    for (int w = 0; w < kWarps; ++w) {
      const float f = Rescale(s_m[w * 16 + g], top);
      sum += s_l[w * 16 + g] * f;
      out += s_acc[(w * kGroup + g) * head_dim + d] * f;
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
  if (row >= static_cast<long>(batch_size) * num_qo_heads) return;      // the whole warp
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
  static const bool configured =  // more than 48 KiB of dynamic shared memory, once
      cudaFuncSetAttribute(split_decode, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmemBytes) == cudaSuccess;
  (void)configured;
  split_decode<<<dim3(num_kv_heads, kMaxChunks), kThreads, kSmemBytes, stream>>>(q, k_cache, v_cache, kv_indptr,
                                                                                 kv_indices, sm_scale);
  constexpr long kRows = static_cast<long>(batch_size) * num_qo_heads;
  merge_chunks<<<static_cast<unsigned>((kRows + kMergeWarps - 1) / kMergeWarps), kMergeWarps * 32, 0, stream>>>(
      kv_indptr, output, lse);
}
