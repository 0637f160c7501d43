#include "targets/external/external_target.h"

#include <cmath>
#include <cstdlib>
#include <filesystem>

#include <fmt/core.h>

#include "core/clock.h"
#include "core/json_io.h"
#include "core/paths.h"
#include "core/scratch.h"
#include "eval/metric.h"
#include "eval/sandbox.h"
#include "eval/scoring.h"
#include "suite/roofline.h"
#include "targets/external/served_process.h"

namespace accelopt::external {
namespace fs = std::filesystem;

std::vector<std::string> SplitCommand(const std::string& text) {
  std::vector<std::string> words;
  size_t at = 0;
  while ((at = text.find_first_not_of(" \t", at)) != std::string::npos) {
    const size_t end = text.find_first_of(" \t", at);
    words.push_back(text.substr(at, end == std::string::npos ? std::string::npos : end - at));
    at = end;
  }
  return words;
}

namespace {

// A fresh folder for one evaluation's requests (kept with keep_work).
Result<std::unique_ptr<ScratchDir>> ScratchFor(const ExternalOptions& options, const std::string& label) {
  return ScratchDir::Create(options.work_dir.empty() ? CacheDir() + "/work" : options.work_dir, label,
                            options.keep_work);
}

bool FiniteNonNegative(const Json& j) {
  return j.is_number() && std::isfinite(j.get<double>()) && j.get<double>() >= 0;
}

// The rates in `j` ({bandwidth_gbs, peak_mm_gflops, peak_vec_gflops}); `what` names it in errors.
Result<suite::PeakRates> RatesFrom(const Json& j, const std::string& what) {
  suite::PeakRates rates;
  if (!j.is_object()) return Error{what + ": expected an object"};
  for (const auto& [key, field] :
       {std::pair{"bandwidth_gbs", &rates.bandwidth_gbs}, std::pair{"peak_mm_gflops", &rates.peak_mm_gflops},
        std::pair{"peak_vec_gflops", &rates.peak_vec_gflops}}) {
    if (!j.contains(key)) continue;
    if (!FiniteNonNegative(j[key])) return Error{what + "." + key + ": expected a number, 0 or more"};
    *field = j[key].get<double>();
  }
  return rates;
}

Result<eval::ScoringPeaks> PeaksFrom(const Json& j) {
  eval::ScoringPeaks peaks;
  auto rates = RatesFrom(j, "peaks");
  if (!rates) return rates.error();
  peaks.rates = *rates;
  if (peaks.rates.bandwidth_gbs <= 0 || peaks.rates.peak_mm_gflops <= 0 || peaks.rates.peak_vec_gflops <= 0)
    return Error{"peaks: bandwidth_gbs, peak_mm_gflops and peak_vec_gflops are each needed, above 0 (or no peaks)"};
  if (j.contains("theoretical")) {
    auto theoretical = RatesFrom(j["theoretical"], "peaks.theoretical");
    if (!theoretical) return theoretical.error();
    peaks.theoretical = *theoretical;
  }
  if (j.contains("spreads")) {
    if (!j["spreads"].is_object()) return Error{"peaks.spreads: expected an object"};
    for (const auto& [figure, spread] : j["spreads"].items()) {
      if (!FiniteNonNegative(spread)) return Error{"peaks.spreads." + figure + ": expected a number, 0 or more"};
      peaks.spreads[figure] = spread.get<double>();
    }
  }
  peaks.calibrated = j.value("calibrated", false);
  peaks.fingerprint = j.value("fingerprint", "");
  peaks.measured_at = j.value("measured_at", "");
  return peaks;
}

Json PeaksJson(const eval::ScoringPeaks& p) {
  auto rates = [](const suite::PeakRates& r) {
    return Json{{"bandwidth_gbs", r.bandwidth_gbs},
                {"peak_mm_gflops", r.peak_mm_gflops},
                {"peak_vec_gflops", r.peak_vec_gflops}};
  };
  Json j = rates(p.rates);
  j["theoretical"] = rates(p.theoretical);
  j["spreads"] = p.spreads;
  j["calibrated"] = p.calibrated;
  j["fingerprint"] = p.fingerprint;
  j["measured_at"] = p.measured_at;
  return j;
}

// The plain metric a description names instead of peaks: what its `time`
// samples and `compare` pairs are figures of, and which way is better.
Result<suite::MetricSpec> MetricFrom(const Json& j) {
  if (!j.is_object()) return Error{"metric: expected an object (name, unit, direction)"};
  suite::MetricSpec m;
  m.name = j.value("name", "");
  m.unit = j.value("unit", "");
  if (m.name.empty()) return Error{"metric.name: expected what the figure is (\"throughput\", \"time per step\")"};
  const std::string direction = j.value("direction", "");
  if (direction != "lower" && direction != "higher")
    return Error{"metric.direction: expected \"lower\" or \"higher\" (which is better)"};
  m.higher_is_better = direction == "higher";
  return m;
}

// The task at its shape, as an evaluator is told it.
Json TaskJson(const suite::BoundTask& bound) {
  auto tensors = [](const std::vector<suite::BoundTensor>& list) {
    Json out = Json::array();
    for (const auto& t : list)
      out.push_back({{"name", t.name},
                     {"dims", t.dims},
                     {"elements", t.elements},
                     {"dtype", suite::DTypeName(t.dtype)},
                     {"dist", {{"kind", t.dist.kind}, {"a", t.dist.a}, {"b", t.dist.b}}}});
    return out;
  };
  Json params = Json::object();
  for (const auto& [k, v] : bound.params) params[k] = v;
  Json constants = Json::object();
  for (const auto& [k, v] : bound.task->constants) constants[k] = v;
  return {{"name", bound.task->name},
          {"dir", bound.task->dir},
          {"shape", bound.shape_name},
          {"params", params},
          {"constants", constants},
          {"inputs", tensors(bound.inputs)},
          {"outputs", tensors(bound.outputs)},
          {"tolerance", bound.task->tolerance}};
}

class ExternalTarget : public targets::Target {
 public:
  ExternalTarget(ExternalOptions options, targets::TargetInfo info, std::string machine,
                 std::optional<eval::ScoringPeaks> peaks)
      : options_(std::move(options)), info_(std::move(info)), machine_(std::move(machine)), peaks_(std::move(peaks)) {}

