// Flash-attention paged causal prefill for the
// gqa_paged_prefill_causal_h32_kv{4,8}_d128_ps1 tasks: a kernel of the
// project's own. One source for both tasks: everything follows from the shape
// constants.
//
// A block takes kRows = 64 rows of one (request, kv head): kQueries =
// 64 / group consecutive queries times the group's query heads, so each k/v
// tile gathered once serves every query head that reads it. The query tiles
// of the batch are numbered consecutively (request b has ceil(q_len_b /
// kQueries) of them) and each block finds its request by a warp scan over
// qo_indptr; the grid is (tile slot, kv head) with an upper bound of slots
// known from the shape, and the slots past the last tile exit at once. Within
// a request the tiles run last query first, the longest ones first.
//
// The block walks the kv positions its last query may see, kTileKv = 64 at a
// time (causal tile skipping: the tiles past them are never loaded). Each
// tile's k and v rows are gathered through the page table into shared memory
// with 16-byte cp.async (rows past the visible range are zero-filled), k and v
// as separate groups so that v(t) and k(t+1) load while the tile before them
// is computed. Each of the 4 warps owns 16 rows: s = q k^T with bf16
// mma.sync.m16n8k16 (q fragments in registers, k fragments by ldmatrix), fp32
// accumulation; the causal mask (query i sees kv j <= i + kv_len - q_len,
// bottom-right aligned) only on tiles that cross it; an online softmax in base
// 2 on the accumulator fragments; then o += p v with p packed to bf16 as the
// A fragment and v fragments by ldmatrix.trans. Rows that see nothing get
// zeros and -inf, as FlashInfer-Bench.
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdint>

static_assert(page_size == 1 && head_dim == 128, "pages of one token; head_dim 128");
static_assert(num_qo_heads % num_kv_heads == 0, "query heads grouped over kv heads");

constexpr int kGroup = num_qo_heads / num_kv_heads;
constexpr int kBatch = static_cast<int>(len_indptr - 1);
constexpr int kRows = 64;  // (query, head) rows per block, 16 per warp
static_assert(kRows % kGroup == 0, "a block holds whole groups");
constexpr int kQueries = kRows / kGroup;  // queries per block
constexpr int kWarps = 4;
constexpr int kThreads = kWarps * 32;
constexpr int kTileKv = 64;            // kv positions per tile
constexpr int kStride = head_dim + 8;  // shared row stride in bf16: 272 bytes, no bank conflicts
constexpr int kSteps = head_dim / 16;  // mma k-steps over head_dim
constexpr int kMaxTiles = static_cast<int>(total_q / kQueries + kBatch);
static_assert(kMaxTiles <= 2147483647 && num_kv_heads <= 65535, "grid fits");
constexpr float kLog2e = 1.4426950408889634f;
constexpr unsigned kFull = 0xffffffffu;

__device__ __forceinline__ int TilesOf(int q_len) { return q_len > 0 ? (q_len + kQueries - 1) / kQueries : 0; }

