#include "report/report_data.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <map>
#include <optional>
#include <set>

#include "core/text.h"
#include "run/optimize.h"

namespace accelopt::report {
namespace {

// Logs are kept whole in the store; the page shows their head, which is where
// a compiler's first error and a crash's message are.
constexpr size_t kLogChars = 16 * 1024;

Json Number(double value, bool known) { return known && std::isfinite(value) ? Json(value) : Json(nullptr); }

// Seconds since the epoch of an ISO-8601 UTC time ("2026-11-23T02:46:05Z"); nothing when it is not one.
std::optional<double> EpochSeconds(const std::string& iso) {
  std::tm t{};
  double seconds = 0;
  if (std::sscanf(iso.c_str(), "%d-%d-%dT%d:%d:%lf", &t.tm_year, &t.tm_mon, &t.tm_mday, &t.tm_hour, &t.tm_min,
                  &seconds) != 6)
    return std::nullopt;
  t.tm_year -= 1900;
  t.tm_mon -= 1;
  t.tm_sec = 0;
  return static_cast<double>(timegm(&t)) + seconds;
}

std::string LogOf(const Profile& p) {
  std::string log = p.compile_log;
  if (!p.run_log.empty()) log += (log.empty() ? "" : "\n") + p.run_log;
  if (log.size() > kLogChars) log = log.substr(0, kLogChars) + "\n[... cut: " + std::to_string(log.size()) + " bytes in all]";
  return log;
}

// The task's candidates, looked up by id, with the ids of the best lineage.
struct TaskView {
  std::string name;
  std::vector<const Candidate*> all;
  std::map<int64_t, const Candidate*> by_id;
  const Candidate* baseline = nullptr;
  BestCandidate best;
  bool scored = false;

