#pragma once
/// The code target: tasks of kind `code` (docs/task-format.md, "Code tasks").
/// A candidate is the text of the files the agents may change (code/files.h).
/// Each is applied to its own copy of the code base, built, tested with the
/// project's own tests and timed with its own benchmark; two candidates are
/// compared with their benchmark runs interleaved. The commands are the
/// project's: docs/trust.md says what they must guarantee.

#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/result.h"
#include "eval/machine.h"
#include "eval/sandbox.h"
#include "targets/registry.h"
#include "targets/target.h"

namespace accelopt::code {

struct CodeTargetOptions {
  std::string work_dir;   ///< candidates' copies; "" = CacheDir()/work
  std::string bases_dir;  ///< checked-out repositories, by repository and commit; "" = CacheDir()/code
  bool keep_work = false;
  /// A benchmark run during which other processes used more than this share
  /// of the machine is run again, `disturbed_retries` times at most per evaluation.
  double disturbed_share = 0.10;
  int disturbed_retries = 3;
  /// Before a disturbed run is run again, wait up to this long for a quiet moment.
  double quiet_wait_seconds = 3;
  /// Built copies kept for reuse (a kept child is compared with
  /// its parent right after both were evaluated): not built twice.
  size_t kept_copies = 4;
};

class CodeTarget : public targets::Target {
 public:
  explicit CodeTarget(CodeTargetOptions options);
  std::string name() const override { return "code"; }
  targets::TargetInfo Describe() const override;
  std::string Machine() const override;
  std::string MachineText() const override;
  bool Supports(const suite::Task& task) const override { return task.kind == suite::TaskKind::kCode; }
  Result<std::string> Baseline(const suite::Task& task) const override;
  AnswerReader AnswerReaderFor(const suite::Task& task) const override;
  std::map<std::string, std::string> PromptValues(const suite::Task& task) const override;
  /// Each candidate in a copy of its own, built (a kept copy of the same
  /// candidate is reused).
  std::vector<Result<std::unique_ptr<targets::Built>>> Build(std::span<const targets::EvalRequest> requests) override;
  /// The tests, then the benchmark's runs.
  std::vector<Result<Profile>> Run(std::span<targets::Built* const> built, const OnResult& on_result) override;
  bool ComparesSideBySide() const override { return true; }
  Result<targets::PairedResult> Compare(const targets::EvalRequest& a, const targets::EvalRequest& b) override;

  /// The code base as the task names it: its folder, or its repository checked
  /// out at its commit (once, then reused). An Error when it cannot be had.
  Result<std::filesystem::path> BaseOf(const suite::Task& task) const;

 private:
  struct Prepared;
  struct CodeBuilt;
  /// A copy of the code base with the candidate's files, built: a verdict in
  /// `profile` when it failed; an Error when the engine did.
  Result<std::unique_ptr<Prepared>> Prepare(const targets::EvalRequest& request) const;
  /// Prepare's result, or a kept copy of the same candidate that built (its
  /// profile back as the build left it).
  Result<std::shared_ptr<Prepared>> Ready(const targets::EvalRequest& request);
  /// Runs the task's tests in a built copy, once per copy; false with the
  /// verdict in its profile when they fail; an Error when the engine did.
  Result<bool> Tested(const suite::Task& task, Prepared& prepared) const;
  /// Ready, then Tested: a copy whose `ok()` says whether it may be benchmarked.
  Result<std::shared_ptr<Prepared>> ReadyAndTested(const targets::EvalRequest& request);
  struct BenchRun {
    double cost = 0;        ///< of the figure it printed (lower is better)
    double other_load = 0;  ///< share of the machine other processes used while it ran
    double wall = 0;        ///< the benchmark command's wall time, timed from outside
    std::string digest;     ///< of its result, where the task names one
  };
  /// One run of the benchmark; nothing when the candidate failed (its verdict
  /// is then in the profile); an Error when the engine did.
  Result<std::optional<BenchRun>> RunBench(const suite::Task& task, Prepared& prepared, uint64_t seed) const;
  /// Runs one of the task's commands in the candidate's copy, with `seed` as
  /// $ACCELOPT_SEED; the copy writable only with `writable_copy` (the build).
  Result<eval::SandboxOutcome> Shell(const std::string& command, Prepared& prepared, double timeout, uint64_t seed,
                                     bool writable_copy = false, std::vector<std::string> extra_env = {}) const;
  /// Where the benchmark's time goes, once per copy: for a Python code base,
  /// one more run of the benchmark (confined as it is) with each Python
  /// process under cProfile, its top entries; else, or when it fails, why none was taken.
  std::string TimeProfile(const suite::Task& task, Prepared& prepared) const;
  /// Whether `run` was disturbed and is to be run again (counted in the profile, a retry spent).
  bool Disturbed(const BenchRun& run, int& retries_left, Prepared& prepared) const;
  /// The profile of a candidate whose benchmark runs gave `costs`, while
  /// other processes used these shares of the machine.
  void Finish(const suite::Task& task, Prepared& prepared, const std::vector<double>& costs,
              const std::vector<double>& loads) const;

  CodeTargetOptions options_;
  eval::MachineIdentity machine_;  ///< read once: the machine does not change while the target lives
  mutable std::mutex bases_mu_;
  std::mutex kept_mu_;
  std::vector<std::pair<std::string, std::shared_ptr<Prepared>>> kept_;  ///< by task and code, oldest first
};

targets::TargetKind Registration();

}  // namespace accelopt::code
