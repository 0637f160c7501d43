#pragma once
/// service: the Evaluator turns jobs into outcomes (DESIGN.md section 7).
///
/// The search and the run engine submit jobs and receive futures; they never
/// call a target directly. Implementations: the local evaluator (a run queue
/// for one device, in this process) and the queue evaluator (jobs into the
/// store's queue; `accelopt worker` processes complete them).

#include <functional>
#include <future>
#include <memory>
#include <string>
#include <vector>

#include "service/eval_job.h"
#include "targets/registry.h"

namespace accelopt::service {

/// A job's future: its outcome, or an Error of the engine (a task that did not
/// load, a worker lost too often, a store that cannot be read). A kernel's
/// verdict is never an Error: it is a field of the outcome's profiles.
using OutcomeFuture = std::future<Result<EvalOutcome>>;

class Evaluator {
 public:
  virtual ~Evaluator() = default;
  /// Takes the jobs; one future per job, in order. Does not wait for them to
  /// be measured. Thread-safe.
  virtual std::vector<OutcomeFuture> Submit(std::vector<EvalJob> jobs) = 0;
  /// What it waits for now, in words ("" when nothing): shown while a run waits.
  virtual std::string Waiting() const { return ""; }
};

/// Makes a target by name (targets::MakeTarget, or a test's own).
using TargetFactory =
    std::function<Result<std::unique_ptr<targets::Target>>(const std::string& name, const targets::TargetSettings&)>;

struct LocalEvaluatorOptions {
  /// What every job's settings are applied onto: folders, messages, calibration.
  targets::TargetSettings settings;
  /// The device whose machine-wide lock is held while a job measures; "" =
  /// the device of the job's target (Target::Device()).
  std::string device;
  /// Hold the device's lock while measuring (tests of the queue turn it off).
  bool device_lock = true;
  /// Shown to other processes waiting for the device.
  std::string purpose = "measuring";
  /// Named in every outcome ("" in the engine's own process).
  std::string worker;
  TargetFactory make_target = targets::MakeTarget;
  /// When set, every job runs on this target, whatever it names (the engine's
  /// own, already made; a test's). Borrowed: it must outlive the evaluator.
  targets::Target* target = nullptr;
  /// The hardware profile to score a job against when the job names none
  /// (null: the target's own, loaded or calibrated on this machine); a worker
  /// reads its machine's from the store.
  std::function<Json(const std::string& target)> recorded_hardware;
  /// Told the profile a target made for a job naming none scores against
  /// (not null); a worker keeps it in the store, for the next worker of its machine.
  std::function<void(const std::string& target, const Json& hardware)> record_hardware;
  /// Told when a job waits for the device (who holds it).
  std::function<void(const std::string& device, const std::string& holder)> on_device_wait;
};

/// Runs jobs in this process, one after another, on one run queue: each
/// batch of consecutive evaluate jobs for the same target, settings, task and
/// shape is built together (sharing its inputs and reference outputs) and
/// measured under the device's machine-wide lock, taken once for every target,
/// so no two timed series of any accelopt process overlap on a device.
/// Targets and tasks are made once and kept while the evaluator lives.
std::unique_ptr<Evaluator> MakeLocalEvaluator(LocalEvaluatorOptions options);

}  // namespace accelopt::service