  double PercentOf(int64_t id) const {
    auto it = by_id.find(id);
    return it != by_id.end() && it->second->ok() ? it->second->profile.percent_of_peak : 0;
  }
};

Json CandidateJson(const Candidate& c, const std::map<std::string, int64_t>& first_by_hash,
                   const std::set<int64_t>& best_lineage) {
  const std::string key = c.hash.empty() ? c.code : c.hash;
  auto first = first_by_hash.find(key);
  const bool duplicate = first != first_by_hash.end() && first->second != c.id;
  return {{"id", c.id},
          {"iteration", c.iteration},
          {"parent", c.parent_id == 0 ? Json(nullptr) : Json(c.parent_id)},
          {"status", VerdictName(c.profile.status)},
          {"percent_of_peak", Number(c.profile.percent_of_peak, c.ok() && c.profile.scored_against)},
          {"latency_s", Number(c.latency(), c.ok())},
          {"disturbed", c.profile.disturbed},
          {"other_load", c.profile.other_load},
          {"duplicate_of", duplicate ? Json(first->second) : Json(nullptr)},
          {"plan_title", c.plan.empty() ? std::string("(baseline)") : FirstLine(c.plan)},
          {"plan", c.plan},
          {"code", c.code},
          {"message", c.profile.message},
          {"log", LogOf(c.profile)},
          {"vs_parent", c.vs_parent ? ToJson(*c.vs_parent) : Json(nullptr)},
          {"best_lineage", best_lineage.count(c.id) > 0}};
}

// The best candidate after each iteration, as the side-by-side evidence chose
// it then, and the step (the comparison with its parent) that made it; the last
// as the run chose it.
Json IterationsJson(const TaskView& view, const Json& summary) {
  int last = 0;
  for (const Candidate* c : view.all) last = std::max(last, c->iteration);
  Json out = Json::array();
  for (int i = 0; i <= last; ++i) {
    std::vector<const Candidate*> so_far;
    for (const Candidate* c : view.all)
      if (c->iteration <= i) so_far.push_back(c);
    const Candidate* best =
        i == last ? run::RunsBest(summary, view.name, so_far).candidate : BestByEvidence(so_far).candidate;
    if (!best) continue;
    Json step = nullptr;
    if (best->vs_parent && best->parent_id != 0) {
      step = ToJson(*best->vs_parent);
      step["parent"] = best->parent_id;
      step["parent_percent"] = Number(view.PercentOf(best->parent_id), view.scored);
    }
    out.push_back({{"iteration", i},
                   {"best_id", best->id},
                   {"best_percent", Number(best->profile.percent_of_peak, view.scored && best->ok())},
                   {"best_latency_s", Number(best->latency(), best->ok())},
                   {"step", step}});
  }
  return out;
}

// Anchors a run recorded for the task (a vendor library's kernel, say), as
// {name, percent_of_peak}; none when it recorded none.
Json AnchorsOf(const Json& summary_entry) {
  Json out = Json::array();
  if (!summary_entry.is_object() || !summary_entry.contains("anchors") || !summary_entry["anchors"].is_array())
    return out;
  for (const Json& a : summary_entry["anchors"])
    if (a.is_object() && a.contains("percent_of_peak") && a["percent_of_peak"].is_number())
      out.push_back({{"name", a.value("name", std::string("anchor"))}, {"percent_of_peak", a["percent_of_peak"]}});
  return out;
}

Json TaskJson(const TaskView& view, const Json& summary) {
  std::set<int64_t> best_lineage;
  for (const Candidate* c = view.best.candidate; c;) {
    best_lineage.insert(c->id);
    auto parent = view.by_id.find(c->parent_id);
    c = c->parent_id != 0 && parent != view.by_id.end() ? parent->second : nullptr;
  }
  std::map<std::string, int64_t> first_by_hash;
  Json candidates = Json::array();
  for (const Candidate* c : view.all) first_by_hash.emplace(c->hash.empty() ? c->code : c->hash, c->id);
  for (const Candidate* c : view.all) candidates.push_back(CandidateJson(*c, first_by_hash, best_lineage));
  Json summary_entry = nullptr;
  if (summary.is_array())
    for (const Json& t : summary)
      if (t.is_object() && t.value("task", "") == view.name) summary_entry = t;
  const Candidate* best = view.best.candidate;
  const Evidence& e = view.best.evidence;
  return {{"name", view.name},
          {"scored", view.scored},
          {"baseline_id", view.baseline ? Json(view.baseline->id) : Json(nullptr)},
          {"best_id", best ? Json(best->id) : Json(nullptr)},
          {"baseline_percent", Number(view.baseline ? view.baseline->profile.percent_of_peak : 0,
                                      view.scored && view.baseline && view.baseline->ok())},
          {"best_percent", Number(best ? best->profile.percent_of_peak : 0, view.scored && best && best->ok())},
          {"best_latency_s", Number(best ? best->latency() : 0, best && best->ok())},
          {"speedup", best ? Json{{"estimate", e.estimate}, {"low", e.low}, {"high", e.high}, {"steps", e.steps}}
                           : Json(nullptr)},
          {"anchors", AnchorsOf(summary_entry)},
          {"iterations", IterationsJson(view, summary)},
          {"candidates", candidates}};
}

Json HardwareJson(const Json& config) {
  if (!config.is_object() || !config.contains("hardware") || !config["hardware"].is_object()) return nullptr;
  Json hardware = config["hardware"];
  const Json eval = config.value("eval", Json::object());
  hardware["target"] = eval.is_object() ? eval.value("target", std::string(kDefaultTarget)) : kDefaultTarget;
  return hardware;
}

Result<Json> LessonsJson(store::Store& store, int64_t run_id) {
  auto memories = store.ListMemories();
  if (!memories) return memories.error();
  Json out = Json::array();
  for (const auto& [memory, count] : *memories) {
    auto lessons = store.ListLessons(memory, 0);
    if (!lessons) return lessons.error();
    for (const store::StoredLesson& l : *lessons) {
      if (l.run_id != run_id) continue;
      out.push_back({{"id", l.lesson.id},
                     {"title", l.lesson.title},
                     {"text", l.lesson.text},
                     {"task", l.lesson.tags.task},
                     {"speedup", l.lesson.speedup},
                     {"low", l.lesson.low},
                     {"high", l.lesson.high},
                     {"slow", l.slow_candidate},
                     {"fast", l.fast_candidate},
                     {"memory", l.memory},
                     {"created_at", l.created_at}});
    }
  }
  return out;
}

// Every call in the order it was made, with its time from the first call, and the sums per role.
Json LlmJson(const std::vector<Json>& calls) {
  Json list = Json::array();
  std::map<std::string, Json> roles;
  std::optional<double> first;
  for (const Json& c : calls) {
    const std::string role = c.value("agent_role", c.value("role", std::string("?")));
    const Json usage = c.value("usage", Json::object());
    const long in = usage.is_object() ? usage.value("input_tokens", 0L) : 0;
    const long out = usage.is_object() ? usage.value("output_tokens", 0L) : 0;
    const Json cost = c.contains("cost_usd") && c["cost_usd"].is_number() ? c["cost_usd"] : Json(nullptr);
    const std::string started = c.value("started_at", std::string());
    std::optional<double> at = EpochSeconds(started);
    if (at && !first) first = at;
    list.push_back({{"at_s", at && first ? Json(*at - *first) : Json(nullptr)},
                    {"started_at", started},
                    {"role", role},
                    {"task", c.value("task", std::string())},
                    {"model", c.value("model", std::string())},
                    {"input_tokens", in},
                    {"output_tokens", out},
                    {"cost_usd", cost},
                    {"failed", !c.value("error", std::string()).empty()}});
    Json& r = roles[role];
    if (r.is_null()) r = {{"role", role}, {"calls", 0}, {"input_tokens", 0L}, {"output_tokens", 0L}, {"cost_usd", 0.0}};
    r["calls"] = r["calls"].get<int>() + 1;
    r["input_tokens"] = r["input_tokens"].get<long>() + in;
    r["output_tokens"] = r["output_tokens"].get<long>() + out;
    if (cost.is_number()) r["cost_usd"] = r["cost_usd"].get<double>() + cost.get<double>();
  }
  Json per_role = Json::array();
  for (auto& [name, r] : roles) per_role.push_back(r);
  const run::LlmTotals t = run::SumLlmCalls(calls);
  return {{"calls", list},
          {"roles", per_role},
          {"totals",
           {{"calls", t.calls},
            {"input_tokens", t.input_tokens},
            {"output_tokens", t.output_tokens},
            {"cost_usd", t.cost_usd},
            {"unpriced_calls", t.unpriced}}}};
}

// The measurements taken while other processes loaded the machine: shown, never deciding.
Json DisturbedJson(const std::vector<store::StoredCandidate>& candidates) {
  Json out = Json::array();
  for (const auto& stored : candidates) {
    const Candidate& c = stored.candidate;
    if (c.profile.disturbed)
      out.push_back({{"task", stored.task},
                     {"candidate", c.id},
                     {"kind", "evaluation"},
                     {"other_load", c.profile.other_load},
                     {"series", c.profile.disturbed_series}});
    if (c.vs_parent && c.vs_parent->disturbed)
      out.push_back({{"task", stored.task},
                     {"candidate", c.id},
                     {"kind", "comparison"},
                     {"other_load", c.vs_parent->other_load},
                     {"series", c.vs_parent->disturbed_series}});
  }
  return out;
}

// Geometric means of the tasks' best and baseline percentages, over the scored tasks.
Json SuiteJson(const Json& tasks) {
  if (tasks.size() < 2) return nullptr;
  double log_best = 0, log_base = 0, log_speedup = 0;
  int n = 0, sped = 0;
  for (const Json& t : tasks) {
    if (t["speedup"].is_object() && t["speedup"].value("estimate", 0.0) > 0) {
      log_speedup += std::log(t["speedup"]["estimate"].get<double>());
      ++sped;
    }
    if (!t["best_percent"].is_number() || !t["baseline_percent"].is_number()) continue;
    const double best = t["best_percent"].get<double>(), base = t["baseline_percent"].get<double>();
    if (best <= 0 || base <= 0) continue;
    log_best += std::log(best);
    log_base += std::log(base);
    ++n;
  }
  return {{"tasks", tasks.size()},
          {"scored_tasks", n},
          {"geomean_percent", n ? Json(std::exp(log_best / n)) : Json(nullptr)},
          {"baseline_geomean_percent", n ? Json(std::exp(log_base / n)) : Json(nullptr)},
          {"geomean_speedup", sped ? Json(std::exp(log_speedup / sped)) : Json(nullptr)}};
}

Json ErrorJson(const std::string& message) { return {{"error", message}}; }

}  // namespace

nlohmann::json RunReportData(store::Store& store, int64_t run_id) {
  auto run = store.GetRun(run_id);
  if (!run) return ErrorJson(run.error().message);
  if (!*run) return ErrorJson("no run " + std::to_string(run_id) + " in the store");
  const store::RunInfo& info = **run;
  auto stored = store.ListCandidates(run_id, "");
  if (!stored) return ErrorJson(stored.error().message);
  auto calls = store.ListLlmCalls(run_id);
  if (!calls) return ErrorJson(calls.error().message);
  auto lessons = LessonsJson(store, run_id);
  if (!lessons) return ErrorJson(lessons.error().message);

  // Tasks in the order the run named them, then any others its candidates name.
  std::vector<std::string> order;
  if (info.config.is_object() && info.config.contains("tasks") && info.config["tasks"].is_array())
    for (const Json& t : info.config["tasks"])
      if (t.is_string()) order.push_back(t.get<std::string>());
  std::map<std::string, TaskView> views;
  for (const auto& s : *stored) {
    TaskView& v = views[s.task];
    v.name = s.task;
    v.all.push_back(&s.candidate);
    v.by_id[s.candidate.id] = &s.candidate;
    if (!v.baseline && s.candidate.parent_id == 0) v.baseline = &s.candidate;
    if (s.candidate.ok() && s.candidate.profile.scored_against) v.scored = true;
    if (std::find(order.begin(), order.end(), s.task) == order.end()) order.push_back(s.task);
  }
  Json tasks = Json::array();
  for (const std::string& name : order) {
    auto it = views.find(name);
    if (it == views.end()) continue;  // named, not begun
    it->second.best = run::RunsBest(info.summary, name, it->second.all);
    tasks.push_back(TaskJson(it->second, info.summary));
  }
  const Json eval = info.config.is_object() ? info.config.value("eval", Json::object()) : Json::object();
  Json run_json = {{"id", info.id},
                   {"created_at", info.created_at},
                   {"status", info.status},
                   {"target", eval.is_object() ? eval.value("target", std::string(kDefaultTarget)) : kDefaultTarget},
                   {"shape", info.config.is_object() ? info.config.value("shape", std::string()) : std::string()},
                   {"tasks", order}};
  return {{"schema", kReportSchema},
          {"run", run_json},
          {"hardware", HardwareJson(info.config)},
          {"tasks", tasks},
          {"lessons", *lessons},
          {"llm", LlmJson(*calls)},
          {"disturbed", DisturbedJson(*stored)},
          {"suite", SuiteJson(tasks)}};
}

}  // namespace accelopt::report
