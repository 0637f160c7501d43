#pragma once
/// What the evaluations of one batch (one task at one shape) share, all of it
/// in the monitor's memory: the input sets drawn for the batch, the inputs of
/// the timed calls whose outputs may be checked, and the reference's outputs
/// for each of them, in double and, for the per-element bound of eval/compare.h,
/// from a float32 evaluation of the same reference source.

#include <cstdint>
#include <string>
#include <vector>

#include "core/profile.h"
#include "core/result.h"
#include "eval/calls.h"
#include "eval/compiler.h"
#include "suite/task.h"

namespace accelopt::eval {

/// A task's reference is C++ (reference.cpp), whatever the target: it runs on this machine's cores.
inline const std::string kReferenceExtension = ".cpp";

/// The reference is built plainly: no fast-math, no OpenMP.
inline CompileOptions ReferenceCompileOptions() {
  CompileOptions o;
  o.flags = {"-O2", "-march=native", "-std=c++20"};
  o.vectorization_report = false;
  return o;
}

/// How a task's reference is built and run (on this machine's cores, for every target).
struct ReferenceOptions {
  KernelRunOptions run;
  CompileOptions compile = ReferenceCompileOptions();
  /// Reference processes run at once (the double and the float32 evaluation,
  /// each over its share of the slots); 0 = one per core it may run on
  /// (run.cpus, else this process's affinity), fewer when memory is short.
  int processes = 0;
};

/// How many reference processes at once (ReferenceOptions::processes) for
/// `calls` slots of `bound`: at least 2 (the double and the float32
/// evaluation), at most two per slot.
int ReferenceProcesses(const suite::BoundTask& bound, const ReferenceOptions& options, size_t calls);

/// The inputs of a timed call whose outputs can be checked: a drawn set, perturbed by `seed`.
struct CheckedInputs {
  size_t set = 0;
  uint64_t seed = 0;
};

/// A fresh 64-bit seed from the system's entropy.
uint64_t FreshSeed();

class Expected {
 public:
  /// Draws `seeds` input sets (every distribution scaled by `scale`, signs
  /// kept) and the inputs of `checked` checkable timed calls, and runs the
  /// reference for all of them (the slots shared among the reference
  /// processes of ReferenceProcesses, each slot computed by one of them, so
  /// that the outputs are the same however many run). The reference is
  /// built and run in `dir`. Failures are kept in status().
  Expected(const suite::BoundTask& bound, const ReferenceOptions& options, const std::string& dir, int seeds,
           double scale, int checked);
  Expected(Expected&&) = default;

  /// Ok, or why the inputs could not be drawn or the reference run (an engine error).
  const Status& status() const { return status_; }
  size_t seeds() const { return sets_.size(); }
  /// Every input of seed set s, back to back.
  const float* set(size_t s) const { return sets_[s].data(); }
  size_t checked_count() const { return checked_.size(); }
  const CheckedInputs& checked(size_t k) const { return checked_[k]; }

  /// Slots: seed set s is slot s; checkable call k is slot seeds() + k.
  /// The reference outputs of a slot (every output back to back), when status() is Ok.
  const double* reference(size_t slot) const { return ref64_[slot].data(); }
  /// Its float32 evaluation; null when there is none (why: float32_missing()).
  const float* reference32(size_t slot) const { return ref32_[slot].empty() ? nullptr : ref32_[slot].data(); }
  const std::string& float32_missing() const { return float32_missing_; }

  /// Runs the reference on the inputs of calls chosen after they ran (a
  /// checked timed call, decided once its outputs were taken) and adds a slot
  /// for each, in order: the first new slot. An Error is the engine's (the
  /// reference failed), never the kernel's.
  Result<size_t> AddSlots(const suite::BoundTask& bound, const std::vector<CheckedInputs>& calls);
  /// RoundingFloor of output `output` of a slot (when reference32 is not null).
  double floor(size_t slot, size_t output) const { return floors_[slot][output]; }

  /// A kernel's outputs for slot `slot` (every output back to back, float32)
  /// against the reference's, output by output (CompareOutput): the
  /// worst statistics, and in `why`, when it is still empty, the first
  /// output's reason to fail (JudgeOutput; `label` names the call).
  ErrorStats Judge(const suite::BoundTask& bound, size_t slot, const float* outputs, const std::string& label,
                   double tolerance, std::string& why) const;

  double inputs_seconds() const { return inputs_seconds_; }
  double reference_seconds() const { return reference_seconds_; }

 private:
  void Draw(const suite::BoundTask& bound, int seeds, double scale, int checked);
  // Runs the reference on `calls` and appends a slot for each.
  Status RunReferences(const suite::BoundTask& bound, const std::vector<CallInputs>& calls);
  ReferenceOptions options_;
  std::string dir_;
  Status status_ = Ok{};
  std::vector<std::vector<float>> sets_;
  std::vector<CheckedInputs> checked_;
  std::vector<std::vector<double>> ref64_;
  std::vector<std::vector<float>> ref32_;
  std::vector<std::vector<double>> floors_;
  std::string float32_missing_;
  double inputs_seconds_ = 0, reference_seconds_ = 0;
};

}  // namespace accelopt::eval