  std::string name() const override { return info_.name; }
  targets::TargetInfo Describe() const override { return info_; }
  std::string MachineText() const override { return machine_; }
  // The peaks' fingerprint names the machine; without one, the evaluator's name stands for it.
  std::string Machine() const override {
    return peaks_ && !peaks_->fingerprint.empty() ? peaks_->fingerprint : info_.name;
  }
  Json Hardware() const override { return peaks_ ? PeaksJson(*peaks_) : Json(nullptr); }
  suite::PeakRates Rates() const override { return peaks_ ? peaks_->rates : suite::PeakRates{}; }

  // The language is the evaluator's: the arguments by name, the shape as names and values.
  std::string Signature(const suite::Task& task) const override {
    std::string signature;
    for (const auto* list : {&task.inputs, &task.outputs})
      for (const auto& t : *list) signature += (signature.empty() ? "" : ", ") + t.name;
    return signature;
  }
  std::string ShapeDeclarations(const suite::BoundTask& bound) const override {
    suite::Bindings all = bound.params;
    for (const auto& [name, value] : bound.task->constants) all[name] = value;
    return suite::ShapeText(all);
  }

  bool Supports(const suite::Task& task) const override {
    std::error_code ec;
    return task.PlainFloat32() && fs::exists(task.baseline_path(info_.file_extension), ec) &&
           fs::exists(task.reference_path(info_.file_extension), ec);
  }

