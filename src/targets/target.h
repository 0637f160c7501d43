#pragma once
/// targets: hardware and kernel language a candidate is built for and measured on.
///
/// A Target turns candidate kernels into profiles. Verdicts (compile error,
/// wrong answer, crash, timeout, ...) are fields of the profile; an Error is
/// returned only when the infrastructure failed (the reference crashed, the
/// disk is full, the harness is missing).

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/json_io.h"
#include "core/profile.h"
#include "core/result.h"
#include "eval/stats.h"
#include "suite/roofline.h"
#include "suite/task.h"

namespace accelopt::targets {

/// A kernel to evaluate.
struct Candidate {
  std::string source;                  ///< the whole kernel source file
  std::string label;                   ///< shown in logs and reports ("baseline", a path, ...)
  std::vector<std::string> libraries;  ///< extra libraries the kernel may link (e.g. "openblas")
};

struct EvalRequest {
  const suite::Task* task = nullptr;  ///< must outlive the call
  std::string shape = "bench";
  Candidate candidate;
};

/// What one evaluation is, as a value: enough to find its result again, or
/// to send it to a machine that measures (the seam of a profiling service).
/// Its key names where it was measured, so a result is reused only there.
struct EvaluationJob {
  std::string task, shape;
  std::string code_hash;  ///< of the kernel's source (agents::CodeHash)
  std::string target;     ///< the target's name
  std::string machine;    ///< the machine's fingerprint (Target::Machine)
  /// "task/shape/target@machine/code_hash"
  std::string Key() const;
  Json ToJson() const;
  /// An Error names the missing or mistyped field.
  static Result<EvaluationJob> FromJson(const Json& j);
};

/// Two candidates measured side by side.
struct PairedResult {
  Profile a, b;
  /// The speedup of b over a from their interleaved calls, with its
  /// interval; absent when either is not ok.
  std::optional<PairedSpeedup> speedup;
};

/// How a target's kernels are described to FlashInfer-Bench (run/fib_export.h).
struct FibLanguage {
  std::string language;       ///< spec.language: "cpp", "cuda", "triton", "python"
  std::string file;           ///< the kernel's source path in the solution: "kernel.cpp", ...
  bool shape_header = false;  ///< the kernel is compiled with shape.h included (C++ and CUDA)
};

/// What a target says of itself: what the engine and the agents need to know
/// about its kernels.
struct TargetInfo {
  std::string name;                     ///< "cpu", "cuda", ...
  std::string language;                 ///< the kernel language: "c++"
  std::string file_extension;           ///< of a kernel file: ".cpp"
  std::vector<std::string> fence_tags;  ///< tags of an answer's code block holding a kernel
  std::string build_command;            ///< how a kernel is built, as the prompts say it
  std::string prompts_dir;              ///< its prompt templates, relative to the project
  /// A task's vendor anchor (vendor<file_extension>, `accelopt bench`): what
  /// reports call it and the libraries it links.
  std::string vendor_label = "vendor";
  std::vector<std::string> vendor_libraries;
  /// The function a kernel defines, by which an answer's kernel block is told
  /// from a usage example (agents::ExtractKernel). Last: targets fill the
  /// fields above by position.
  std::string entry_point = "kernel";
};

/// A candidate built by Target::Build: the first half of an evaluation, ready
/// to run. It holds what its target needs to run it (a library, a built copy
/// of a code base, an evaluator's artifact) until it is destroyed; only the
/// target that built it can run it, and it must not outlive that target or
/// the task it was built for. Not thread-safe.
class Built {
 public:
  virtual ~Built() = default;
  /// What the build found: the compile log and time, and, when the candidate
  /// cannot run, its verdict (compile_error, forbidden, ...) and why.
  virtual const Profile& BuildProfile() const = 0;
  /// Whether it built and may run.
  bool ok() const { return BuildProfile().status == Verdict::kOk; }
};

class Target {
 public:
  /// Told of each result as soon as it is measured (its index in the requests).
  using OnResult = std::function<void(size_t index, const Result<Profile>& result)>;

