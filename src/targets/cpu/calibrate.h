#pragma once
/// Measurement of this machine's limits: the denominators of percent of peak.
///
/// Everything here is measured on the running machine, never taken from a
/// datasheet; the theoretical figures are computed beside it only so a user
/// can see how close the measurement came.

#include <string>
#include <vector>

namespace accelopt::cpu {

/// Identity of a machine: two machines with the same fingerprint share a profile.
struct MachineIdentity {
  std::string cpu_model;         ///< "model name" from /proc/cpuinfo
  int cores = 0;                 ///< CPUs this process may run on
  std::vector<std::string> isa;  ///< SIMD-relevant flags (sse4_2, avx2, fma, avx512f, ...)
  int simd_bits = 0;             ///< widest vector register the build uses: 128, 256 or 512
  std::string fingerprint;       ///< short stable hash of the fields above
};

/// Reads /proc/cpuinfo and the affinity mask. Never fails: unknown fields stay empty.
MachineIdentity DetectMachine();

struct CalibrationOptions {
  double seconds_per_test = 0.4;  ///< wall time each throughput test runs for (best of repeats)
  int repeats = 5;                ///< repeats per test; the best is kept
  long stream_bytes = 0;          ///< bytes per stream array; 0 = 8x the last-level cache, at least 64 MiB
  long sgemm_n = 2048;            ///< square size of the OpenBLAS sgemm anchor
};

/// A measured hardware profile, the `h` of DESIGN.md section 3.
struct HardwareProfile {
  MachineIdentity machine;
  double bandwidth_gbs = 0;           ///< streaming triad, all cores, GB/s (1e9 bytes)
  double peak_mm_gflops = 0;          ///< FMA throughput, all cores, GFLOP/s (2 per FMA)
  double peak_vec_gflops = 0;         ///< non-FMA vector add/mul throughput, all cores, GFLOP/s (1 per lane op)
  double blas_sgemm_gflops = 0;       ///< OpenBLAS sgemm on sgemm_n^3, all cores: practical matmul ceiling
  double clock_ghz = 0;               ///< measured core clock under load
  int fma_units = 0;                  ///< FMA pipes per core assumed for the theoretical peak
  int fma_lanes = 0;                  ///< float lanes per FMA pipe assumed for the theoretical peak
  double theoretical_mm_gflops = 0;   ///< cores x fma_units x fma_lanes x 2 x clock
  double theoretical_vec_gflops = 0;  ///< cores x vec_units x fma_lanes x clock
  std::string measured_at;            ///< ISO-8601 UTC time of the measurement
  double other_load = 0;              ///< share of all CPU time other processes used meanwhile (0..1)
};

/// Runs all calibration tests. Blocks for a few seconds; uses every allowed core.
/// Also records how much CPU other processes took meanwhile (other_load): a
/// busy machine measures low peaks.
HardwareProfile Calibrate(const CalibrationOptions& options);

/// The measurements alone, without the load accounting.
HardwareProfile MeasureProfile(const CalibrationOptions& options);

}  // namespace accelopt::cpu
