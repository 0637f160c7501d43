#include "eval/perturb.h"

#include "core/hash.h"
#include "eval/perturb_bits.h"
#include "eval/streaming.h"

namespace accelopt::eval {
namespace {

// Float bits read and written as integers without breaking aliasing rules.
using FloatBits = uint32_t __attribute__((may_alias));

}  // namespace

PerturbKey PerturbKeyOf(uint64_t seed, uint64_t stream) {
  const uint64_t key = SplitMix64(seed ^ SplitMix64(stream));
  return {static_cast<uint32_t>(key), static_cast<uint32_t>(key >> 32)};
}

void Perturb(const float* base, float* out, long n, uint64_t seed, uint64_t stream, uint32_t bits) {
  PerturbRange(base, out, 0, n, seed, stream, bits);
}

void PerturbRange(const float* base, float* out, long begin, long end, uint64_t seed, uint64_t stream, uint32_t bits) {
  const PerturbKey key = PerturbKeyOf(seed, stream);
  const FloatBits* in = reinterpret_cast<const FloatBits*>(base);
  // Computed into a block that stays in the first-level cache (vectorized),
  // then streamed out past the caches.
  constexpr long kBlock = 1024;
  alignas(64) uint32_t block[kBlock];
  for (long start = begin; start < end; start += kBlock) {
    const long len = end - start < kBlock ? end - start : kBlock;
#pragma omp simd
    for (long k = 0; k < len; ++k) block[k] = perturb_bits::Perturbed(in[start + k], start + k, key.lo, key.hi, bits);
    StreamCopy(out + start, block, static_cast<size_t>(len) * sizeof(float));
  }
}

}  // namespace accelopt::eval
