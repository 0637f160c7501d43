#include "eval/inputs.h"

#include <cmath>

#include "core/hash.h"

namespace accelopt::eval {
namespace {

// Uniform in (0, 1]: never 0, so log() below is finite.
inline double Unit(uint64_t bits) { return (static_cast<double>(bits >> 11) + 1.0) * 0x1.0p-53; }
inline float UnitF(uint64_t bits) { return (static_cast<float>(bits >> 40) + 1.0f) * 0x1.0p-24f; }

inline uint64_t StreamKey(uint64_t seed, uint64_t stream) {
  return SplitMix64(seed ^ SplitMix64(stream + 0x51ed270b27e3ULL));
}

inline float Uniform(uint64_t key, long i, const InputDistribution& d) {
  double u = Unit(SplitMix64(key + static_cast<uint64_t>(i)));
  return static_cast<float>(d.a + (d.b - d.a) * (u - 0x1.0p-53));
}

// Box-Muller in float on the pair (2j, 2j+1): cos for the even element, sin for
// the odd. Float math is plenty for test inputs and several times faster.
inline void NormalPair(uint64_t key, long pair_start, const InputDistribution& d, float& even, float& odd) {
  uint64_t pair = static_cast<uint64_t>(pair_start);
  float r = std::sqrt(-2.0f * std::log(UnitF(SplitMix64(key + pair))));
  float theta = 6.28318530718f * UnitF(SplitMix64(key + pair + 1));
  even = static_cast<float>(d.a + d.b * (r * std::cos(theta)));
  odd = static_cast<float>(d.a + d.b * (r * std::sin(theta)));
}

}  // namespace

float RandomValue(uint64_t seed, uint64_t stream, long i, const InputDistribution& dist) {
  uint64_t key = StreamKey(seed, stream);
  if (!dist.normal) return Uniform(key, i, dist);
  float even, odd;
  NormalPair(key, i & ~1L, dist, even, odd);
  return (i & 1) ? odd : even;
}

void FillRandom(float* out, long n, uint64_t seed, uint64_t stream, const InputDistribution& dist) {
  uint64_t key = StreamKey(seed, stream);
  if (!dist.normal) {
#pragma omp parallel for schedule(static)
    for (long i = 0; i < n; ++i) out[i] = Uniform(key, i, dist);
    return;
  }
#pragma omp parallel for schedule(static)
  for (long j = 0; j < (n + 1) / 2; ++j) {
    float even, odd;
    NormalPair(key, 2 * j, dist, even, odd);
    out[2 * j] = even;
    if (2 * j + 1 < n) out[2 * j + 1] = odd;
  }
}

}  // namespace accelopt::eval
