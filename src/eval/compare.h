#pragma once
/// Comparing a candidate's float outputs with the reference's double outputs.
///
/// Two tests, both of which an output must pass. The relative L2 error over a
/// whole output stays within the task's tolerance (fp16 and bf16 arithmetic
/// fail it). And, where a float32 evaluation of the reference exists, every
/// element stays within a bound derived from float32 rounding of the task on
/// the same inputs: `scale` times (|ref32 - ref| + FLT_EPSILON |ref| + the RMS
/// of ref32 - ref over the output). Any honest float32 summation order, FMA
/// contraction or vectorized exp stays within a few times the rounding of one
/// float32 evaluation; a dropped or changed term larger than that rounding
/// (an AdamW step without its weight decay: 1e-5 relative, far below the L2
/// tolerance's reach) does not.

#include <cstddef>
#include <string>

#include "core/profile.h"
#include "suite/task.h"

namespace accelopt::eval {

/// How far an element may be from the reference, in units of its float32 rounding estimate.
inline constexpr double kElementBoundScale = 16;

/// Relative L2, max abs and non-finite counts. Accumulates in double. Thread-compatible.
ErrorStats CompareOutputs(const float* out, const double* ref, size_t n);

/// The RMS of ref32 - ref over one output: the typical float32 rounding of this
/// output, the bound's floor for elements whose own float32 evaluation happened
/// to be exact. A property of the reference alone: computed once per input set.
double RoundingFloor(const double* ref, const float* ref32, size_t n);

/// The same statistics and, in the same pass, the per-element check against
/// `ref32`, a float32 evaluation of the reference on the same inputs, with the
/// output's RoundingFloor.
ErrorStats CompareOutputs(const float* out, const double* ref, const float* ref32, size_t n, double floor,
                          double scale = kElementBoundScale);

/// FlashInfer-Bench's tolerances for bf16 outputs: an element fails only when
/// it is off by more than kBf16Atol and by more than kBf16Rtol times the reference.
inline constexpr double kBf16Atol = 1e-2;
inline constexpr double kBf16Rtol = 1e-2;

/// The L2 statistics and, in the same pass, each element against
/// max(atol, rtol |ref|): the per-element test of a bf16 output, whose own
/// rounding (2^-9 relative) is far above any float32 evaluation's.
ErrorStats CompareWithin(const float* out, const double* ref, size_t n, double atol = kBf16Atol,
                         double rtol = kBf16Rtol);

/// One output of a kernel against the reference: a bf16 output by
/// CompareWithin, a float32 one by the float32-rounding bound where `ref32`
/// (the reference's float32 evaluation) exists, else by the L2 statistics alone.
ErrorStats CompareOutput(const suite::BoundTensor& output, const float* out, const double* ref, const float* ref32,
                         double floor);

/// "" when an output's statistics pass (finite, relative L2 within
/// `tolerance`, every element within its bound); else why not, naming the
/// output and `label` (the call: "seed 2").
std::string JudgeOutput(const ErrorStats& e, const suite::BoundTensor& output, const std::string& label,
                        double tolerance);

/// Merges per-output (or per-seed) statistics: worst rel_l2, max_abs and ratio, summed counts.
ErrorStats Worst(const ErrorStats& a, const ErrorStats& b);

}  // namespace accelopt::eval
