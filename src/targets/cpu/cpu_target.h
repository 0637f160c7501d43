#pragma once
/// The cpu target: C++ kernels compiled with the system compiler, run in a
/// sandboxed kernel process (accelopt-harness) that the engine drives call by
/// call (eval/kernel_process.h), checked against the reference and timed from
/// the engine.

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "eval/calls.h"
#include "eval/compiler.h"
#include "eval/device_lock.h"
#include "eval/expected.h"
#include "eval/machine_load.h"
#include "suite/roofline.h"
#include "targets/cpu/calibrate.h"
#include "targets/target.h"

namespace accelopt::cpu {

struct TimingOptions {
  int warmup = 1;                  ///< untimed calls after the correctness calls
  int min_calls = 10;              ///< timed calls per series, at least
  int max_calls = 50;              ///< timed calls per series, at most
  double budget_seconds = 0.5;     ///< aim for this much kernel time per series
  double spread_tolerance = 0.01;  ///< re-measure while IQR/median exceeds this
  int max_series = 3;              ///< series at most; the most stable is kept
  bool flush_caches = true;        ///< evict the arguments before every call (all calls alike)
  int checked_per_series = 2;      ///< timed calls per series whose outputs are checked (at random positions)
  /// Empty calls timed before the kernel is loaded, each prepared like a real
  /// one; the fastest is the handshake every latency includes (reported, not subtracted).
  int handshake_calls = 5;
  /// CPU time the kernel's process may use outside its call windows over a
  /// whole evaluation (work after a call returned, before its process
  /// stopped): this much, plus `outside_cpu_fraction` of the calls' own time.
  double outside_cpu_seconds = 0.002;
  double outside_cpu_fraction = 0.01;
  /// OpenMP threads spin without end while they wait (OMP_WAIT_POLICY=ACTIVE).
  /// Off by default: with the runtime's default policy a pool spins for a
  /// count of polls before it sleeps, and since the process is stopped
  /// mid-spin between calls (the count does not advance while it is stopped),
  /// a call already finds its pool spinning, as in back-to-back calls. ACTIVE
  /// measured no faster here, and made the spread of a two-thread matmul jump
  /// to 75-83% in half the evaluations on a 2-core virtual machine.
  bool openmp_active = false;
  /// A timed series during which other processes (or the hypervisor) took
  /// more than this share of the machine's CPU is disturbed: measured again,
  /// up to `disturbed_retries` more series, and counted in the profile.
  double disturbed_share = 0.10;
  int disturbed_retries = 3;
  /// Before a disturbed series is measured again, wait up to this long for a
  /// quiet moment (eval::WaitForQuiet); a series still disturbed after the
  /// retries leaves its profile (or comparison) marked disturbed.
  double quiet_wait_seconds = 3;
};

/// How a timed evaluation waits for a quiet machine between disturbed series.
eval::QuietWait QuietWaitOf(const TimingOptions& timing);

struct CpuTargetOptions {
  suite::PeakRates rates;  ///< measured hardware profile; zero rates = no scoring
  /// The profile `rates` came from: its theoretical peaks and its spreads
  /// decide whether a correct kernel that stays faster than the roofline when
  /// measured again is evidence for the next calibration or suspect.
  /// Without it, any such kernel is suspect.
  std::optional<HardwareProfile> hardware;
  /// Told each time a correct kernel, measured twice, claimed a rate beyond
  /// the calibrated one but within what the calibration could miss: evidence
  /// for the next `accelopt calibrate`, never applied (the rates do not move).
  std::function<void(const PeakEvidence&)> on_beyond_calibration;
  /// How far beyond a calibrated rate a kernel may prove the machine can go:
  /// this share, or `raise_spreads` times the figure's calibration spread if more.
  double raise_allowance = 0.05;
  double raise_spreads = 3;
  int seeds = 3;  ///< correctness runs, each with fresh random inputs
  TimingOptions timing;
  bool timing_enabled = true;  ///< false: correctness only
  double wall_seconds = 60;    ///< per child process (reference or candidate)
  long memory_bytes = 0;       ///< address-space limit; 0 = 2 GiB + 4x the task's data
  bool counters = true;        ///< hardware counters through perf_event_open
  std::vector<int> cpus;       ///< the cores the kernel runs on (its "device"); empty = all allowed
  /// Also bind each OpenMP thread to one core (OMP_PROC_BIND=close, OMP_PLACES=cores).
  /// Off by default: libgomp then pins the main thread to a single core before
  /// the kernel starts, which confines OpenBLAS and std::thread workers to it.
  bool bind_openmp = false;
  eval::CompileOptions kernel_compile;  ///< candidate build (its cache_dir "" disables caching)
  eval::CompileOptions reference_compile = eval::ReferenceCompileOptions();
  std::string harness_path;  ///< accelopt-harness; "" = HarnessPath()
  std::string work_dir;      ///< scratch; "" = CacheDir()/work
  bool keep_work = false;    ///< keep each evaluation's folder (debugging)
  /// Measure under the machine-wide lock of the "cpu" device (eval/device_lock.h):
  /// a batch's reference runs and kernel runs take turns with other processes'.
  bool device_lock = true;
  eval::DeviceLock::OnWait on_device_wait;  ///< told while waiting for the device; empty = a line on stderr
  int build_jobs = 0;                       ///< compilers at once for a batch; 0 = one per allowed core
};

/// How the cpu target starts a kernel's process (candidate or reference).
eval::KernelRunOptions RunOptionsOf(const CpuTargetOptions& options);
/// How it builds and runs a task's reference.
eval::ReferenceOptions ReferenceOptionsOf(const CpuTargetOptions& options);

/// The least memory an evaluation of `bound` takes: the engine holds each
/// argument once in the kernel's shared memory (4 bytes), once as a drawn
/// input set or a copied output (4) and once as a double-precision reference (8).
double MemoryNeededBytes(const suite::BoundTask& bound);
/// An Error naming the bytes needed and available when `bound` does not fit:
/// such a shape is refused before anything is drawn.
Status CheckMemoryFor(const suite::BoundTask& bound);

/// The task's other shapes a candidate evaluated at `shape` is also checked on
/// (untimed): those no larger than `shape`, and those that do not bind (to be
/// reported), by name.
std::vector<std::string> CheckedShapes(const suite::Task& task, const std::string& shape);

/// The cpu target's name: "cpu".
inline constexpr const char kCpuTarget[] = "cpu";

/// Creates the cpu target. Thread-compatible: one Evaluate at a time.
/// A cpu kernel's file extension: a task's reference and baseline are reference.cpp and baseline.cpp.
inline const std::string kKernelExtension = ".cpp";

std::unique_ptr<targets::Target> MakeCpuTarget(const CpuTargetOptions& options);

}  // namespace accelopt::cpu
