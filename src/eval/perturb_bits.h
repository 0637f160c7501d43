#pragma once
/// The bits of one perturbed value (eval/perturb.h), written once for the
/// host and the GPU: the engine's reference inputs and the cuda harness's
/// device copy of a call's inputs come from this same code, so a checked
/// call's inputs are the ones the reference ran on, bit for bit. Plain C++
/// that nvcc also compiles for the device (the harness embeds this file).

#include <cstdint>

#if defined(__CUDACC__)
#define ACCELOPT_HOST_DEVICE __host__ __device__
#else
#define ACCELOPT_HOST_DEVICE
#endif

namespace accelopt::perturb_bits {

/// A 32-bit avalanche hash: cheap enough per element to vectorize.
ACCELOPT_HOST_DEVICE inline uint32_t Hash32(uint32_t x) {
  x ^= x >> 16;
  x *= 0x7feb352dU;
  x ^= x >> 15;
  x *= 0x846ca68bU;
  x ^= x >> 16;
  return x;
}

/// Element i's float32 bits with the call's mask applied (the two halves of
/// the call's key, from eval::PerturbKeyOf): the bits in `flippable` only,
/// and only for a normal number (zeros, subnormals, infinities and NaN stay).
ACCELOPT_HOST_DEVICE inline uint32_t Perturbed(uint32_t bits, long i, uint32_t key_lo, uint32_t key_hi,
                                               uint32_t flippable) {
  const uint32_t exponent = bits & 0x7F800000u;
  const uint32_t mask = (Hash32(static_cast<uint32_t>(i) + key_lo) ^ key_hi) & flippable;
  return bits ^ (exponent != 0 && exponent != 0x7F800000u ? mask : 0u);
}

}  // namespace accelopt::perturb_bits