  virtual ~Target() = default;
  /// "cpu", "cuda", ...
  virtual std::string name() const = 0;
  virtual TargetInfo Describe() const = 0;
  /// The machine it measures on (a fingerprint): evaluations are kept per target and machine.
  virtual std::string Machine() const = 0;
  /// The device its timed calls run on, as the machine-wide device lock names
  /// it (eval/device_lock.h): no two timed series overlap on one device.
  virtual std::string Device() const { return "cpu"; }
  /// The hardware profile its percentages of peak are computed against (kept
  /// with a run, so that they can be recomputed); null when it scores nothing.
  virtual Json Hardware() const { return nullptr; }
  /// The rates the roofline divides by when it scores; zero when it scores nothing.
  virtual suite::PeakRates Rates() const { return {}; }
  /// Those for one task: a GPU runs a task with bf16 inputs at its bf16 rate.
  virtual suite::PeakRates RatesFor(const suite::Task& task) const {
    (void)task;
    return Rates();
  }
  /// The machine as the agents should know it: cores, caches, vector width,
  /// measured rates. One line; "" when there is nothing to say.
  virtual std::string MachineText() const { return ""; }
  /// The shape `task` is evaluated, compared, benched and optimized at when
  /// none is asked for: by default "bench" (sized for this machine's cores).
  virtual std::string DefaultShape(const suite::Task& task) const {
    (void)task;
    return "bench";
  }
  /// The shapes of `task`, other than `shape`, on which a kernel evaluated at
  /// `shape` is also checked (the agents are told them).
  virtual std::vector<std::string> CheckedShapes(const suite::Task& task, const std::string& shape) const {
    (void)task, (void)shape;
    return {};
  }
  /// The kernel's parameter list as its language writes it (the prompts show
  /// it). By default C/C++: `const float* x, float* out`.
  virtual std::string Signature(const suite::Task& task) const;
  /// The shape's parameters and constants as a kernel sees them, in its
  /// language. By default C++: `constexpr long M = 64; ...`.
  virtual std::string ShapeDeclarations(const suite::BoundTask& bound) const;
  /// The least memory of this machine an evaluation of `bound` takes (what
  /// `accelopt tasks` checks against what the machine has); 0 when the target
  /// holds nothing of the task's size here (its device's memory is its own).
  virtual double MemoryNeededBytes(const suite::BoundTask& bound) const {
    (void)bound;
    return 0;
  }
  /// Whether this target has what it needs to run `task` (a baseline for it, ...).
  virtual bool Supports(const suite::Task& task) const = 0;
  /// The candidate the search starts from. By default the task's baseline file
  /// in this target's language (Describe().file_extension).
  virtual Result<std::string> Baseline(const suite::Task& task) const;
  /// How an executor's or fixer's answer becomes a candidate, given the
  /// candidate it changes; an Error says why the answer could not be used.
  using AnswerReader = std::function<Result<std::string>(const std::string& answer, const std::string& current)>;
  /// Empty (the default): the answer's last code block tagged with one of
  /// Describe().fence_tags is the whole new kernel.
  virtual AnswerReader AnswerReaderFor(const suite::Task& task) const {
    (void)task;
    return {};
  }
  /// Placeholders of this target's own prompt templates for `task` (beside
  /// those every prompt has: task, description, signature, shape, ...).
  virtual std::map<std::string, std::string> PromptValues(const suite::Task& task) const {
    (void)task;
    return {};
  }
  /// Builds each request without running it, as much in parallel as the
  /// target can: one result per request, in order. Blocks until all are
  /// built. An Error is the infrastructure's (the disk is full, the toolchain
  /// is broken), never a candidate's verdict.
  virtual std::vector<Result<std::unique_ptr<Built>>> Build(std::span<const EvalRequest> requests) = 0;
  /// Checks, times and scores what Build made: one result per element, in
  /// order, each told to `on_result` as soon as it is measured. A candidate
  /// that did not build gets its build's profile. Consecutive elements that
  /// one Build call made for the same task and shape share their inputs and
  /// reference outputs. Blocks.
  virtual std::vector<Result<Profile>> Run(std::span<Built* const> built, const OnResult& on_result) = 0;
  /// Build, then Run: one result per request, in order. Blocks until all are measured.
  std::vector<Result<Profile>> Evaluate(std::span<const EvalRequest> requests, const OnResult& on_result);
  std::vector<Result<Profile>> Evaluate(std::span<const EvalRequest> requests) {
    return Evaluate(requests, OnResult{});
  }
  /// Whether Compare times two kernels side by side; when not, decisions take
  /// the ratio of their medians.
  virtual bool ComparesSideBySide() const { return false; }
  /// Evaluates `a` and `b` (same task and shape) together, with their timed
  /// calls interleaved in one window: the way to decide which is faster.
  /// Blocks. An Error when the target cannot (the default) or the infrastructure failed.
  virtual Result<PairedResult> Compare(const EvalRequest& a, const EvalRequest& b) {
    (void)a, (void)b;
    return Error{"the " + name() + " target cannot time two kernels side by side"};
  }
};

}  // namespace accelopt::targets
