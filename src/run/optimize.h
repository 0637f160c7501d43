#pragma once
/// What `optimize` and `resume` wire together: the store-backed model port
/// and evaluator (so a resumed run pays for nothing twice) and the listener
/// that records the search as it goes and shows progress.

#include <chrono>
#include <memory>
#include <optional>
#include <string>

#include "agents/agents.h"
#include "llm/llm_client.h"
#include "run/progress.h"
#include "search/beam_search.h"
#include "search/tuning.h"
#include "service/evaluator.h"
#include "store/store.h"
#include "targets/target.h"

namespace accelopt::run {

/// Answers a request key from the store when it was answered before;
/// otherwise asks the client and stores the answer before returning it.
class StoreModelPort : public agents::ModelPort {
 public:
  StoreModelPort(store::Store& store, llm::LlmClient& client, int64_t run_id, std::string task);
  Result<std::string> Ask(const std::string& role, const std::string& prompt, const std::string& key) override;
  /// Kept with the recorded answer: the call's record says why its answer was not used.
  void Reject(const std::string& key, const std::string& reason) override;
  /// Printed on the progress stream, with the task's name.
  void Note(const std::string& key, const std::string& note) override;
  /// Each model call is shown there as a wait for the model in its role while it lasts (null: not shown).
  void ShowWaitsIn(LiveProgress* progress) { progress_ = progress; }

 private:
  store::Store& store_;
  llm::LlmClient& client_;
  int64_t run_id_;
  std::string task_;
  LiveProgress* progress_ = nullptr;
};

/// Where a task's evaluations go, and what its jobs carry besides their sources.
struct EvalRoute {
  service::Evaluator* evaluator = nullptr;  ///< null: a local evaluator on the run's target, made per task
  Json settings = Json::object();           ///< the target's settings as jobs carry them (service::SettingsToJson)
  std::string machine_class;                ///< "" = the target's machine (Target::Machine)
};

/// Evaluates through an Evaluator (as jobs), remembering each profile in the
/// store by task, shape, target, machine and normalized code, so nothing is
/// evaluated twice in a run.
class StoreEvaluator : public search::CandidateEvaluator {
 public:
  /// `target` describes the kernels (language, side-by-side timing); the jobs
  /// name it, and `route.evaluator` (which must outlive this) measures them.
  /// An Error from Make when the task cannot be made a job (its folder cannot be read).
  static Result<std::unique_ptr<StoreEvaluator>> Make(store::Store& store, targets::Target& target,
                                                      const suite::Task& task, std::string shape, int64_t run_id,
                                                      const EvalRoute& route);
  std::vector<Result<Profile>> Evaluate(const std::vector<std::string>& codes) override;
  /// Timed side by side; recorded in the store (beside the evaluations, keyed
  /// by both codes), so a resumed run does not time a pair twice.
  Result<PairedSpeedup> Compare(const std::string& parent, const std::string& child) override;
  Result<Profile> EvaluateOne(const std::string& code);
  /// A task's anchor (a vendor library's kernel, which may link `libraries`),
  /// measured like a candidate and remembered apart from the candidates.
  Result<Profile> EvaluateAnchor(const std::string& code, const std::vector<std::string>& libraries);
  /// Each wait for measurements is shown there while it lasts, in the
  /// evaluator's words when it has them (the device's holder, the queue).
  void ShowWaitsIn(LiveProgress* progress) { progress_ = progress; }

