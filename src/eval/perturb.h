#pragma once
/// Fresh inputs for every timed call, cheaply (DESIGN.md section 5).
///
/// A kernel that caches its result by pointer, by a hash of its inputs or by
/// call count must not gain from it, so no timed call sees inputs an earlier
/// call saw. Drawing a whole new set per call costs far more than most kernels;
/// instead each call gets one of the checked sets with the low 20 mantissa bits
/// of every normal value flipped by a mask drawn from a per-call seed. Sign and
/// exponent stay, so each value keeps its binade (a positive input stays
/// positive, a small one small) while changing by up to 12.5%: far more than
/// any task's tolerance, so an output computed for other inputs cannot pass.
/// Zeros, subnormals, infinities and NaN are left as they are.
///
/// The monitor computes these bits for every call, the candidate's and the reference's alike.

#include <cstdint>

namespace accelopt::eval {

/// The mantissa bits flipped: the low 20 of a float32 (the default), or the
/// low 4 of the 7 a bf16 keeps (bits 16-19 of its float32), so that a bf16
/// value stays one, changing by up to an eighth of its binade.
inline constexpr uint32_t kMantissaLow20 = 0x000FFFFFu;
inline constexpr uint32_t kMantissaBf16Low4 = 0x000F0000u;

/// The two halves of the 64-bit key of one (seed, stream): what
/// perturb_bits::Perturbed takes (the cuda harness gets them per call and input).
struct PerturbKey {
  uint32_t lo, hi;
};
PerturbKey PerturbKeyOf(uint64_t seed, uint64_t stream);

/// out[i] = base[i] with its mask applied; `stream` tells the inputs of one call
/// apart. One thread (vectorized), streaming stores. `bits` limits the flipped
/// bits (0: a copy).
void Perturb(const float* base, float* out, long n, uint64_t seed, uint64_t stream, uint32_t bits = kMantissaLow20);

/// The same for elements [begin, end) only (out and base are whole arrays), so
/// that parts of one array can be perturbed at once by several threads. The
/// results are written with streaming stores (eval/streaming.h): call
/// StreamFence() before another process reads them.
void PerturbRange(const float* base, float* out, long begin, long end, uint64_t seed, uint64_t stream,
                  uint32_t bits = kMantissaLow20);

}  // namespace accelopt::eval
