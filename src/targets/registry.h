#pragma once
/// targets: the registry. A target is built from its name; `accelopt targets`
/// lists each registered one, available here or with the reason it is not.
/// Adding a target is one folder under src/targets/ and one line in registry.cc.

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/json_io.h"
#include "core/result.h"
#include "targets/target.h"

namespace accelopt::targets {

/// The target kernels are measured on when none is named (and a task is not a code task).
inline constexpr const char* kDefaultTarget = "cpu";

/// What the user chose for an evaluation, for any target; each target takes what applies to it.
struct TargetSettings {
  int seeds = 3;          ///< correctness runs, each with fresh random inputs
  double timeout = 60;    ///< wall-clock limit per child process, seconds
  std::vector<int> cpus;  ///< cores the kernel runs on (cpu target); empty = all allowed
  bool bind_openmp = false;
  bool keep_work = false;  ///< keep evaluation folders for debugging
  /// The target takes its device's machine-wide lock itself while it measures;
  /// false when its evaluator holds the lock (service::LocalEvaluator).
  bool device_lock = true;
  /// Measure the machine when it has no saved profile (else no scoring).
  bool calibrate_if_missing = true;
  /// A recorded hardware profile to score against (a resumed run's); null: the machine's own.
  Json hardware;
  std::string data_dir;   ///< where hardware profiles are kept
  std::string cache_dir;  ///< builds and scratch folders
  /// The external target's evaluator: program and arguments, split at spaces
  /// ("" = $ACCELOPT_EVALUATOR).
  std::string evaluator;
  /// Progress and notes for the user (calibration, a raised peak, ...).
  std::function<void(const std::string&)> say = [](const std::string&) {};
};

struct TargetKind {
  std::string name;
  std::string summary;  ///< one line: kernel language and where it runs
  /// Why it cannot run here ("" when it can): a missing compiler, device or program.
  std::function<std::string(const TargetSettings&)> unavailable;
  /// Why it cannot run here, found by starting it (an evaluator asked to
  /// describe itself): slower than `unavailable`, so asked only where the
  /// user asks which targets run (`accelopt targets`). Unset: `unavailable` says all.
  std::function<std::string(const TargetSettings&)> probe;
  std::function<Result<std::unique_ptr<Target>>(const TargetSettings&)> make;
};

/// Why `kind` cannot run here ("" when it can): `unavailable`, then, when
/// that finds nothing, `probe`. May start the target's programs; blocks.
std::string WhyUnavailable(const TargetKind& kind, const TargetSettings& settings);

/// Every registered target, in registration order.
const std::vector<TargetKind>& RegisteredTargets();

/// The target named `name`, built with `settings`; an Error naming the known
/// targets when there is none of that name, or saying why it is unavailable.
Result<std::unique_ptr<Target>> MakeTarget(const std::string& name, const TargetSettings& settings);

}  // namespace accelopt::targets