 private:
  StoreEvaluator(store::Store& store, const targets::Target& target, const suite::Task& task, std::string shape,
                 int64_t run_id, const EvalRoute& route, service::TaskSpec spec);
  /// run/task/shape/target@machine/HASH (a code's hash, or compare/A-B for a
  /// pair): a measurement is reused only where it was made.
  std::string Key(const std::string& hash) const;
  /// The key of measurements recorded before keys named the target and the machine.
  std::string LegacyKey(const std::string& hash) const;
  /// What the store holds under Key(hash), else under the older LegacyKey(hash).
  Result<std::optional<Json>> Recorded(const std::string& hash);
  /// A job for `codes` (one to evaluate, two to compare).
  service::EvalJob JobFor(service::JobKind kind, const std::vector<std::pair<std::string, std::string>>& codes,
                          const std::vector<std::string>& libraries = {}) const;
  store::Store& store_;
  const targets::Target& target_;
  const suite::Task& task_;
  std::string shape_;
  int64_t run_id_;
  std::string language_;  ///< of the codes: how their hashes fold them (agents::CodeHash)
  std::unique_ptr<service::Evaluator> own_evaluator_;  ///< when the route names none
  service::Evaluator* evaluator_;
  Json settings_;
  std::string machine_;  ///< the machine class the jobs name
  service::TaskSpec spec_;
  LiveProgress* progress_ = nullptr;
  /// A one-source job's profile, recorded under `key` once it came back whole.
  Result<Profile> StoreProfile(Result<service::EvalOutcome> outcome, const std::string& key);
  /// A wait on the jobs' futures, shown in progress_ when there is one.
  std::optional<LiveProgress::Wait> WaitForJobs(const char* what);
};

/// Records candidates, lessons and checkpoints; prints progress to stderr.
class RunRecorder : public search::SearchListener {
 public:
  RunRecorder(store::Store& store, llm::LlmClient& client, int64_t run_id, std::string task, std::string memory_name,
              int iterations);
  void OnCandidate(Candidate& candidate) override;
  void OnLesson(Lesson& lesson, const Candidate& slow, const Candidate& fast) override;
  void OnComparison(const Candidate& parent, const Candidate& child) override;
  void OnAgentFailure(const std::string& role, const std::string& message) override;
  void OnTuning(const Candidate& kernel, const std::string& what) override;
  void OnDuplicate(const Candidate& sample, const Candidate& original) override;
  void OnProgress(int iteration, int evaluated, int total, const Candidate& best) override;
  void OnIteration(int iteration, const std::vector<Candidate>& beam,
                   const memory::OptimizationMemory& memory) override;
  bool ShouldStop() override;
  /// The counts, the best and the estimate are reported there too (null: not).
  void ReportTo(LiveProgress* progress) { progress_ = progress; }
  /// Why the search stopped early ("" when it did not).
  const std::string& stop_reason() const { return stop_reason_; }
  /// Every agent call that failed, as (role, message), in order.
  const std::vector<std::pair<std::string, std::string>>& agent_failures() const { return agent_failures_; }

