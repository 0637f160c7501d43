// The read floor of the paged decode tasks (gqa_paged_decode_*), built and
// timed by bench/gpu_anchors.py beside the kernels, with the task's ABI and
// shape.h: it reads every page of k_cache and v_cache once, in page-table
// order, and nothing else but the page table, so no decode kernel can take
// less time than it.
//
// Warp w of W = batch_size * num_qo_heads warps takes the rows (pages) of the
// page table in [w * chunk, (w + 1) * chunk): its lanes load 32 page ids at a
// time with one coalesced read, then the warp reads kRows pages of k and of v
// at once, 16 bytes a lane a load, adding every 32-bit word to the lane's sum.
// The warp's sum is written as the bits of lse[w] (the other output is not
// written): the sum of the W words, modulo 2^32, is the sum of every word of
// the pages read, which the benchmark checks, so no read can be left out.
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdint>

namespace {

constexpr long kPageBytes = page_size * num_kv_heads * head_dim * 2;  // bf16
static_assert(kPageBytes % 16 == 0, "a page is read 16 bytes at a time");
constexpr int kVectors = kPageBytes / 16;        // 16-byte loads per page and tensor
constexpr int kPerLane = (kVectors + 31) / 32;   // of them, per lane
constexpr int kRows = kPerLane >= 8 ? 1 : 8 / kPerLane;  // pages in flight per warp: 16 loads a lane
constexpr long kPages = num_kv_indices;
constexpr long kWarps = batch_size * num_qo_heads;  // one lse word each
constexpr long kChunk = (kPages + kWarps - 1) / kWarps;
constexpr int kThreads = 256;

__device__ __forceinline__ unsigned WordSum(uint4 x) { return x.x + x.y + x.z + x.w; }

__global__ void __launch_bounds__(kThreads) read_floor(const uint4* __restrict__ k, const uint4* __restrict__ v,
                                                        const int* __restrict__ kv_indices,
                                                        unsigned* __restrict__ sums) {
  const long warp = (static_cast<long>(blockIdx.x) * kThreads + threadIdx.x) / 32;
  const int lane = threadIdx.x % 32;
  if (warp >= kWarps) return;  // whole warps only
  const long begin = warp * kChunk;
  const long end = begin + kChunk < kPages ? begin + kChunk : kPages;
  unsigned acc = 0;
  for (long base = begin; base < end; base += 32) {
    const int n = end - base < 32 ? static_cast<int>(end - base) : 32;
    const int mine = lane < n ? __ldg(kv_indices + base + lane) : 0;
    for (int i = 0; i < n; i += kRows) {
      // Every load is made, also for the rows past n (page 0, then not added), so that none waits on a branch.
      uint4 a[kRows][kPerLane], b[kRows][kPerLane];
#pragma unroll
      for (int r = 0; r < kRows; ++r) {
        const int page = __shfl_sync(0xffffffffu, mine, (i + r) & 31);  // a valid page id past n too
#pragma unroll
        for (int c = 0; c < kPerLane; ++c) {
          const int e = lane + 32 * c;
          const bool inside = kVectors % 32 == 0 || e < kVectors;
          a[r][c] = inside ? __ldg(k + static_cast<long>(page) * kVectors + e) : make_uint4(0, 0, 0, 0);
          b[r][c] = inside ? __ldg(v + static_cast<long>(page) * kVectors + e) : make_uint4(0, 0, 0, 0);
        }
      }
#pragma unroll
      for (int r = 0; r < kRows; ++r) {
        unsigned row = 0;
#pragma unroll
        for (int c = 0; c < kPerLane; ++c) row += WordSum(a[r][c]) + WordSum(b[r][c]);
        acc += i + r < n ? row : 0u;
      }
    }
  }
  for (int offset = 16; offset > 0; offset >>= 1) acc += __shfl_xor_sync(0xffffffffu, acc, offset);
  if (lane == 0) sums[warp] = acc;
}

}  // namespace

extern "C" void kernel(const __nv_bfloat16* q, const __nv_bfloat16* k_cache, const __nv_bfloat16* v_cache,
                       const int* kv_indptr, const int* kv_indices, const float* sm_scale, __nv_bfloat16* output,
                       float* lse, cudaStream_t stream) {
  (void)q, (void)kv_indptr, (void)sm_scale, (void)output;
  constexpr long blocks = (kWarps * 32 + kThreads - 1) / kThreads;
  read_floor<<<blocks, kThreads, 0, stream>>>(reinterpret_cast<const uint4*>(k_cache),
                                              reinterpret_cast<const uint4*>(v_cache), kv_indices,
                                              reinterpret_cast<unsigned*>(lse));
}
