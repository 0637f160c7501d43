#pragma once
/// The theoretical GPU peaks: what a device's SM count, clocks and memory bus
/// allow, from per-architecture constants. Shown beside the measured figures
/// and used as the ceiling no measurement (and no kernel) may exceed; nothing
/// divides by them.
///
/// Plain C++17 with no includes: the engine includes it, and calibrate.cu
/// includes it too (the engine writes it beside that program when it builds it
/// with nvcc), so both compute the same figures.
///
/// The constants, per compute capability (results per clock per SM):
///
///   FP32 FMA lanes: 64 on 7.x and 8.0, 128 on 8.6, 8.7, 8.9, 9.0, 10.x, 12.x
///   (CUDA C++ Programming Guide, "Arithmetic Instructions", throughput of
///   32-bit floating-point add, multiply, multiply-add). Checked against the
///   datasheets: A100 108 SMs x 64 x 2 x 1.41 GHz = 19.5 TFLOP/s; H100 SXM
///   132 x 128 x 2 x 1.98 GHz = 66.9 TFLOP/s.
///
///   Dense bf16 tensor-core FMAs with fp32 accumulation:
///     8.0 (A100)   1024: 4 tensor cores of 256 (A100 whitepaper; 108 SMs x
///                  2048 FLOP x 1.41 GHz = 312 TFLOP/s, its datasheet figure)
///     9.0 (H100)   2048: 4 tensor cores of 512, twice A100 per SM and clock
///                  (Hopper whitepaper; 132 SMs x 4096 FLOP x 1.83 GHz =
///                  989 TFLOP/s, the H100 SXM datasheet figure)
///     8.6, 8.9     512: GA10x/AD10x (A10, L40S: 72 x 1024 x 1.695 GHz =
///                  125 TFLOP/s; GeForce parts run fp32 accumulation at half
///                  this, so 512 is their ceiling, not their rate)
///     12.0         512: derived from the RTX 50 datasheets like 8.9 (not confirmed)
///     10.0, 10.3   4096: derived from B200's 2.25 PFLOP/s dense bf16 with 148
///                  SMs near 1.9 GHz (not confirmed by a whitepaper table)
///     7.x, and anything not listed: 0, unknown or no bf16 tensor cores (the
///     figure is then not checked against a theoretical one)
///
///   Memory: memory clock x 2 (double data rate) x bus width: H100 SXM HBM3
///   2619 MHz x 2 x 5120 bits = 3352 GB/s, its datasheet's 3.35 TB/s.
///
/// The SM clock is the device's maximum (cudaDevAttrClockRate): a GPU under
/// heavy tensor-core load runs below it, so the tensor figure is a ceiling.

namespace accelopt::cuda {

/// FP32 FMA results per clock per SM; 0 when unknown.
constexpr int Fp32FmaLanesPerSm(int major, int minor) {
  if (major == 7) return 64;
  if (major == 8) return minor == 0 ? 64 : 128;
  if (major == 9 || major == 10 || major == 12) return 128;
  return 0;
}

/// Dense bf16 tensor-core FMAs per clock per SM (fp32 accumulation); 0 when
/// unknown or when the architecture has no bf16 tensor cores.
constexpr int Bf16TensorFmasPerSm(int major, int minor) {
  if (major == 8 && minor == 0) return 1024;
  if (major == 8 && (minor == 6 || minor == 9)) return 512;
  if (major == 9 && minor == 0) return 2048;
  if (major == 10 && (minor == 0 || minor == 3)) return 4096;
  if (major == 12 && minor == 0) return 512;
  return 0;
}

/// GFLOP/s of `fmas_per_sm` FMAs per clock per SM (2 FLOPs each) on
/// `sm_count` SMs at `sm_clock_khz`.
constexpr double FmaGflops(int sm_count, double sm_clock_khz, int fmas_per_sm) {
  return 2.0 * sm_count * fmas_per_sm * sm_clock_khz * 1e3 / 1e9;
}

/// GB/s (1e9 bytes) of a double-data-rate bus of `bus_bits` at `memory_clock_khz`.
constexpr double MemoryGbs(double memory_clock_khz, int bus_bits) {
  return memory_clock_khz * 1e3 * 2.0 * (bus_bits / 8.0) / 1e9;
}

}  // namespace accelopt::cuda
