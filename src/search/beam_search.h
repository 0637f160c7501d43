#pragma once
/// The beam search over kernels of DESIGN.md section 2, for one task. It
/// proposes (through the agents) and observes (through an evaluator); what
/// happens to its results (storing, progress, memory persistence) is the
/// listener's business, so this layer needs no store.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "agents/agents.h"
#include "core/candidate.h"
#include "core/json_io.h"
#include "core/profile.h"
#include "eval/stats.h"
#include "memory/memory.h"

namespace accelopt::search {

/// How the N plans for one beam kernel are asked for.
/// One call is the default: side by side with a real model (one iteration,
/// N=4, on adamw, swiglu and bmm) both modes gave 12 distinct plans and no
/// duplicate kernel, and one call asked 3 planner prompts instead of 12 and
/// gave an equal or faster best kernel on each task.
enum class ProposalMode {
  kSequential,  ///< one call per plan, each told the titles of those already proposed
  kOneCall,     ///< one call that returns N distinct plans
};
const char* ProposalModeName(ProposalMode mode);
std::optional<ProposalMode> ProposalModeFromName(const std::string& name);

struct SearchOptions {
  int iterations = 15;              ///< I
  int plans = 12;                   ///< N plans per beam kernel
  int beam = 6;                     ///< B
  int samples = 2;                  ///< K executor samples per plan
  int top_k = 8;                    ///< lesson pairs per iteration
  int memory_capacity = 16;         ///< ExpN: lessons given to one planner prompt, at most
  size_t lesson_bytes = 12 * 1024;  ///< of the lessons block in one planner prompt, at most
  double max_threshold = 1.04;      ///< a pair is a positive lesson above this speedup
  double min_threshold = 1.15;      ///< a pair is a negative lesson below 1/this
  int fix_rounds = 1;               ///< R fixer rounds for a failing candidate; 0 disables
  /// A child enters the beam only when its side-by-side speedup over its
  /// parent is above 1 + this at the low end of its interval (a code
  /// task's noise margin; 0 for kernels).
  double noise_margin = 0;
  int llm_parallelism = 8;  ///< agent calls in flight at once (the backend may limit further)
  ProposalMode proposals = ProposalMode::kOneCall;
  /// Variants of each new kernel's declared tunable constants (search/tuning.h)
  /// the engine builds and times itself; 0 turns the sweep off.
  int tune_budget = 8;
  /// What the search's kernels are (task, family, target, language; the bound
  /// is each kernel's own): the memory is asked for lessons about such
  /// kernels, and the lessons learnt are tagged so.
  LessonTags scope;
};

/// Evaluates candidate codes; one profile per code (a verdict is data).
class CandidateEvaluator {
 public:
  virtual ~CandidateEvaluator() = default;
  virtual std::vector<Result<Profile>> Evaluate(const std::vector<std::string>& codes) = 0;
  /// The speedup of `child` over `parent`, their timed calls interleaved in
  /// one window. An Error when the evaluator cannot compare (the default) or
  /// failed: the search then decides from the two medians.
  virtual Result<PairedSpeedup> Compare(const std::string& parent, const std::string& child) {
    (void)parent, (void)child;
    return Error{"this evaluator cannot compare two kernels side by side"};
  }
};

/// Where a search reports what it does. Called on the search's thread.
class SearchListener {
 public:
  virtual ~SearchListener() = default;
  /// A new candidate was evaluated; set its id.
  virtual void OnCandidate(Candidate& candidate) { (void)candidate; }
  /// A lesson was distilled; set its id.
  virtual void OnLesson(Lesson& lesson, const Candidate& slow, const Candidate& fast) {
    (void)lesson, (void)slow, (void)fast;
  }
  /// A kept child was compared with its parent (child.vs_parent is set): side
  /// by side, or where the evaluator cannot, by the ratio of their medians (no pairs).
  virtual void OnComparison(const Candidate& parent, const Candidate& child) { (void)parent, (void)child; }
  /// A new sample's code (comments and spacing aside) is a candidate already
  /// evaluated in this search: it shares that candidate's profile and is not evaluated again.
  virtual void OnDuplicate(const Candidate& sample, const Candidate& original) { (void)sample, (void)original; }
  /// What the engine's sweep of a kernel's tunable constants did (or why an annotation was not used).
  virtual void OnTuning(const Candidate& kernel, const std::string& what) { (void)kernel, (void)what; }
  /// An agent call failed (recorded by the model port already); the search goes on.
  virtual void OnAgentFailure(const std::string& role, const std::string& message) { (void)role, (void)message; }
  /// Progress within an iteration.
  virtual void OnProgress(int iteration, int evaluated, int total, const Candidate& best) {
    (void)iteration, (void)evaluated, (void)total, (void)best;
  }
  /// An iteration finished: the state to resume from.
  virtual void OnIteration(int iteration, const std::vector<Candidate>& beam,
                           const memory::OptimizationMemory& memory) {
    (void)iteration, (void)beam, (void)memory;
  }
  /// Whether to stop before the next iteration (budget spent, interrupted).
  virtual bool ShouldStop() { return false; }
};

struct SearchState {
  int completed_iterations = 0;
  std::vector<Candidate> beam;  ///< best first
  std::vector<Lesson> memory;   ///< the lessons drawn on, newest first
  Candidate best;               ///< the beam's best by the side-by-side evidence (EvidenceFor), or the baseline
  Candidate baseline;
  /// Every candidate evaluated so far in this search (the baseline included):
  /// a new candidate with the same normalized code is a duplicate, not re-evaluated or re-recorded.
  std::vector<Candidate> known;
  /// Set when the engine could not evaluate a candidate (a full disk, a broken
  /// compiler, a store that cannot be written): the search stopped in that
  /// iteration without recording it, so a resume does it again. Never a
  /// kernel's verdict and never sent to the fixer.
  std::string engine_failure;
  /// A plan whose kernel was one evaluated before (another plan's, or an
  /// earlier iteration's): shown to later planners as a duplicate. Kept for
  /// the search's lifetime, not in checkpoints.
  struct Duplicate {
    std::string parent_hash, title;
    int64_t of = 0;  ///< the candidate it repeated
  };
  std::vector<Duplicate> duplicates;
};

/// Runs iterations completed+1 .. options.iterations, or until the engine fails
/// (state.engine_failure). `key_prefix` makes the
/// agents' request keys unique per run and task. Blocks.
SearchState RunBeamSearch(agents::Agents& agents, CandidateEvaluator& evaluator, SearchState state,
                          const SearchOptions& options, SearchListener& listener, const std::string& key_prefix);

/// What the planner is shown about a kernel's profile.
std::string ProfileText(const Profile& profile);

/// The plans that led from the baseline to `c`, oldest first, one numbered
/// line each (the plan's title), following parent hashes through `known`; ""
/// for the baseline.
std::string Lineage(const Candidate& c, const std::vector<Candidate>& known);

/// Every plan tried on `c`, on its ancestors and on their other children,
/// newest first, one line each: its title and its outcome (faster, slower or
/// neutral with its side-by-side interval; not decided when that was
/// measured disturbed; failed with its status; a duplicate). The lines that
/// fit `max_bytes`, then how many were left out; "" when nothing was tried.
std::string AttemptHistory(const Candidate& c, const SearchState& state, double margin, size_t max_bytes = 2048);

}  // namespace accelopt::search
