#pragma once
/// The four LLM roles of the loop (DESIGN.md section 2), over a port to the
/// model that the caller provides (which may answer from a record on resume).

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "agents/parse.h"
#include "core/result.h"

namespace accelopt::agents {

/// Asks the model for one answer. `key` identifies the request for the whole
/// run (the same key always means the same request), so an implementation may
/// answer a repeated key from its record instead of paying for a new call.
class ModelPort {
 public:
  virtual ~ModelPort() = default;
  virtual Result<std::string> Ask(const std::string& role, const std::string& prompt, const std::string& key) = 0;
  /// The answer to `key` could not be used (no plan, no code block, edits
  /// that do not apply): an implementation that keeps answers records why.
  virtual void Reject(const std::string& key, const std::string& reason) { (void)key, (void)reason; }
  /// The answer to `key` was used with a remark (which of its code blocks
  /// was taken, and why): an implementation logs or records it.
  virtual void Note(const std::string& key, const std::string& note) { (void)key, (void)note; }
};

/// Prompt templates of one target: planner.md, planner_several.md,
/// executor.md, fixer.md, summarizer.md and rules.md, with {{name}} placeholders.
struct PromptTemplates {
  std::map<std::string, std::string> text;  ///< by file stem
  /// Loads each of them from `dir`. Errors name the missing file.
  static Result<PromptTemplates> Load(const std::string& dir);
};

/// Fills {{name}} placeholders; unknown names are left as they are.
std::string Render(const std::string& text, const std::map<std::string, std::string>& values);

/// What every prompt for one task says about it.
struct TaskBrief {
  std::string task, description, signature, shape, reference, flags, isa;
  std::string checked_shapes;  ///< the other shapes the kernel is checked on, "" when none
  double tolerance = 2e-5;
  int tune_budget = 0;  ///< variants of declared tunable constants the engine tries itself per kernel
  std::vector<std::string> fence_tags = CppFenceTags();  ///< tags of a code block holding a kernel
  std::string entry_point = "kernel";                    ///< the function a kernel defines (TargetInfo)
  /// How an executor's or fixer's answer becomes the new candidate, from the
  /// one it changes; empty: the answer's last code block tagged with a fence tag.
  std::function<Result<std::string>(const std::string& answer, const std::string& current)> read_answer;
  /// The target's own placeholders (a code task's files, commands and metric).
  std::map<std::string, std::string> values;
};

/// A kernel as the agents see it.
struct KernelView {
  std::string code;
  std::string profile_text;  ///< latency, percent of peak, bound, throughput, counters, vectorization remarks
  std::string lineage;       ///< the plans that led to it from the baseline, oldest first; "" for the baseline
  std::string attempts;      ///< every plan tried on it, its ancestors and their children, with outcomes (search::AttemptHistory)
};

/// Two kernels of a pair as the summarizer sees them, with the measured speedup.
struct PairView {
  KernelView slow, fast;
  std::string speedup;  ///< e.g. "1.52 (96.09% interval 1.48 to 1.57, timed side by side)"
};

class Agents {
 public:
  Agents(ModelPort& model, PromptTemplates templates, TaskBrief brief);

  /// Plan number `proposal` (1-based) of `proposals` for `kernel`, told the
  /// titles of the plans `already` proposed for it, to propose another. An
  /// answer without a plan is an Error (recorded by the port).
  Result<Plan> Propose(const KernelView& kernel, const std::string& lessons, int proposal, int proposals,
                       const std::vector<std::string>& already, const std::string& key);
  /// `count` distinct plans for `kernel` from one call (at most `count` of
  /// those the answer holds). An answer without a plan is an Error.
  Result<std::vector<Plan>> ProposeSeveral(const KernelView& kernel, const std::string& lessons, int count,
                                           const std::string& key);
  /// The new kernel's code. An answer without a code block is an Error.
  Result<std::string> Execute(const KernelView& kernel, const Plan& plan, const std::string& key);
  /// A repaired kernel from a failing one and its log.
  Result<std::string> Fix(const std::string& code, const std::string& status, const std::string& log,
                          const std::string& key);
  /// A lesson from a slow/fast pair; nullopt for "no optimization found".
  Result<std::optional<Lesson>> Summarize(const PairView& pair, const Plan& plan, const std::string& key);

 private:
  std::map<std::string, std::string> Common() const;
  std::map<std::string, std::string> ForPlanner(const KernelView& kernel, const std::string& lessons) const;
  /// The new candidate in an executor's or fixer's answer to `key`, which changes `current`.
  /// Tells the port that the answer to `key` was not usable, and why; the Error to return.
  Error Rejected(const std::string& key, const std::string& reason);
  Result<std::string> CodeIn(const std::string& role, const std::string& answer, const std::string& current,
                             const std::string& key);
  ModelPort& model_;
  PromptTemplates templates_;
  TaskBrief brief_;
};

}  // namespace accelopt::agents
