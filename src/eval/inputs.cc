#include "eval/inputs.h"

#include <cmath>

namespace accelopt::eval {
namespace {

// SplitMix64 finalizer: a good 64-bit mix, cheap enough for tens of millions of elements.
inline uint64_t Mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// Uniform in (0, 1]: never 0, so log() below is finite.
inline double Unit(uint64_t bits) { return (static_cast<double>(bits >> 11) + 1.0) * 0x1.0p-53; }

}  // namespace

float RandomValue(uint64_t seed, uint64_t stream, long i, const InputDistribution& dist) {
  uint64_t key = Mix(seed ^ Mix(stream + 0x51ed270b27e3ULL));
  if (!dist.normal) {
    double u = Unit(Mix(key + static_cast<uint64_t>(i)));
    return static_cast<float>(dist.a + (dist.b - dist.a) * (u - 0x1.0p-53));
  }
  // Box-Muller on the pair (2j, 2j+1): cos for the even element, sin for the odd.
  uint64_t pair = static_cast<uint64_t>(i) & ~uint64_t{1};
  double r = std::sqrt(-2.0 * std::log(Unit(Mix(key + pair))));
  double theta = 2.0 * M_PI * Unit(Mix(key + pair + 1));
  double z = (i & 1) ? r * std::sin(theta) : r * std::cos(theta);
  return static_cast<float>(dist.a + dist.b * z);
}

void FillRandom(float* out, long n, uint64_t seed, uint64_t stream, const InputDistribution& dist) {
#pragma omp parallel for schedule(static)
  for (long i = 0; i < n; ++i) out[i] = RandomValue(seed, stream, i, dist);
}

}  // namespace accelopt::eval
