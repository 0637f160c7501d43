#include "run/optimize.h"

#include <fmt/core.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <map>
#include <set>

#include "agents/parse.h"
#include "core/format.h"
#include "core/text.h"

namespace accelopt::run {

StoreModelPort::StoreModelPort(store::Store& store, llm::LlmClient& client, int64_t run_id, std::string task)
    : store_(store), client_(client), run_id_(run_id), task_(std::move(task)) {}

Result<std::string> StoreModelPort::Ask(const std::string& role, const std::string& prompt, const std::string& key) {
  auto recorded = store_.GetLlmCall(key);
  if (!recorded) return recorded.error();
  if (*recorded && (**recorded).value("error", "").empty()) return (**recorded).value("response", "");
  llm::CallRecord call;
  std::optional<LiveProgress::Wait> waiting;
  if (progress_) waiting.emplace(progress_->Waiting("the model (" + role + ")"));
  auto answer = client_.Chat(role, {{"user", prompt}}, &call);
  waiting.reset();
  Json record = call.ToJson();
  record["task"] = task_;
  record["key"] = key;
  // A failed call is kept for accounting under its own key, so a resume asks again.
  std::string stored_key = answer ? key : key + "#failed-" + call.id;
  if (auto s = store_.PutLlmCall(stored_key, run_id_, role, record); !s) return s.error();
  if (!answer) return answer.error();
  return answer->text;
}

void StoreModelPort::Reject(const std::string& key, const std::string& reason) {
  if (auto s = store_.RejectLlmCall(key, reason); !s) fmt::print(stderr, "warning: {}\n", s.error().message);
}

void StoreModelPort::Note(const std::string& key, const std::string& note) {
  (void)key;
  fmt::print(stderr, "  [{}] {}\n", task_, note);
}

Result<std::unique_ptr<StoreEvaluator>> StoreEvaluator::Make(store::Store& store, targets::Target& target,
                                                             const suite::Task& task, std::string shape,
                                                             int64_t run_id, const EvalRoute& route) {
  auto spec = service::TaskSpecOf(task, shape);
  if (!spec) return spec.error();
  auto evaluator = std::unique_ptr<StoreEvaluator>(
      new StoreEvaluator(store, target, task, std::move(shape), run_id, route, std::move(*spec)));
  if (!route.evaluator) {
    // Here, on the run's own target, which takes its device's lock itself as it always has.
    service::LocalEvaluatorOptions local;
    local.target = &target;
    local.device_lock = false;
    evaluator->own_evaluator_ = service::MakeLocalEvaluator(std::move(local));
    evaluator->evaluator_ = evaluator->own_evaluator_.get();
  }
  return evaluator;
}

StoreEvaluator::StoreEvaluator(store::Store& store, const targets::Target& target, const suite::Task& task,
                               std::string shape, int64_t run_id, const EvalRoute& route, service::TaskSpec spec)
    : store_(store),
      target_(target),
      task_(task),
      shape_(std::move(shape)),
      run_id_(run_id),
      language_(ScopeOf(task, target.Describe()).language),
      evaluator_(route.evaluator),
      settings_(route.settings),
      machine_(route.machine_class.empty() ? target.Machine() : route.machine_class),
      spec_(std::move(spec)) {}

std::string StoreEvaluator::Key(const std::string& hash) const {
  const targets::EvaluationJob job{task_.name, shape_, hash, target_.name(), machine_};
  return "run" + std::to_string(run_id_) + "/" + job.Key();
}

std::string StoreEvaluator::LegacyKey(const std::string& hash) const {
  return "run" + std::to_string(run_id_) + "/" + task_.name + "/" + shape_ + "/" + hash;
}

Result<std::optional<Json>> StoreEvaluator::Recorded(const std::string& hash) {
  auto recorded = store_.GetEvaluation(Key(hash));
  // Recorded before keys named the target and the machine: the run's own target measured it.
  if (recorded && !*recorded) recorded = store_.GetEvaluation(LegacyKey(hash));
  return recorded;
}

service::EvalJob StoreEvaluator::JobFor(service::JobKind kind,
                                        const std::vector<std::pair<std::string, std::string>>& codes,
                                        const std::vector<std::string>& libraries) const {
  service::EvalJob job;
  job.kind = kind;
  job.task = spec_;
  job.target = target_.name();
  job.settings = settings_;
  job.machine_class = machine_;
  for (const auto& [label, code] : codes)
    job.sources.push_back({label, code, agents::CodeHash(code, language_), libraries});
  return job;
}

std::optional<LiveProgress::Wait> StoreEvaluator::WaitForJobs(const char* what) {
  if (!progress_) return std::nullopt;
  return progress_->Waiting(what, [this] { return evaluator_->Waiting(); });
}

Result<Profile> StoreEvaluator::EvaluateOne(const std::string& code) { return std::move(Evaluate({code}).front()); }

// Kept under its own key: the same code as a candidate (which could not link
// the vendor's library) is a different measurement.
Result<Profile> StoreEvaluator::EvaluateAnchor(const std::string& code, const std::vector<std::string>& libraries) {
  const std::string key = Key("anchor-" + agents::CodeHash(code, language_));
  auto recorded = store_.GetEvaluation(key);
  if (!recorded) return recorded.error();
  if (*recorded) return ProfileFromJson(**recorded);
  auto waiting = WaitForJobs("the task's anchor");
  auto futures = evaluator_->Submit({JobFor(service::JobKind::kEvaluate, {{"anchor", code}}, libraries)});
  return StoreProfile(futures.front().get(), key);
}

Result<Profile> StoreEvaluator::StoreProfile(Result<service::EvalOutcome> outcome, const std::string& key) {
  if (!outcome) return outcome.error();
  if (outcome->profiles.size() != 1)
    return Error{"an evaluation came back with " + std::to_string(outcome->profiles.size()) + " profiles"};
  if (auto s = store_.PutEvaluation(key, run_id_, task_.name, outcome->profiles.front().ToJson()); !s)
    return s.error();
  return outcome->profiles.front();
}

// Codes evaluated before in this run are answered from the store; the others
// are submitted as jobs together (a local evaluator builds them as one batch,
// sharing inputs and reference outputs; workers take them one each), and each
// profile is stored as soon as its job is done.
std::vector<Result<Profile>> StoreEvaluator::Evaluate(const std::vector<std::string>& codes) {
  std::vector<Result<Profile>> out(codes.size(), Error{"not evaluated"});
  std::vector<std::string> keys;
  std::vector<service::EvalJob> jobs;
  std::vector<size_t> positions;  // where each job's result goes
  for (size_t i = 0; i < codes.size(); ++i) {
    const std::string hash = agents::CodeHash(codes[i], language_);
    keys.push_back(Key(hash));
    auto recorded = Recorded(hash);
    if (!recorded)
      out[i] = recorded.error();
    else if (*recorded)
      out[i] = ProfileFromJson(**recorded);
    else {
      jobs.push_back(JobFor(service::JobKind::kEvaluate, {{"candidate", codes[i]}}));
      positions.push_back(i);
    }
  }
  if (jobs.empty()) return out;
  auto waiting = WaitForJobs("an evaluation");
  auto futures = evaluator_->Submit(std::move(jobs));
  for (size_t k = 0; k < futures.size(); ++k) out[positions[k]] = StoreProfile(futures[k].get(), keys[positions[k]]);
  return out;
}

Result<PairedSpeedup> StoreEvaluator::Compare(const std::string& parent, const std::string& child) {
  if (!target_.ComparesSideBySide()) return PairedSpeedup{};  // no pairs: the medians decide
  // Kept like an evaluation, by target and machine, under both codes' hashes.
  const std::string pair = "compare/" + agents::CodeHash(parent, language_) + "-" + agents::CodeHash(child, language_);
  const std::string key = Key(pair);
  auto recorded = Recorded(pair);
  if (!recorded) return recorded.error();
  if (*recorded) {
    auto speedup = PairedSpeedupFromJson(**recorded);
    if (!speedup) return Error{"recorded comparison " + key + ": " + speedup.error().message};
    return *speedup;
  }
  auto waiting = WaitForJobs("a side-by-side comparison");
  auto futures = evaluator_->Submit({JobFor(service::JobKind::kCompare, {{"parent", parent}, {"child", child}})});
  auto result = futures.front().get();
  waiting.reset();
  if (!result) return result.error();
  if (result->profiles.size() != 2) return Error{"a comparison came back without both profiles"};
  const Profile& a = result->profiles[0];
  const Profile& b = result->profiles[1];
  if (!result->speedup)
    return Error{std::string("side by side, the parent was ") + VerdictName(a.status) + " and the child " +
                 VerdictName(b.status) + ": " + (b.status != Verdict::kOk ? b.message : a.message)};
  const PairedSpeedup& s = *result->speedup;
  Json record = ToJson(s);
  record["parent"] = a.ToJson();
  record["child"] = b.ToJson();
  if (auto put = store_.PutEvaluation(key, run_id_, task_.name, record); !put) return put.error();
  return s;
}

RunRecorder::RunRecorder(store::Store& store, llm::LlmClient& client, int64_t run_id, std::string task,
                         std::string memory_name, int iterations)
    : store_(store),
      client_(client),
      run_id_(run_id),
      task_(std::move(task)),
      memory_name_(std::move(memory_name)),
      iterations_(iterations) {}

void RunRecorder::OnCandidate(Candidate& c) {
  auto id = store_.AddCandidate({run_id_, task_, c});
  if (id)
    c.id = *id;
  else
    fmt::print(stderr, "warning: {}\n", id.error().message);
}

void RunRecorder::OnLesson(Lesson& lesson, const Candidate& slow, const Candidate& fast) {
  auto id = store_.AddLesson({lesson, memory_name_, run_id_, slow.id, fast.id});
  if (id)
    lesson.id = *id;
  else
    fmt::print(stderr, "warning: {}\n", id.error().message);
  fmt::print(stderr, "  lesson ({:.2f}x): {}\n", lesson.speedup, lesson.title);
}

void RunRecorder::OnComparison(const Candidate& parent, const Candidate& child) {
  const PairedSpeedup& s = *child.vs_parent;
  if (child.id != 0)
    if (auto put = store_.SetVsParent(child.id, s); !put) fmt::print(stderr, "warning: {}\n", put.error().message);
  fmt::print(stderr, "  candidate {} against its parent {}{}: {}{}\n", child.id, parent.id,
             s.pairs > 0 ? ", side by side" : "", PairedSpeedupText(s),
             s.disturbed ? ": decides nothing (neither the beam nor a lesson)" : "");
}

void RunRecorder::OnAgentFailure(const std::string& role, const std::string& message) {
  fmt::print(stderr, "  {} failed: {}\n", role, message.substr(0, 300));
  agent_failures_.emplace_back(role, message);
}

void RunRecorder::OnTuning(const Candidate& kernel, const std::string& what) {
  fmt::print(stderr, "[{}] tuning candidate {}: {}\n", task_, kernel.id, what);
}

void RunRecorder::OnDuplicate(const Candidate& sample, const Candidate& original) {
  const std::string plan = FirstLine(sample.plan);
  const bool variant = sample.plan.find(search::kTunedMark) != std::string::npos;
  fmt::print(stderr, "[{}] {} for plan '{}' is candidate {} again (comments and spacing aside): not evaluated twice\n",
             task_, variant ? "a tuning variant of the kernel" : "the kernel written", plan.substr(0, 120),
             original.id);
}

namespace {

// A candidate's % of peak as the live progress takes it: NaN when it has none (failed, or unscored).
double ScoredPercent(const Candidate& c) {
  return c.ok() && c.profile.scored_against ? c.profile.percent_of_peak : std::nan("");
}

}  // namespace

void RunRecorder::OnProgress(int iteration, int evaluated, int total, const Candidate& best) {
  llm::Totals t = client_.totals();
  std::string cost = fmt::format("${:.4f}", t.cost_usd) + (t.unknown_cost_calls ? " + unknown" : "");
  const std::string latency = best.ok() ? FormatSeconds(best.latency()) : "-";
  const std::string score = best.profile.metric         ? MeasureText(best.profile)
                            : best.profile.scored_against ? fmt::format("{:.2f}% of peak ({})",
                                                                        best.profile.percent_of_peak, latency)
                                                          : latency + " (unscored: no calibration)";
  if (first_iteration_ == 0) first_iteration_ = iteration;
  // Iterations done in this session, the current one in part: what the estimate divides by.
  const double part = total > 0 ? static_cast<double>(evaluated) / total : 0;
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
  const double done = iteration - first_iteration_ + part, all = iterations_ - first_iteration_ + 1;
  fmt::print(stderr, "[{}] iteration {}/{}: evaluated {}/{}, best {}, tokens {} in / {} out, cost {}{}\n", task_,
             iteration, iterations_, evaluated, total, score, t.input_tokens, t.output_tokens, cost,
             ElapsedAndEta(elapsed, done, all));
  if (progress_)
    progress_->Report(iteration, evaluated, total, ScoredPercent(best),
                      done > 0 && all > done ? elapsed * (all - done) / done : -1);
}

void RunRecorder::OnIteration(int iteration, const std::vector<Candidate>& beam,
                              const memory::OptimizationMemory& memory) {
  search::SearchState state;
  state.completed_iterations = iteration;
  state.beam = beam;
  state.memory = memory.lessons();
  if (auto s = store_.PutIteration(run_id_, task_, iteration, StateToJson(state)); !s)
    fmt::print(stderr, "warning: {}\n", s.error().message);
}

bool RunRecorder::ShouldStop() {
  if (auto spent = client_.BudgetSpent()) {
    stop_reason_ = *spent;
    return true;
  }
  return false;
}

Json StateToJson(const search::SearchState& state) {
  Json beam = Json::array(), memory = Json::array();
  for (const auto& c : state.beam) beam.push_back(ToJson(c));
  for (const auto& l : state.memory) memory.push_back(ToJson(l));
  return {{"completed_iterations", state.completed_iterations}, {"beam", beam}, {"memory", memory}};
}

Result<search::SearchState> StateFromJson(const Json& j) {
  search::SearchState state;
  try {
    state.completed_iterations = j.at("completed_iterations");
    for (const auto& c : j.at("beam")) {
      auto candidate = CandidateFromJson(c);
      if (!candidate) return candidate.error();
      state.beam.push_back(*candidate);
    }
    for (const auto& l : j.at("memory")) {
      auto lesson = LessonFromJson(l);
      if (!lesson) return Error{"checkpoint: " + lesson.error().message};
      state.memory.push_back(*lesson);
    }
  } catch (const Json::exception& e) {
    return Error{std::string("checkpoint: ") + e.what()};
  }
  return state;
}

agents::TaskBrief BriefFor(const suite::Task& task, const std::string& shape, const targets::Target& target) {
  const targets::TargetInfo info = target.Describe();
  agents::TaskBrief brief;
  brief.task = task.name;
  brief.description = task.description;
  brief.signature = target.Signature(task);
  if (auto bound = suite::Bind(task, shape)) brief.shape = target.ShapeDeclarations(*bound);
  for (const std::string& other : target.CheckedShapes(task, shape))
    if (auto b = suite::Bind(task, other))
      brief.checked_shapes +=
          (brief.checked_shapes.empty() ? "" : "; ") + other + " (" + suite::ShapeText(b->params) + ")";
  auto reference = ReadFile(task.reference_path(info.file_extension));
  brief.reference = reference ? *reference : "";
  brief.flags = info.build_command;
  if (!info.fence_tags.empty()) brief.fence_tags = info.fence_tags;
  brief.entry_point = info.entry_point;
  brief.isa = target.MachineText();
  brief.tolerance = task.tolerance;
  brief.read_answer = target.AnswerReaderFor(task);
  brief.values = target.PromptValues(task);
  return brief;
}

LessonTags ScopeOf(const suite::Task& task, const targets::TargetInfo& target) {
  // A code task names its own language; a kernel's is its target's.
  const std::string& language = task.kind == suite::TaskKind::kCode ? task.code.language : target.language;
  return {task.name, task.family, "", target.name, language, {}};
}

namespace {

// Up to this many of the best-evidenced candidates are timed against the baseline directly.
constexpr size_t kContenders = 3;

// Chooses result.best among `known`: the candidates proven faster step by
// step (EvidenceFor), largest chained speedup first, each then timed against
// the baseline directly; the first the direct comparison confirms (or cannot
// judge: no side-by-side timing, or a disturbed one, where the chain stands) is
// the best. One the direct comparison finds no faster than the baseline is
// passed over, and said so; none left: the baseline.
Status ChooseBest(const std::vector<Candidate>& known, const Candidate& baseline, double margin,
                  search::CandidateEvaluator& evaluator, TaskResult& result) {
  result.best = baseline;
  result.evidence = {};
  std::vector<const Candidate*> all;
  for (const auto& c : known) all.push_back(&c);
  size_t tried = 0;
  for (const BestCandidate& ranked : RankByEvidence(all, margin)) {
    const Candidate* c = ranked.candidate;
    const Evidence& evidence = ranked.evidence;
    if (c->hash == baseline.hash) continue;
    if (tried++ == kContenders) break;
    auto direct = evaluator.Compare(baseline.code, c->code);
    if (!direct) return direct.error();
    const bool judged = direct->pairs > 0 && !direct->disturbed;
    if (judged && direct->ci_low <= 1.0 + margin) {
      fmt::print(stderr,
                 "[{}] candidate {}: faster step by step ({:.2f}x chained) but against the baseline directly {}: "
                 "not the best\n",
                 result.task, c->id, evidence.estimate, PairedSpeedupText(*direct));
      continue;
    }
    result.best = *c;
    result.evidence = evidence;
    if (direct->pairs > 0) result.vs_baseline = *direct;
    return Ok{};
  }
  return Ok{};
}

// The task's vendor anchor, when it has one for this target (vendor.cpp on
// OpenBLAS for the cpu), measured like a candidate. An anchor the engine
// cannot measure is said and left out: it is no verdict on the run.
void MeasureAnchors(const suite::Task& task, const targets::TargetInfo& info, StoreEvaluator& evaluator,
                    TaskResult& result) {
  const std::string path = task.dir + "/vendor" + info.file_extension;
  if (info.vendor_label.empty() || !std::filesystem::exists(path)) return;
  auto code = ReadFile(path);
  if (!code) {
    fmt::print(stderr, "[{}] anchor {}: {}\n", task.name, info.vendor_label, code.error().message);
    return;
  }
  fmt::print(stderr, "[{}] measuring the anchor {} ({})...\n", task.name, info.vendor_label, path);
  auto profile = evaluator.EvaluateAnchor(*code, info.vendor_libraries);
  if (!profile) {
    fmt::print(stderr, "[{}] anchor {} not measured: {}\n", task.name, info.vendor_label, profile.error().message);
    return;
  }
  result.anchors.push_back({info.vendor_label, *profile});
}

}  // namespace

BestCandidate RunsBest(const Json& summary, const std::string& task, const std::vector<const Candidate*>& candidates) {
  BestCandidate best = BestByEvidence(candidates);
  if (!summary.is_array()) return best;
  for (const Json& t : summary) {
    if (!t.is_object() || t.value("task", "") != task || !t.contains("best_candidate")) continue;
    const int64_t id = t["best_candidate"].is_number_integer() ? t["best_candidate"].get<int64_t>() : 0;
    for (const Candidate* c : candidates)
      if (c->id == id && c != best.candidate) {
        best.candidate = c;
        const Json chained = t.value("speedup_chained", Json::object());
        best.evidence = {chained.value("estimate", 1.0), chained.value("low", 1.0), chained.value("high", 1.0),
                         chained.value("steps", 0), chained.value("medians", false)};
      }
  }
  return best;
}

Disturbance DisturbanceOf(const std::vector<Candidate>& candidates) {
  Disturbance d;
  std::set<std::string> seen;
  for (const auto& c : candidates) {
    if (!seen.insert(c.hash).second) continue;
    if (c.profile.latency) {
      ++d.evaluations;
      d.disturbed_evaluations += c.profile.disturbed ? 1 : 0;
      d.retried_series += c.profile.disturbed_series;
    }
    if (c.vs_parent) {
      ++d.comparisons;
      d.disturbed_comparisons += c.vs_parent->disturbed ? 1 : 0;
      d.retried_series += c.vs_parent->disturbed_series;
    }
  }
  return d;
}

Json ToJson(const TaskResult& r) {
  Json j = {{"task", r.task},
            {"baseline_s", r.baseline.latency()},
            {"best_s", r.best.latency()},
            {"best_candidate", r.best.id},
            {"baseline_candidate", r.baseline.id},
            {"percent_before", r.baseline.profile.percent_of_peak},
            {"percent_after", r.best.profile.percent_of_peak},
            {"metric_before", r.baseline.profile.metric ? Json(r.baseline.profile.metric->median) : Json()},
            {"metric_after", r.best.profile.metric ? Json(r.best.profile.metric->median) : Json()},
            {"speedup_chained",
             {{"estimate", r.evidence.estimate},
              {"low", r.evidence.low},
              {"high", r.evidence.high},
              {"steps", r.evidence.steps},
              {"medians", r.evidence.medians}}},
            {"speedup_vs_baseline", r.vs_baseline ? ToJson(*r.vs_baseline) : Json()},
            {"medians_ratio", r.best.ok() && r.baseline.ok() ? Json(r.baseline.latency() / r.best.latency()) : Json()},
            {"measured",
             {{"evaluations", r.disturbance.evaluations},
              {"disturbed_evaluations", r.disturbance.disturbed_evaluations},
              {"comparisons", r.disturbance.comparisons},
              {"disturbed_comparisons", r.disturbance.disturbed_comparisons},
              {"retried_series", r.disturbance.retried_series}}},
            {"cost_usd", r.cost},
            {"unknown_cost_calls", r.unknown_cost_calls},
            {"stopped", r.stopped}};
  if (!r.anchors.empty()) {
    j["anchors"] = Json::array();
    for (const auto& [name, profile] : r.anchors)
      j["anchors"].push_back(
          {{"name", name},
           {"status", VerdictName(profile.status)},
           {"median_s", profile.latency ? Json(profile.latency->median_s) : Json()},
           {"percent_of_peak", profile.latency && profile.scored_against ? Json(profile.percent_of_peak) : Json()},
           {"disturbed", profile.disturbed}});
  }
  return j;
}

Result<TaskResult> OptimizeTask(const TaskSettings& f, const suite::Task& task, int64_t run_id, store::Store& db,
                                llm::LlmClient& client, targets::Target& target) {
  auto made = StoreEvaluator::Make(db, target, task, f.shape, run_id, f.route);
  if (!made) return made.error();
  StoreEvaluator& evaluator = **made;
  evaluator.ShowWaitsIn(f.progress);
  StoreModelPort port(db, client, run_id, task.name);
  port.ShowWaitsIn(f.progress);
  if (f.progress) f.progress->StartTask(task.name, f.search.iterations);
  auto templates = agents::PromptTemplates::Load(f.prompts_dir);
  if (!templates) return templates.error();
  const targets::TargetInfo info = target.Describe();
  agents::TaskBrief brief = BriefFor(task, f.shape, target);
  brief.tune_budget = f.search.tune_budget;
  agents::Agents agents(port, *templates, brief);
  const std::string& memory_name = f.memory_name;
  RunRecorder recorder(db, client, run_id, task.name, memory_name, f.search.iterations);
  recorder.ReportTo(f.progress);

  TaskResult result{task.name};
  search::SearchState state;
  auto checkpoint = db.LatestIteration(run_id, task.name);
  if (!checkpoint) return checkpoint.error();
  auto candidates = db.ListCandidates(run_id, task.name);
  if (!candidates) return candidates.error();
  // Hashes are computed again from the code, not read: a store made before
  // content hashes were SHA-256 holds 16-digit FNV ones, which would match no
  // new kernel (every duplicate evaluated again) and could be collided.
  const std::string language = ScopeOf(task, info).language;
  std::map<int64_t, std::string> hashes;  // the lineage by hash, as the search follows it
  for (auto& stored : *candidates) {
    stored.candidate.hash = agents::CodeHash(stored.candidate.code, language);
    hashes[stored.candidate.id] = stored.candidate.hash;
  }
  for (const auto& stored : *candidates) {
    Candidate c = stored.candidate;
    c.parent_hash = hashes[c.parent_id];
    if (c.iteration == 0) result.baseline = c;
    state.known.push_back(c);
  }
  if (*checkpoint) {
    auto restored = StateFromJson((*checkpoint)->second);
    if (!restored) return restored.error();
    restored->known = std::move(state.known);
    for (Candidate& c : restored->beam) {
      c.hash = agents::CodeHash(c.code, language);
      if (hashes.count(c.parent_id)) c.parent_hash = hashes[c.parent_id];
    }
    state = *restored;
    fmt::print(stderr, "[{}] resuming after iteration {}\n", task.name, state.completed_iterations);
  } else {
    if (result.baseline.id == 0) {
      auto code = target.Baseline(task);
      if (!code) return code.error();
      fmt::print(stderr, "[{}] evaluating the baseline...\n", task.name);
      auto profile = evaluator.EvaluateOne(*code);
      if (!profile) return profile.error();
      result.baseline = {0, 0, 0, "", "", *code, agents::CodeHash(*code, language), *profile};
      recorder.OnCandidate(result.baseline);
      state.known.push_back(result.baseline);
    }
    if (!result.baseline.ok())
      return Error{"the baseline of task '" + task.name + "' is not ok: " + result.baseline.profile.message};
    state.beam = {result.baseline};
    auto lessons = db.ListLessons(memory_name, kMemoryPool);
    if (!lessons) return lessons.error();
    for (const auto& l : *lessons) state.memory.push_back(l.lesson);
    if (!state.memory.empty())
      fmt::print(stderr, "[{}] starting with {} lessons from memory '{}'\n", task.name, state.memory.size(),
                 memory_name);
  }
  state.baseline = result.baseline;
  state.best = state.beam.front();
  search::SearchOptions options = f.search;
  options.scope = ScopeOf(task, info);
  // The class of machine its kernels are measured on: its lessons are
  // verified there, and a planner is given that class's lessons first.
  options.scope.machine = f.route.machine_class.empty() ? target.Machine() : f.route.machine_class;
  if (task.kind == suite::TaskKind::kCode) options.noise_margin = task.code.noise_margin;
  search::SearchState final_state = search::RunBeamSearch(agents, evaluator, state, options, recorder,
                                                          "run" + std::to_string(run_id) + "/" + task.name);
  result.stopped = recorder.stop_reason();
  result.agent_failures = recorder.agent_failures();
  if (!final_state.engine_failure.empty())
    return Error{"task '" + task.name + "': the engine could not evaluate a candidate of iteration " +
                 std::to_string(final_state.completed_iterations + 1) +
                 " (no kernel is blamed, and the iteration is not recorded): " + final_state.engine_failure};

  // The best this run found for the task, by the side-by-side evidence over
  // every candidate the search knows (those recorded before a resume included),
  // confirmed against the baseline directly.
  if (auto chosen = ChooseBest(final_state.known, result.baseline, options.noise_margin, evaluator, result); !chosen)
    return chosen.error();
  if (f.anchors) MeasureAnchors(task, target.Describe(), evaluator, result);
  if (f.progress) f.progress->ReportBest(ScoredPercent(result.best));
  result.disturbance = DisturbanceOf(final_state.known);
  if (result.vs_baseline) {
    result.disturbance.retried_series += result.vs_baseline->disturbed_series;
    if (result.vs_baseline->disturbed) ++result.disturbance.disturbed_comparisons;
    ++result.disturbance.comparisons;
  }
  auto calls = db.ListLlmCalls(run_id);
  if (!calls) return calls.error();
  const LlmTotals totals = SumLlmCalls(*calls, task.name);
  result.cost = totals.cost_usd;
  result.unknown_cost_calls = static_cast<long>(totals.unpriced);
  return result;
}

LlmTotals SumLlmCalls(const std::vector<Json>& calls, const std::string& task) {
  LlmTotals t;
  for (const auto& c : calls) {
    if (!task.empty() && c.value("task", "") != task) continue;
    ++t.calls;
    if (c.contains("usage")) {
      t.input_tokens += c["usage"].value("input_tokens", 0L);
      t.output_tokens += c["usage"].value("output_tokens", 0L);
    }
    const bool answered = c.value("error", "").empty();
    if (answered) ++t.answered;
    if (c.contains("cost_usd") && c["cost_usd"].is_number()) {
      t.cost_usd += c["cost_usd"].get<double>();
      ++t.priced;
    } else if (answered) {
      ++t.unpriced;
    }
  }
  return t;
}

namespace {

// The iteration a call's key names (`run3/silu/it2/...` -> 2), if any.
std::optional<int> IterationOfKey(const std::string& key, const std::string& task) {
  const std::string marker = "/" + task + "/it";
  const size_t at = key.find(marker);
  if (at == std::string::npos) return std::nullopt;
  size_t i = at + marker.size(), digits = i;
  while (i < key.size() && std::isdigit(static_cast<unsigned char>(key[i]))) ++i;
  if (i == digits || i > digits + 6 || (i < key.size() && key[i] != '/')) return std::nullopt;
  return std::stoi(key.substr(digits, i - digits));
}

}  // namespace

size_t ModelCallsBy(const std::vector<Json>& calls, const std::string& task, int iteration) {
  size_t n = 0;
  for (const auto& c : calls) {
    if (c.value("task", "") != task) continue;
    const auto it = IterationOfKey(c.value("key", ""), task);
    if (!it || *it > iteration) continue;
    if (*it == iteration && c.value("agent_role", "") == "summarizer") continue;
    ++n;
  }
  return n;
}

}  // namespace accelopt::run
