#include "eval/perturb.h"

#include "core/hash.h"
#include "eval/streaming.h"

namespace accelopt::eval {
namespace {

constexpr uint32_t kExponent = 0x7F800000u;

// A 32-bit avalanche hash: cheap enough per element to vectorize.
inline uint32_t Hash32(uint32_t x) {
  x ^= x >> 16;
  x *= 0x7feb352dU;
  x ^= x >> 15;
  x *= 0x846ca68bU;
  x ^= x >> 16;
  return x;
}

// Float bits read and written as integers without breaking aliasing rules.
using FloatBits = uint32_t __attribute__((may_alias));

// The two halves of the 64-bit key of one (seed, stream).
struct MaskKey {
  uint32_t lo, hi;
};

MaskKey KeyOf(uint64_t seed, uint64_t stream) {
  uint64_t key = SplitMix64(seed ^ SplitMix64(stream));
  return {static_cast<uint32_t>(key), static_cast<uint32_t>(key >> 32)};
}

inline uint32_t Perturbed(uint32_t bits, long i, MaskKey key, uint32_t flippable) {
  uint32_t exponent = bits & kExponent;
  uint32_t mask = (Hash32(static_cast<uint32_t>(i) + key.lo) ^ key.hi) & flippable;
  return bits ^ (exponent != 0 && exponent != kExponent ? mask : 0u);
}

}  // namespace

void Perturb(const float* base, float* out, long n, uint64_t seed, uint64_t stream, uint32_t bits) {
  PerturbRange(base, out, 0, n, seed, stream, bits);
}

void PerturbRange(const float* base, float* out, long begin, long end, uint64_t seed, uint64_t stream, uint32_t bits) {
  const MaskKey key = KeyOf(seed, stream);
  const FloatBits* in = reinterpret_cast<const FloatBits*>(base);
  // Computed into a block that stays in the first-level cache (vectorized),
  // then streamed out past the caches.
  constexpr long kBlock = 1024;
  alignas(64) uint32_t block[kBlock];
  for (long start = begin; start < end; start += kBlock) {
    const long len = end - start < kBlock ? end - start : kBlock;
#pragma omp simd
    for (long k = 0; k < len; ++k) block[k] = Perturbed(in[start + k], start + k, key, bits);
    StreamCopy(out + start, block, static_cast<size_t>(len) * sizeof(float));
  }
}

}  // namespace accelopt::eval