  std::vector<Result<std::unique_ptr<targets::Built>>> Build(std::span<const targets::EvalRequest> requests) override {
    std::vector<Result<std::unique_ptr<targets::Built>>> out;
    for (const targets::EvalRequest& r : requests) {
      auto built = Guarded([&] { return BuildOne(r); });
      if (built)
        out.push_back(std::unique_ptr<targets::Built>(std::move(*built)));
      else
        out.push_back(built.error());
    }
    return out;
  }

  std::vector<Result<Profile>> Run(std::span<targets::Built* const> built, const OnResult& on_result) override {
    std::vector<Result<Profile>> out;
    for (size_t i = 0; i < built.size(); ++i) {
      out.push_back(Guarded([&] { return RunBuilt(static_cast<ExternalBuilt&>(*built[i])); }));
      if (on_result) on_result(i, out.back());
    }
    return out;
  }

  // One request: with `serve`, a line to the persistent process (started when
  // first needed, again after it failed); else one invocation, the request
  // written to DIR/<op>.request.json and its path the evaluator's last
  // argument. The answer, checked to be a protocol answer.
  Result<Json> Invoke(Json request, const fs::path& dir) const {
    const std::string op = request.at("op");
    request["protocol"] = kProtocolVersion;
    request["work_dir"] = dir.string();
    const std::string who = "the evaluator (" + options_.command.front() + ") ";
    // It runs where the engine runs, so that the command's relative paths mean what the user meant.
    std::error_code ec;
    const std::string workdir = fs::current_path(ec).string();
    std::string text;
    if (serve_ && op != "describe") {
      if (!served_ || !served_->alive()) {
        std::vector<std::string> argv = options_.command;
        argv.push_back("--serve");
        auto started = ServedProcess::Start(argv, workdir);
        if (!started) return Error{who + "could not be started to serve: " + started.error().message};
        served_ = std::move(*started);
      }
      auto line = served_->Exchange(DumpJson(request), options_.timeout_seconds);
      if (!line) return Error{who + "failed during '" + op + "': " + line.error().message};
      text = *line;
    } else {
      const std::string path = (dir / (op + ".request.json")).string();
      if (auto s = WriteFile(path, DumpJson(request, 2)); !s) return s.error();
      eval::SandboxRequest run;
      run.argv = options_.command;
      run.argv.push_back(path);
      run.workdir = workdir;
      run.limits.wall_seconds = options_.timeout_seconds;
      run.limits.address_space_bytes = 0;
      run.limits.capture_bytes = 8 << 20;
      auto outcome = RunSandboxed(run);
      if (!outcome) return Error{"the evaluator could not be started: " + outcome.error().message};
      const std::string tail = outcome->err.empty() ? "" : ":\n" + eval::TruncateLog(outcome->err, 4000);
      if (outcome->timed_out)
        return Error{who + fmt::format("did not answer '{}' within {:.0f} s", op, options_.timeout_seconds) + tail};
      if (outcome->term_signal != 0)
        return Error{who + "was killed by " + eval::SignalName(outcome->term_signal) + " during '" + op + "'" + tail};
      if (outcome->exit_code != 0)
        return Error{who + fmt::format("exited with code {} during '{}'", outcome->exit_code, op) + tail};
      text = outcome->out;
    }
    Json answer;
    try {
      answer = Json::parse(text);
    } catch (const Json::exception& e) {
      return Error{who + "answered '" + op + "' with what is not JSON (" + e.what() +
                   "): " + eval::TruncateLog(text, 400)};
    }
    if (!answer.is_object()) return Error{who + "answered '" + op + "' with JSON that is not an object"};
    if (answer.value("protocol", 0) != kProtocolVersion)
      return Error{
          who + fmt::format("answered '{}' in protocol {}, not {}", op, answer.value("protocol", 0), kProtocolVersion)};
    if (answer.contains("error")) return Error{who + "could not " + op + ": " + answer["error"].dump()};
    return answer;
  }

  bool ComparesSideBySide() const override { return compares_; }

