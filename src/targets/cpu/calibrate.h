#pragma once
/// Measurement of this machine's limits: the denominators of percent of peak.
///
/// Everything here is measured on the running machine, never taken from a
/// datasheet; the theoretical figures are computed beside it only so a user
/// can see how close the measurement came.

#include <map>
#include <string>
#include <vector>

#include "core/result.h"
#include "eval/hardware_store.h"
#include "eval/machine.h"

namespace accelopt::cpu {

/// The machine's identity and caches (eval/machine.h), as the cpu target names them.
using eval::DescribeCaches;
using eval::DetectMachine;
using eval::MachineIdentity;

struct CalibrationOptions {
  double seconds_per_test = 0.2;    ///< wall time of each arithmetic test, per round (best of short runs)
  int repeats = 5;                  ///< passes per bandwidth pattern and sgemm calls, per round; the best is kept
  long stream_bytes = 64L << 20;    ///< bytes per bandwidth array (evicted from the caches before every pass)
  long sgemm_n = 2048;              ///< square size of the OpenBLAS sgemm anchor
  int min_rounds = 3;               ///< every figure is measured in at least this many rounds...
  int max_rounds = 8;               ///< ...and at most this many, until stable and consistent
  double stable_within = 0.02;      ///< a figure is stable when its best two rounds agree within this
  double max_other_load = 0.10;     ///< other processes' share of the CPU above which nothing is saved
  double min_peak_fraction = 0.90;  ///< an FMA peak below this share of the theoretical is not the machine's
  bool device_lock = true;          ///< measure under the machine-wide "cpu" device lock (eval/device_lock.h)
  int fma_units = 0;                ///< FMA pipes per core for the theoretical peak; 0 = assumed per CPU family
};

/// One figure measured over several rounds.
struct MeasuredFigure {
  double best = 0;             ///< the highest round: what the machine can sustain
  double spread = 0;           ///< (best - third best) / best over the rounds: how well the best is reproduced
  std::vector<double> rounds;  ///< every round's value, in order
};

using eval::PeakEvidence;

/// A measured hardware profile, the `h` of DESIGN.md section 3.
struct HardwareProfile {
  MachineIdentity machine;
  double bandwidth_gbs = 0;           ///< best sustained streaming rate over patterns, thread counts, rounds (1e9 B/s)
  double peak_mm_gflops = 0;          ///< FMA throughput, all cores, GFLOP/s (2 per FMA)
  double peak_vec_gflops = 0;         ///< non-FMA vector add/mul throughput, all cores, GFLOP/s (1 per lane op)
  double blas_sgemm_gflops = 0;       ///< OpenBLAS sgemm on sgemm_n^3, all cores: practical matmul ceiling
  double clock_ghz = 0;               ///< core clock with every core running FMAs (the clock the peaks run at)
  int fma_units = 0;                  ///< FMA pipes per core assumed for the theoretical peak
  int fma_lanes = 0;                  ///< float lanes per FMA pipe assumed for the theoretical peak
  double theoretical_mm_gflops = 0;   ///< cores x fma_units x fma_lanes x 2 x clock
  double theoretical_vec_gflops = 0;  ///< cores x vec_units x fma_lanes x clock
  std::string measured_at;            ///< ISO-8601 UTC time of the measurement
  double other_load = 0;              ///< share of all CPU time other processes used meanwhile (0..1)
  int rounds = 0;                     ///< rounds measured
  /// Spread of each figure over its rounds ((best - third best) / best), by
  /// name: "bandwidth", "peak_mm", "peak_vec", "sgemm", "clock".
  std::map<std::string, double> spreads;
  std::vector<PeakEvidence> evidence;  ///< rates raised by kernels since the calibration, oldest first
};

/// A calibration and whether it may be saved as the machine's profile.
struct Calibration {
  HardwareProfile profile;
  /// Why the profile is not the machine's (empty: it is): each names the
  /// figure, what was wrong and what to do.
  std::vector<std::string> problems;
  std::vector<std::string> notes;  ///< what the calibration adjusted or noticed, for the user
};

/// Measures every figure in rounds until each is stable and the figures agree
/// with each other and with the theoretical ones (or max_rounds is reached),
/// under the machine's device lock. Blocks for several seconds; uses every
/// allowed core. An Error only when the device lock cannot be used.
Result<Calibration> Calibrate(const CalibrationOptions& options);

/// The checks a calibration must pass to be saved, on a profile already
/// measured: other processes' load, each figure's stability, the FMA peak
/// against the theoretical one, sgemm against the FMA peak.
std::vector<std::string> CheckProfile(const HardwareProfile& profile, const CalibrationOptions& options);

}  // namespace accelopt::cpu