 private:
  store::Store& store_;
  llm::LlmClient& client_;
  int64_t run_id_;
  std::string task_, memory_name_;
  int iterations_;
  std::string stop_reason_;
  std::vector<std::pair<std::string, std::string>> agent_failures_;
  // For the elapsed time and the estimate of what is left: when this session
  // began on the task, and the first iteration it ran (a resume starts later).
  std::chrono::steady_clock::time_point started_ = std::chrono::steady_clock::now();
  int first_iteration_ = 0;
  LiveProgress* progress_ = nullptr;
};

/// The search state as a checkpoint, and back.
Json StateToJson(const search::SearchState& state);
Result<search::SearchState> StateFromJson(const Json& j);

/// The lessons a search draws on: the newest of its memory, at most.
constexpr int kMemoryPool = 500;

/// The LLM calls of a run (those for `task` only, when named), added up.
struct LlmTotals {
  size_t calls = 0, answered = 0;  ///< failed calls cost nothing
  long input_tokens = 0, output_tokens = 0;
  double cost_usd = 0;  ///< of the priced calls
  size_t priced = 0;    ///< calls with a price
  size_t unpriced = 0;  ///< answered calls whose model is not in the price table
};
LlmTotals SumLlmCalls(const std::vector<Json>& calls, const std::string& task = "");

/// The model calls of `task` in a run (`calls` as Store::ListLlmCalls gives
/// them) made by the time a candidate of `iteration` was measured: every call
/// of the earlier iterations, and its own iteration's planner, executor and
/// fixer calls; not that iteration's summaries, asked after it was measured.
/// 0 for the baseline (iteration 0). Failed calls count: they were made.
/// A call's iteration is read from its key (`.../TASK/it<N>/...`); a call
/// whose key names none is counted in no iteration.
size_t ModelCallsBy(const std::vector<Json>& calls, const std::string& task, int iteration);

/// What a task's kernels are, for the memory: its name and family, the target's name and kernel language.
LessonTags ScopeOf(const suite::Task& task, const targets::TargetInfo& target);

/// What every prompt says about the task: its signature, shape, reference,
/// the shapes it is also checked on, the build command and the machine, as the target tells them.
agents::TaskBrief BriefFor(const suite::Task& task, const std::string& shape, const targets::Target& target);

/// How one task is optimized within a run.
struct TaskSettings {
  search::SearchOptions search;
  std::string memory_name;  ///< lessons start from and go to this memory
  std::string shape = "bench";
  std::string prompts_dir;  ///< the target's prompt templates
  EvalRoute route;          ///< where its kernels are measured (default: here, on `target`)
  LiveProgress* progress = nullptr;  ///< told what the search does and waits for (null: nothing recorded)
  bool anchors = false;              ///< measure the task's vendor anchor at the end (RunConfig::anchors)
};

/// How much of a task's search was measured while other processes loaded the machine.
struct Disturbance {
  int evaluations = 0, disturbed_evaluations = 0;  ///< candidates measured; of those, every series disturbed
  int comparisons = 0, disturbed_comparisons = 0;  ///< children compared with their parent; of those, disturbed
  int retried_series = 0;  ///< series measured again after a disturbance (evaluations and comparisons)
};

struct TaskResult {
  std::string task;
  Candidate baseline, best;
  /// The best's speedup over the baseline step by step along its lineage (each
  /// step timed side by side, undisturbed): what chose it.
  Evidence evidence;
  /// The best timed against the baseline directly, side by side, at the end
  /// of the search (absent when the target cannot, or the best is the baseline).
  std::optional<PairedSpeedup> vs_baseline;
  /// The task's anchors measured at the end (`optimize --anchors`): a name
  /// (the target's vendor label) and its profile, scored like the candidates.
  std::vector<std::pair<std::string, Profile>> anchors;
  Disturbance disturbance;
  double cost = 0;              ///< of the priced LLM calls for this task
  long unknown_cost_calls = 0;  ///< calls whose price is unknown
  std::string stopped;          ///< why the search stopped early, "" if it did not
  /// The agent calls that failed in this session, as (role, message): an
  /// agent left without an answer (a recording that has none, a model that
  /// did not answer) proposed nothing there.
  std::vector<std::pair<std::string, std::string>> agent_failures;
};

/// The task's result as the run's summary records it (`optimize --json` prints the list).
Json ToJson(const TaskResult& r);

/// A task's best as its run chose it: the run's recorded choice (`summary`,
/// the list of ToJson(TaskResult) a finished run keeps: confirmed against the
/// baseline directly) where it names one of `candidates`, else the
/// side-by-side evidence's (BestByEvidence). What `show` and `export fib` print.
BestCandidate RunsBest(const Json& summary, const std::string& task, const std::vector<const Candidate*>& candidates);

/// What was measured disturbed among `candidates` (each counted once by hash).
Disturbance DisturbanceOf(const std::vector<Candidate>& candidates);

/// Optimizes one task within run `run_id`: the baseline (evaluated once), then
/// the beam search from the latest checkpoint (or the start), recording as it
/// goes. `target` describes the kernels; they are measured where
/// settings.route says (by default on `target`, in this process). Resuming a
/// killed run calls this again with the same run.
Result<TaskResult> OptimizeTask(const TaskSettings& settings, const suite::Task& task, int64_t run_id, store::Store& db,
                                llm::LlmClient& client, targets::Target& target);

}  // namespace accelopt::run