  // Both evaluated in full; when both are ok, their calls are timed
  // interleaved by the evaluator (`compare`) and the speedup is the engine's,
  // from the pairs.
  Result<targets::PairedResult> Compare(const targets::EvalRequest& a, const targets::EvalRequest& b) override {
    if (!compares_) return Error{"the " + info_.name + " evaluator does not time two kernels side by side"};
    try {
      auto built_a = BuildOne(a);
      if (!built_a) return built_a.error();
      auto built_b = BuildOne(b);
      if (!built_b) return built_b.error();
      auto profile_a = RunBuilt(**built_a);
      if (!profile_a) return profile_a.error();
      auto profile_b = RunBuilt(**built_b);
      if (!profile_b) return profile_b.error();
      targets::PairedResult result{*profile_a, *profile_b, std::nullopt};
      if (profile_a->status != Verdict::kOk || profile_b->status != Verdict::kOk) return result;
      auto answer = Invoke({{"op", "compare"},
                            {"task", (*built_a)->task},
                            {"artifacts", {(*built_a)->artifact, (*built_b)->artifact}},
                            {"min_calls", options_.min_calls},
                            {"max_calls", options_.max_calls},
                            {"budget_seconds", options_.budget_seconds}},
                           (*built_a)->dir->path());
      if (!answer) return answer.error();
      auto status = StatusOf(*answer, "compare",
                             {Verdict::kOk, Verdict::kRuntimeError, Verdict::kTimeout, Verdict::kResourceLimit});
      if (!status) return status.error();
      if (*status != Verdict::kOk) {  // a kernel failed while compared: no speedup, and both say why
        for (Profile* p : {&result.a, &result.b})
          p->message += std::string(p->message.empty() ? "" : "; ") + "the side-by-side timing failed (" +
                        VerdictName(*status) + "): " + answer->value("message", "");
        return result;
      }
      const Json& pairs = answer->value("pairs", Json());
      if (!pairs.is_array() || static_cast<int>(pairs.size()) < std::min(3, options_.min_calls))
        return Error{"the evaluator answered 'compare' with fewer than 3 pairs"};
      std::vector<double> times_a, times_b;
      for (const Json& pair : pairs) {
        if (!pair.is_array() || pair.size() != 2 || !pair[0].is_number() || !pair[1].is_number() ||
            !(pair[0].get<double>() > 0) || !(pair[1].get<double>() > 0) || !std::isfinite(pair[0].get<double>()) ||
            !std::isfinite(pair[1].get<double>()))
          return Error{"the evaluator answered 'compare' with a pair that is not two positive numbers of " + Unit() +
                       ": " + pair.dump()};
        times_a.push_back(Cost(pair[0].get<double>()));
        times_b.push_back(Cost(pair[1].get<double>()));
      }
      result.speedup = eval::PairedComparison(times_a, times_b);
      return result;
    } catch (const Json::exception& e) {
      return Error{std::string("the evaluator's answer has a field of the wrong type: ") + e.what()};
    }
  }

  /// Compare is answered by the evaluator (`"compare": true` in its description).
  void Compares(bool compares) { compares_ = compares; }

  /// Scores against these peaks instead of those the evaluator reported (a resumed run's).
  void ScoreAgainst(const eval::ScoringPeaks& peaks) { peaks_ = peaks; }

  /// Requests after `describe` go to one persistent process (`COMMAND --serve`).
  void Serve(bool serve) { serve_ = serve; }
  /// Whether its results hold against a kernel that attacks the machine, as
  /// the evaluator says (docs/trust.md); not trusted, every ok says so.
  void Trust(bool trusted, std::string isolation) {
    trusted_ = trusted;
    isolation_ = isolation.empty() ? kUnstatedIsolation : std::move(isolation);
  }

  /// Samples and pairs are figures of this metric, not seconds.
  void Measures(const suite::MetricSpec& metric) { metric_ = metric; }

