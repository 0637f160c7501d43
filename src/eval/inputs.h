#pragma once
/// eval: running a compiled kernel under the evaluator's rules (DESIGN.md section 5).
///
/// Random inputs that two processes can regenerate independently: the value of
/// element i depends only on (seed, stream, i), never on thread count or order,
/// so the reference child and the candidate child see identical inputs without
/// either of them seeing the other's memory.

#include <cstdint>

namespace accelopt::eval {

struct InputDistribution {
  bool normal = true;  ///< normal(a = mean, b = std) or uniform[a = low, b = high)
  double a = 0;
  double b = 1;
};

/// Fills out[0..n) for the given seed and stream (the input's index). Uses
/// OpenMP threads when the caller is built with OpenMP.
void FillRandom(float* out, long n, uint64_t seed, uint64_t stream, const InputDistribution& dist);

/// The value FillRandom puts at index i (for tests and spot checks).
float RandomValue(uint64_t seed, uint64_t stream, long i, const InputDistribution& dist);

}  // namespace accelopt::eval