// The request holding query tile `c` and the number of its first tile;
// kBatch when `c` is past the last tile. All 32 lanes call it.
__device__ void FindTile(const int* __restrict__ qo_indptr, int c, int& b_out, int& first_out) {
  const int lane = threadIdx.x % 32;
  int base = 0;
  for (int b0 = 0; b0 < kBatch; b0 += 32) {
    const int b = b0 + lane;
    const int n = b < kBatch ? TilesOf(qo_indptr[b + 1] - qo_indptr[b]) : 0;
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
  b_out = kBatch;
  first_out = base;
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

__global__ void __launch_bounds__(kThreads)
    prefill(const __nv_bfloat16* __restrict__ q, const __nv_bfloat16* __restrict__ k_cache,
            const __nv_bfloat16* __restrict__ v_cache, const int* __restrict__ qo_indptr,
            const int* __restrict__ kv_indptr, const int* __restrict__ kv_indices, const float* __restrict__ sm_scale,
            __nv_bfloat16* __restrict__ output, float* __restrict__ lse) {
  __shared__ __align__(16) __nv_bfloat16 ks[kTileKv][kStride];
  __shared__ __align__(16) __nv_bfloat16 vs[kTileKv][kStride];

  const int c = blockIdx.x, kh = blockIdx.y;
  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
  const int gq = lane / 4, tq = lane % 4;  // the mma fragment's row group and column pair
  int b, first;
  FindTile(qo_indptr, c, b, first);  // the same answer in every warp
  if (b >= kBatch) return;           // a slot past the last tile: the whole block leaves
  const int q_begin = qo_indptr[b], q_len = qo_indptr[b + 1] - q_begin;
  const int kv_begin = kv_indptr[b], kv_len = kv_indptr[b + 1] - kv_begin;
  const int i0 = (TilesOf(q_len) - 1 - (c - first)) * kQueries;  // the last queries first
  const int i_end = min(i0 + kQueries, q_len);
  const int shift = kv_len - q_len;                     // query i sees kv j <= i + shift
  const int n_kv = max(0, min(kv_len, i_end + shift));  // positions any row of the block sees
  const int n_tiles = (n_kv + kTileKv - 1) / kTileKv;
  const float scale = *sm_scale * kLog2e;

  // This thread's two rows (gq and gq + 8 of the warp's 16): query, head, visibility.
  int query[2], head[2], limit[2];
#pragma unroll
  for (int rr = 0; rr < 2; ++rr) {
    const int r = warp * 16 + gq + 8 * rr;
    query[rr] = i0 + r / kGroup;
    head[rr] = kh * kGroup + r % kGroup;
    limit[rr] = query[rr] + shift;
  }

  // q as A fragments: a0 (row gq, k 2tq..), a1 (row gq+8), a2 (row gq, k 2tq+8..), a3 (row gq+8, k 2tq+8..).
  uint32_t qa[kSteps][4];
#pragma unroll
  for (int rr = 0; rr < 2; ++rr) {
    const bool valid = query[rr] < q_len;
    const __nv_bfloat16* row =
        q + (static_cast<long>(q_begin + (valid ? query[rr] : 0)) * num_qo_heads + head[rr]) * head_dim + 2 * tq;
#pragma unroll
    for (int s = 0; s < kSteps; ++s) {
      qa[s][rr] = valid ? __ldg(reinterpret_cast<const unsigned*>(row + s * 16)) : 0u;
      qa[s][2 + rr] = valid ? __ldg(reinterpret_cast<const unsigned*>(row + s * 16 + 8)) : 0u;
    }
  }

  // Gathering: thread tid copies 16-byte column tid % 16 of tile rows tid / 16 + 8 i.
  constexpr int kCopies = kTileKv * head_dim / 8 / kThreads;  // 8
  static_assert(kCopies * kThreads * 8 == kTileKv * head_dim && kThreads % 16 == 0, "whole 16-byte copies");
  const int copy_row = tid / 16, copy_col = (tid % 16) * 8;
  int page[kCopies];
  auto load_pages = [&](int t) {
#pragma unroll
    for (int i = 0; i < kCopies; ++i) {
      const int j = t * kTileKv + copy_row + i * (kThreads / 16);
      page[i] = j < n_kv ? __ldg(kv_indices + kv_begin + j) : -1;
    }
  };
  auto issue = [&](__nv_bfloat16(*to)[kStride], const __nv_bfloat16* cache) {
#pragma unroll
    for (int i = 0; i < kCopies; ++i) {
      const bool valid = page[i] >= 0;
      const __nv_bfloat16* from =
          cache + (valid ? (static_cast<long>(page[i]) * num_kv_heads + kh) * head_dim + copy_col : 0);
      CopyAsync16(&to[copy_row + i * (kThreads / 16)][copy_col], from, valid ? 16 : 0);
    }
  };

  float o[head_dim / 8][4];
#pragma unroll
  for (int n = 0; n < head_dim / 8; ++n) o[n][0] = o[n][1] = o[n][2] = o[n][3] = 0.0f;
  float m[2] = {-INFINITY, -INFINITY}, l[2] = {0.0f, 0.0f};

  if (n_tiles > 0) {
    load_pages(0);
    issue(ks, k_cache);
    CommitGroup();
    issue(vs, v_cache);
    CommitGroup();
  }
  for (int t = 0; t < n_tiles; ++t) {
    const bool more = t + 1 < n_tiles;
    if (more) load_pages(t + 1);
    WaitAllButLatestGroup();  // k(t); v(t) may still load
    __syncthreads();

    // s = q k^T for the warp's 16 rows and the tile's 64 positions.
    float s[kTileKv / 8][4];
#pragma unroll
    for (int n = 0; n < kTileKv / 8; ++n) s[n][0] = s[n][1] = s[n][2] = s[n][3] = 0.0f;
#pragma unroll
    for (int s2 = 0; s2 < kSteps / 2; ++s2) {
#pragma unroll
      for (int n = 0; n < kTileKv / 8; ++n) {
        uint32_t kb[4];  // b0, b1 of k-step 2 s2, then of k-step 2 s2 + 1
        LoadMatrices(&ks[n * 8 + lane % 8][s2 * 32 + (lane / 8) * 8], kb);
        Mma(s[n], qa[2 * s2], kb[0], kb[1]);
        Mma(s[n], qa[2 * s2 + 1], kb[2], kb[3]);
      }
    }
    __syncthreads();  // every warp is done with k(t)
    if (more) issue(ks, k_cache);
    CommitGroup();  // possibly empty: keeps the group count uniform

    // Online softmax in base 2 on the fragments: s[n][0..1] row gq, s[n][2..3] row gq + 8,
    // positions t * kTileKv + n * 8 + 2 tq (+1).
    const bool masked = t * kTileKv + kTileKv - 1 > i0 + shift;  // some position past some row's limit
#pragma unroll
    for (int rr = 0; rr < 2; ++rr) {
      float top = -INFINITY;
#pragma unroll
      for (int n = 0; n < kTileKv / 8; ++n)
#pragma unroll
        for (int e = 0; e < 2; ++e) {
          float x = s[n][2 * rr + e] * scale;
          if (masked && t * kTileKv + n * 8 + 2 * tq + e > limit[rr]) x = -INFINITY;
          s[n][2 * rr + e] = x;
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
      for (int n = 0; n < kTileKv / 8; ++n)
#pragma unroll
        for (int e = 0; e < 2; ++e) sum += s[n][2 * rr + e] = exp2f(s[n][2 * rr + e] - safe);
      l[rr] = l[rr] * corr + sum;  // this thread's share of the row; the quad is summed at the end
#pragma unroll
      for (int n = 0; n < head_dim / 8; ++n) o[n][2 * rr] *= corr, o[n][2 * rr + 1] *= corr;
    }

    WaitAllButLatestGroup();  // v(t); k(t + 1) may still load
    __syncthreads();
    // o += p v: p's accumulator fragments are the A fragments of the next mma.
#pragma unroll
    for (int kk = 0; kk < kTileKv / 16; ++kk) {
      const uint32_t pa[4] = {PackBf16(s[2 * kk][0], s[2 * kk][1]), PackBf16(s[2 * kk][2], s[2 * kk][3]),
                              PackBf16(s[2 * kk + 1][0], s[2 * kk + 1][1]),
                              PackBf16(s[2 * kk + 1][2], s[2 * kk + 1][3])};
#pragma unroll
      for (int n2 = 0; n2 < head_dim / 16; ++n2) {
        uint32_t vb[4];  // b0, b1 of dims n2 * 16 .. +8, then of n2 * 16 + 8 .. +16
        LoadMatricesTransposed(&vs[kk * 16 + lane % 8 + ((lane / 8) % 2) * 8][n2 * 16 + (lane / 16) * 8], vb);
        Mma(o[2 * n2], pa, vb[0], vb[1]);
        Mma(o[2 * n2 + 1], pa, vb[2], vb[3]);
      }
    }
    __syncthreads();  // every warp is done with v(t)
    if (more) issue(vs, v_cache);
    CommitGroup();
  }

#pragma unroll
  for (int rr = 0; rr < 2; ++rr) {
    l[rr] += __shfl_xor_sync(kFull, l[rr], 1);
    l[rr] += __shfl_xor_sync(kFull, l[rr], 2);
    if (query[rr] >= q_len) continue;
    const bool empty = l[rr] == 0.0f;  // nothing visible: zeros and -inf, as FlashInfer-Bench
    const float inv = empty ? 0.0f : 1.0f / l[rr];
    const long row = static_cast<long>(q_begin + query[rr]) * num_qo_heads + head[rr];
    __nv_bfloat16* out = output + row * head_dim + 2 * tq;
#pragma unroll
    for (int n = 0; n < head_dim / 8; ++n)
      *reinterpret_cast<__nv_bfloat162*>(out + n * 8) =
          __floats2bfloat162_rn(o[n][2 * rr] * inv, o[n][2 * rr + 1] * inv);
    if (tq == 0) lse[row] = empty ? -INFINITY : m[rr] + log2f(l[rr]);
  }
}

extern "C" void kernel(const __nv_bfloat16* q, const __nv_bfloat16* k_cache, const __nv_bfloat16* v_cache,
                       const int* qo_indptr, const int* kv_indptr, const int* kv_indices, const float* sm_scale,
                       __nv_bfloat16* output, float* lse, cudaStream_t stream) {
  prefill<<<dim3(kMaxTiles, num_kv_heads), kThreads, 0, stream>>>(q, k_cache, v_cache, qo_indptr, kv_indptr, kv_indices,
                                                                  sm_scale, output, lse);
}