 private:
  // The verdict an answer states; an Error when it states none, an unknown
  // one, one the step cannot give, or a failure without a message.
  static Result<Verdict> StatusOf(const Json& answer, const std::string& op, std::initializer_list<Verdict> allowed) {
    const std::string name = answer.value("status", "");
    auto verdict = VerdictFromName(name);
    if (!verdict) return Error{"the evaluator answered '" + op + "' with an unknown status '" + name + "'"};
    if (std::find(allowed.begin(), allowed.end(), *verdict) == allowed.end())
      return Error{"the evaluator answered '" + op + "' with status '" + name + "', which that step cannot give"};
    if (*verdict != Verdict::kOk && answer.value("message", "").empty())
      return Error{"the evaluator answered '" + op + "' with status '" + name + "' but no message saying why"};
    return *verdict;
  }

  Result<std::unique_ptr<ScratchDir>> Scratch() const { return ScratchFor(options_, "external"); }

  // What a sample costs (lower is better): seconds, or the metric's figure turned so.
  double Cost(double sample) const { return metric_ ? eval::CostOf(sample, *metric_) : sample; }
  // What samples are counted in, for messages.
  std::string Unit() const { return metric_ ? "'" + metric_->name + "'" : "seconds"; }

  // One kernel built in a folder of its own, with what its build answered.
  struct ExternalBuilt : targets::Built {
    std::optional<suite::BoundTask> bound;  ///< the task at its shape
    std::unique_ptr<ScratchDir> dir;
    Json task;             ///< the task at its shape, as requests carry it
    std::string artifact;  ///< what the build answered, for check, time and compare
    Profile profile;       ///< the build's part; the verdict when it did not build
    double started = 0;
    const Profile& BuildProfile() const override { return profile; }
  };

  // A field of an answer of the wrong type is the evaluator's fault, not the kernel's.
  template <typename F>
  static auto Guarded(F&& step) -> decltype(step()) {
    try {
      return step();
    } catch (const Json::exception& e) {
      return Error{std::string("the evaluator's answer has a field of the wrong type: ") + e.what()};
    }
  }

  // Asks the evaluator to build one kernel in a fresh folder.
  Result<std::unique_ptr<ExternalBuilt>> BuildOne(const targets::EvalRequest& r) {
    auto built = std::make_unique<ExternalBuilt>();
    built->started = NowSeconds();
    auto scratch = Scratch();
    if (!scratch) return scratch.error();
    built->dir = std::move(*scratch);
    auto bound = suite::Bind(*r.task, r.shape);
    if (!bound) return bound.error();
    built->bound.emplace(std::move(*bound));
    Profile& profile = built->profile;
    profile.task = r.task->name;
    profile.shape = r.shape;
    profile.target = info_.name;
    profile.tolerance = r.task->tolerance;
    profile.seeds = options_.seeds;
    profile.counters.unavailable_reason = "not reported by the external evaluator";
    if (options_.keep_work) profile.work_dir = built->dir->path().string();
    built->task = TaskJson(*built->bound);

    auto answer = Invoke({{"op", "build"}, {"task", built->task}, {"source", r.candidate.source}}, built->dir->path());
    if (!answer) return answer.error();
    auto status = StatusOf(*answer, "build", {Verdict::kOk, Verdict::kCompileError, Verdict::kForbidden});
    if (!status) return status.error();
    profile.compile_log = answer->value("log", "");
    profile.compile_seconds = answer->value("seconds", 0.0);
    if (*status != Verdict::kOk) {
      profile = Ended(profile, *status, answer->value("message", ""), built->started);
      return built;
    }
    built->artifact = answer->value("artifact", "");
    if (built->artifact.empty())
      return Error{"the evaluator answered 'build' ok without an artifact to check and time"};
    return built;
  }

