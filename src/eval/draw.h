#pragma once
/// A task's input values, by the input's declared distribution and element
/// type (docs/task-format.md, "Inputs"): random floats, constants, and the
/// integer structure of paged attention (offsets and page ids). Every value is
/// kept as a float32 the input's type represents exactly, so that the
/// reference (which reads float32) and a kernel (which reads the type) see the
/// same numbers.

#include <cstdint>

#include "suite/task.h"

namespace accelopt::eval {

/// Fills out[0..t.elements) with input `t`'s values for (seed, stream).
/// Random floats are drawn with their parameters times `scale` and, for bf16
/// inputs, rounded to bf16; constants are times `scale`; the integer
/// generators ignore it.
void DrawInput(const suite::BoundTensor& t, float* out, uint64_t seed, uint64_t stream, double scale = 1);

/// The mantissa bits a timed call's perturbation (eval/perturb.h) flips in
/// input `t`: the low 20 of a float32, the low 4 of a bf16's 7 (so the value
/// stays a bf16), none for constants and integers.
uint32_t PerturbMask(const suite::BoundTensor& t);

/// Elements [begin, end) of input `t` for a call whose inputs derive from a
/// drawn set (`base`, the whole array) by the call's seed: random inputs
/// perturbed (PerturbMask), constants copied, integer inputs (page tables)
/// drawn afresh from the seed, whole, by the part that holds element 0 (a
/// page table seen before would tell a checked call from a timed one).
/// Streaming stores: eval::StreamFence() before another process reads `out`.
void DeriveInput(const suite::BoundTensor& t, const float* base, float* out, long begin, long end, uint64_t seed,
                 uint64_t stream);

/// Round to nearest even bf16, kept as float32 (NaN stays NaN).
float RoundToBf16(float x);

}  // namespace accelopt::eval
