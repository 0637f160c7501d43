#include "eval/draw.h"

#include <bit>
#include <cmath>
#include <numeric>
#include <random>
#include <vector>

#include "core/hash.h"
#include "eval/inputs.h"
#include "eval/perturb.h"

namespace accelopt::eval {
namespace {

// A generator seeded by (seed, stream) alone.
std::mt19937_64 Generator(uint64_t seed, uint64_t stream) {
  return std::mt19937_64(SplitMix64(seed ^ SplitMix64(stream)));
}

// Offsets 0 = o_0 <= ... <= o_P = total of P segments, each at least `least`
// long. What is left over is shared out in proportion to weights drawn
// uniformly from [1 - spread, 1 + spread]: lengths as unequal as a batch of
// requests, their total fixed (so the roofline of the task is).
void DrawIndptr(const suite::BoundTensor& t, float* out, uint64_t seed, uint64_t stream) {
  const long parts = t.elements - 1;
  std::mt19937_64 rng = Generator(seed, stream);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  std::vector<double> cumulative(static_cast<size_t>(parts) + 1, 0.0);
  for (long p = 0; p < parts; ++p) cumulative[p + 1] = cumulative[p] + 1.0 + t.dist.spread * (2.0 * unit(rng) - 1.0);
  const long spare = t.total - parts * t.least;
  for (long p = 0; p <= parts; ++p) {
    const long share = p == parts ? spare : static_cast<long>(std::floor(spare * (cumulative[p] / cumulative[parts])));
    out[p] = static_cast<float>(p * t.least + share);
  }
}

// Distinct page ids drawn at random from [0, pages): the first elements of a
// partial Fisher-Yates shuffle.
void DrawPages(const suite::BoundTensor& t, float* out, uint64_t seed, uint64_t stream) {
  std::vector<int32_t> ids(static_cast<size_t>(t.pages));
  std::iota(ids.begin(), ids.end(), 0);
  std::mt19937_64 rng = Generator(seed, stream);
  for (long i = 0; i < t.elements; ++i) {
    std::uniform_int_distribution<long> pick(i, t.pages - 1);
    std::swap(ids[i], ids[pick(rng)]);
    out[i] = static_cast<float>(ids[i]);
  }
}

}  // namespace

float RoundToBf16(float x) {
  if (std::isnan(x)) return x;
  uint32_t bits = std::bit_cast<uint32_t>(x);
  bits += 0x7fffu + ((bits >> 16) & 1u);
  return std::bit_cast<float>(bits & 0xffff0000u);
}

void DrawInput(const suite::BoundTensor& t, float* out, uint64_t seed, uint64_t stream, double scale) {
  const auto& d = t.dist;
  if (d.kind == "indptr") return DrawIndptr(t, out, seed, stream);
  if (d.kind == "pages") return DrawPages(t, out, seed, stream);
  if (d.kind == "constant") {
    std::fill(out, out + t.elements, static_cast<float>(scale * d.a));
  } else {
    FillRandom(out, t.elements, seed, stream, {d.kind == "normal", scale * d.a, scale * d.b});
  }
  if (t.dtype == suite::DType::kBf16)
    for (long i = 0; i < t.elements; ++i) out[i] = RoundToBf16(out[i]);
}

void DeriveInput(const suite::BoundTensor& t, const float* base, float* out, long begin, long end, uint64_t seed,
                 uint64_t stream) {
  if (t.dtype == suite::DType::kInt32) {
    if (begin == 0) DrawInput(t, out, seed, stream);
    return;
  }
  PerturbRange(base, out, begin, end, seed, stream, PerturbMask(t));
}

uint32_t PerturbMask(const suite::BoundTensor& t) {
  if (!t.dist.random()) return 0;
  return t.dtype == suite::DType::kBf16 ? kMantissaBf16Low4 : kMantissaLow20;
}

}  // namespace accelopt::eval