  // Checks, times and scores a kernel that built.
  Result<Profile> RunBuilt(ExternalBuilt& built) {
    if (!built.ok()) return built.profile;
    const fs::path& dir = built.dir->path();
    const Json& task = built.task;
    const std::string& artifact = built.artifact;
    const double started = built.started;
    Profile profile = built.profile;
    auto counts = suite::CountRoofline(*built.bound);
    if (!counts) return counts.error();

    auto checked = Invoke({{"op", "check"}, {"task", task}, {"artifact", artifact}, {"seeds", options_.seeds}}, dir);
    if (!checked) return checked.error();
    auto status = StatusOf(*checked, "check",
                           {Verdict::kOk, Verdict::kWrongAnswer, Verdict::kRuntimeError, Verdict::kTimeout,
                            Verdict::kResourceLimit, Verdict::kForbidden});
    if (!status) return status.error();
    profile.run_log = checked->value("log", "");
    if (checked->contains("errors") && (*checked)["errors"].is_object()) {
      const Json& e = (*checked)["errors"];
      ErrorStats errors;
      errors.rel_l2 = e.value("rel_l2", std::nan(""));
      errors.max_abs = e.value("max_abs", std::nan(""));
      profile.errors = errors;
    }
    if (*status != Verdict::kOk) return Ended(profile, *status, checked->value("message", ""), started);
    // An ok it does not back: no call checked, or errors beyond the task's tolerance.
    const int checked_calls = checked->value("checked_calls", 0);
    if (checked_calls < 1) return Error{"the evaluator answered 'check' ok without a checked call"};
    if (!profile.errors || !std::isfinite(profile.errors->rel_l2) || profile.errors->rel_l2 > profile.tolerance)
      return Error{fmt::format("the evaluator answered 'check' ok with errors.rel_l2 {} against a tolerance of {:.3g}",
                               profile.errors ? fmt::format("{:.3g}", profile.errors->rel_l2) : std::string("missing"),
                               profile.tolerance)};
    profile.checked_calls = checked_calls;

    auto timed = Time(task, artifact, dir, profile);
    if (!timed) return timed.error();
    if (profile.status != Verdict::kOk) return Ended(profile, profile.status, profile.message, started);
    if (peaks_) {
      // The peaks never move (no evaluation moves the yardstick); the evaluator keeps its own figures.
      auto proved = eval::ScoreMeasuringAgainBeyondPeak(*counts, *peaks_, profile, [&](Profile& again) {
        again.run_log = profile.run_log;  // the check's log stays the kernel's
        return Time(task, artifact, dir, again);
      });
      if (!proved) return proved.error();
    }
    if (!trusted_ && profile.status == Verdict::kOk)
      profile.message += "; not trusted against a kernel that attacks the machine: " + isolation_;
    profile.wall_seconds = NowSeconds() - started;
    return profile;
  }

  // Asks for timed series; the statistics are the engine's, from the samples.
  Status Time(const Json& task, const std::string& artifact, const fs::path& dir, Profile& profile) {
    auto timed = Invoke({{"op", "time"},
                         {"task", task},
                         {"artifact", artifact},
                         {"min_calls", options_.min_calls},
                         {"max_calls", options_.max_calls},
                         {"budget_seconds", options_.budget_seconds}},
                        dir);
    if (!timed) return timed.error();
    auto status = StatusOf(*timed, "time",
                           {Verdict::kOk, Verdict::kWrongAnswer, Verdict::kRuntimeError, Verdict::kTimeout,
                            Verdict::kResourceLimit, Verdict::kForbidden});
    if (!status) return status.error();
    if (*status != Verdict::kOk) {
      profile.status = *status;
      profile.message = timed->value("message", "");
      return Ok{};
    }
    const Json& series = timed->value("series", Json());
    if (!series.is_array() || series.empty())
      return Error{"the evaluator answered 'time' ok without a series of samples"};
    std::vector<std::vector<double>> samples;
    const int least = std::min(3, options_.min_calls);
    for (const Json& s : series) {
      std::vector<double>& one = samples.emplace_back();
      if (!s.is_array() || static_cast<int>(s.size()) < least)
        return Error{fmt::format("the evaluator answered 'time' with a series of fewer than {} samples", least)};
      for (const Json& v : s) {
        if (!v.is_number() || !std::isfinite(v.get<double>()) || v.get<double>() <= 0)
          return Error{"the evaluator answered 'time' with a sample that is not a positive number of " + Unit() + ": " +
                       v.dump()};
        one.push_back(Cost(v.get<double>()));
      }
    }
    profile.latency = eval::MostStable(samples);
    profile.latency->series = static_cast<int>(samples.size());
    if (metric_) profile.metric = eval::FiguresOf(*profile.latency, *metric_, profile.latency->calls);
    profile.checked_calls += timed->value("checked_calls", 0);
    return Ok{};
  }

  static Profile Ended(Profile profile, Verdict status, std::string message, double started) {
    profile.status = status;
    profile.message = std::move(message);
    profile.wall_seconds = NowSeconds() - started;
    return profile;
  }

  ExternalOptions options_;
  targets::TargetInfo info_;
  std::string machine_;
  std::optional<eval::ScoringPeaks> peaks_;
  bool serve_ = false;
  bool compares_ = false;
  bool trusted_ = false;
  static constexpr const char* kUnstatedIsolation = "the evaluator does not say that it isolates kernels";
  std::string isolation_ = kUnstatedIsolation;
  std::optional<suite::MetricSpec> metric_;
  mutable std::unique_ptr<ServedProcess> served_;
};

// A name the engine can use as a folder and in a store: letters, digits, '-', '_', '.'.
bool PlainName(const std::string& name) {
  if (name.empty() || name.size() > 64) return false;
  for (char c : name)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_' && c != '.') return false;
  return true;
}

// The evaluator the settings name (`evaluator`), else $ACCELOPT_EVALUATOR's.
std::vector<std::string> EvaluatorOf(const targets::TargetSettings& settings) {
  auto own = targets::SettingsFor("external", settings);
  if (own && !(*own)["evaluator"].get<std::string>().empty())
    return SplitCommand((*own)["evaluator"].get<std::string>());
  const char* env = std::getenv("ACCELOPT_EVALUATOR");
  return SplitCommand(env ? env : "");
}

// The target an answer to `describe` describes.
Result<std::unique_ptr<targets::Target>> Described(const Result<Json>& answer, const ExternalOptions& options,
                                                   const ExternalOptions& resolved) {
  if (!answer) return answer.error();
  const Json& a = *answer;
  auto text = [&a](const char* key) { return a.contains(key) && a[key].is_string() ? a[key].get<std::string>() : ""; };
  targets::TargetInfo info;
  info.name = text("name");
  info.language = text("language");
  info.file_extension = text("file_extension");
  info.build_command = text("build_command");
  info.prompts_dir = text("prompts_dir");
  const std::string where = "the evaluator's description: ";
  if (!PlainName(info.name)) return Error{where + "name: expected a plain name (letters, digits, - _ .)"};
  if (info.language.empty()) return Error{where + "language: expected the kernel language"};
  if (info.file_extension.size() < 2 || info.file_extension[0] != '.' || !PlainName(info.file_extension.substr(1)))
    return Error{where + "file_extension: expected an extension such as \".py\""};
  if (!a.contains("fence_tags") || !a["fence_tags"].is_array() || a["fence_tags"].empty())
    return Error{where + "fence_tags: expected the tags of an answer's code block, e.g. [\"python\"]"};
  for (const Json& tag : a["fence_tags"]) {
    if (!tag.is_string() || tag.get<std::string>().empty()) return Error{where + "fence_tags: expected strings"};
    info.fence_tags.push_back(tag);
  }
  if (a.contains("entry_point")) {
    if (!a["entry_point"].is_string() || !PlainName(a["entry_point"].get<std::string>()))
      return Error{where + "entry_point: expected the name of the function a kernel defines, e.g. \"kernel\""};
    info.entry_point = a["entry_point"];
  }
  std::optional<eval::ScoringPeaks> peaks;
  if (a.contains("peaks") && !a["peaks"].is_null()) {
    auto parsed = PeaksFrom(a["peaks"]);
    if (!parsed) return Error{where + parsed.error().message};
    peaks = *parsed;
  }
  auto target = std::make_unique<ExternalTarget>(resolved, std::move(info), text("machine"), std::move(peaks));
  if (a.contains("metric") && !a["metric"].is_null()) {
    auto metric = MetricFrom(a["metric"]);
    if (!metric) return Error{where + metric.error().message};
    if (a.contains("peaks") && !a["peaks"].is_null())
      return Error{where + "both peaks and a metric: a kernel is scored against a roofline or by a metric, not both"};
    target->Measures(*metric);
  }
  target->Serve(a.contains("serve") && a["serve"] == true && !options.one_invocation_per_request);
  target->Compares(a.contains("compare") && a["compare"] == true);
  target->Trust(a.contains("trusted") && a["trusted"] == true, text("isolation"));
  return std::unique_ptr<targets::Target>(std::move(target));
}

}  // namespace

Result<std::unique_ptr<targets::Target>> MakeExternalTarget(const ExternalOptions& options) {
  if (options.command.empty()) return Error{"no evaluator program given"};
  ExternalOptions resolved = options;
  resolved.command.front() = FindProgram(options.command.front());
  if (resolved.command.front().empty())
    return Error{"the evaluator program '" + options.command.front() + "' is not found"};
  auto scratch = ScratchFor(options, "describe");
  if (!scratch) return scratch.error();
  ExternalTarget probe(resolved, {}, "", std::nullopt);
  try {
    return Described(probe.Invoke({{"op", "describe"}}, (*scratch)->path()), options, resolved);
  } catch (const Json::exception& e) {
    return Error{std::string("the evaluator's description has a field of the wrong type: ") + e.what()};
  }
}

targets::TargetKind Registration() {
  targets::TargetKind kind;
  kind.name = "external";
  kind.summary = "any evaluator program speaking docs/external-protocol.md (--evaluator CMD or $ACCELOPT_EVALUATOR)";
  kind.isolation = [] {
    return targets::TargetKind::Isolation{
        false,
        "whatever the evaluator does (the engine does not isolate it; evaluators/python runs kernels in its "
        "own interpreter, with no boundary)"};
  };
  kind.unavailable = [](const targets::TargetSettings& settings) {
    const auto command = EvaluatorOf(settings);
    if (command.empty()) return std::string("no evaluator named (--evaluator CMD, or $ACCELOPT_EVALUATOR)");
    if (FindProgram(command.front()).empty()) return "the evaluator program '" + command.front() + "' is not found";
    return std::string();
  };
  // Asked to describe itself: an evaluator without its device or toolchain answers why.
  kind.probe = [](const targets::TargetSettings& settings) {
    ExternalOptions options;
    options.command = EvaluatorOf(settings);
    options.timeout_seconds = settings.timeout;
    if (!settings.cache_dir.empty()) options.work_dir = settings.cache_dir + "/work";
    auto target = MakeExternalTarget(options);
    return target ? std::string() : target.error().message;
  };
  kind.settings = {
      {"evaluator", targets::SettingType::kString, "",
       "the evaluator program and its arguments, split at spaces (--evaluator); \"\": $ACCELOPT_EVALUATOR"}};
  kind.make = [](const targets::TargetSettings& settings) -> Result<std::unique_ptr<targets::Target>> {
    if (auto own = targets::SettingsFor("external", settings); !own) return own.error();
    ExternalOptions options;
    options.command = EvaluatorOf(settings);
    options.timeout_seconds = settings.timeout;
    options.seeds = settings.seeds;
    options.keep_work = settings.keep_work;
    if (!settings.cache_dir.empty()) options.work_dir = settings.cache_dir + "/work";
    auto target = MakeExternalTarget(options);
    if (!target || settings.hardware.is_null()) return target;
    // A resumed run is scored against the peaks it began with.
    auto recorded = PeaksFrom(settings.hardware);
    if (!recorded) return Error{"the recorded peaks: " + recorded.error().message};
    auto* described = static_cast<ExternalTarget*>(target->get());
    described->ScoreAgainst(*recorded);
    return target;
  };
  return kind;
}

}  // namespace accelopt::external
