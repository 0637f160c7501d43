#include "targets/cpu/candidate_run.h"

#include <algorithm>
#include <cstdio>
#include <numeric>

#include "core/clock.h"
#include "eval/calls.h"
#include "eval/compare.h"
#include "eval/counters.h"
#include "eval/kernel_process.h"
#include "eval/machine_load.h"
#include "eval/perturb.h"
#include "eval/stats.h"

namespace accelopt::cpu {
using eval::CallInputs;
using eval::CheckedInputs;
using eval::Expected;
using eval::OutputType;
namespace {

// Outputs the monitor keeps to compare: copied the moment their call returned.
struct Kept {
  size_t slot;  // in Expected (a checked timed call's: given once the reference ran on its inputs)
  std::string label;
  std::vector<float> outputs;
};

// A call's inputs as the monitor draws them: a drawn set and the seed that
// perturbs it, both fresh from the system's entropy for every call, so that
// one call's inputs tell nothing of another's (the seed of one, worked out
// from its inputs, predicts no other).
struct Drawn {
  size_t set;
  uint64_t seed;
};

// One candidate's run: the process, the schedule's state, what was measured.
class Run {
 public:
  Run(const suite::BoundTask& bound, Expected& expected, const CpuTargetOptions& options, Profile& profile)
      : bound_(bound),
        expected_(expected),
        options_(options),
        profile_(profile),
        scratch_(static_cast<size_t>(eval::ElementsPerSet(bound.outputs))) {}

  Status Start(const std::string& library, const std::string& dir, bool timed) {
    auto process =
        eval::StartKernelProcess(bound_, OutputType::kFloat, RunOptionsOf(options_), dir, /*candidate=*/true, library);
    if (!process) return process.error();
    process_ = std::move(*process);
    if (process_->failed()) return Failed("start");
    if (auto s = Handshake(timed ? options_.timing.handshake_calls : 0); !s || over()) return s;
    if (options_.counters) counters_ = std::make_unique<eval::ProcessCounters>(process_->pid());
    eval::FillSlack(*process_);
    auto loaded = process_->Load(library, "kernel");
    if (!loaded) return loaded.error();
    if (!*loaded) return Failed("loading");
    return Ok{};
  }

  // The correctness calls: every seed's set, perturbed as a timed call's is
  // (no set is shown as drawn), all kept.
  Status Correctness() {
    if (expected_.checked_count() < expected_.seeds())
      return Error{"the batch drew no perturbed inputs for the correctness calls (engine fault)"};
    for (size_t k = 0; k < expected_.checked_count() && !over(); ++k) {
      const CheckedInputs& in = expected_.checked(k);
      Kept kept{expected_.seeds() + k, "seed " + std::to_string(in.set), {}};
      if (auto c = OneCall({expected_.set(in.set), in.seed}, "correctness call, seed " + std::to_string(in.set),
                           &kept);
          !c)
        return c;
      if (!over()) kept_.push_back(std::move(kept));
    }
    return Ok{};
  }

  Status Timed() {
    if (auto w = Warmup(); !w) return w;
    const TimingOptions& t = options_.timing;
    const long calls = CallsPerSeries(FirstTiming());
    for (int s = 0, disturbed = 0; s < t.max_series + disturbed && !over(); ++s) {
      BeginSeries(calls);
      const eval::CpuSnapshot before = eval::TakeCpuSnapshot(pid());
      for (long c = 0; c < calls && !over(); ++c)
        if (auto r = SeriesCall(c); !r) return r;
      if (over()) break;
      const eval::MachineLoad load = eval::LoadBetween(before, eval::TakeCpuSnapshot(pid()));
      const std::vector<double>& samples = EndSeries(load.others);
      if (load.others > t.disturbed_share) {
        ++profile_.disturbed_series;
        if (disturbed < t.disturbed_retries) {
          ++disturbed;
          eval::WaitForQuiet(QuietWaitOf(t), {pid()});
          continue;  // measured again
        }
      }
      if (eval::Summarize(samples).spread <= t.spread_tolerance) break;
    }
    if (counters_) counters_->Disable();
    return Ok{};
  }

  pid_t pid() const { return process_->pid(); }

  Status Warmup() {
    for (int i = 0; i < options_.timing.warmup && !over(); ++i)
      if (auto c = OneCall(InputsOf(Fresh()), "warm-up call " + std::to_string(i + 1), nullptr); !c) return c;
    if (counters_) counters_->Enable();
    return Ok{};
  }

  // The first call's time (a correctness call): what sizes the series.
  double FirstTiming() const { return timings_.empty() ? 1e-3 : timings_.front(); }

  // Timed calls per series for calls of about `seconds` each.
  long CallsPerSeries(double seconds) const {
    const TimingOptions& t = options_.timing;
    return std::clamp<long>(static_cast<long>(t.budget_seconds / std::max(seconds, 1e-7)), t.min_calls, t.max_calls);
  }

  // A series of `calls` timed calls begins.
  void BeginSeries(long calls) {
    series_calls_ = calls;
    series_checks_left_ = options_.timing.checked_per_series;
    samples_.clear();
  }

  // Call `c` of the current series; its time is the series' latest sample.
  // Every call is prepared alike, from fresh inputs, its outputs copied out
  // the moment it returned. Only then, with the process stopped, is it drawn
  // whether the call is checked (so many per series, each remaining call
  // alike likely): nothing the kernel could see before or during the call
  // decides it. The reference runs on the checked calls' inputs at the end.
  Status SeriesCall(long c) {
    const std::string label =
        "timed call " + std::to_string(c + 1) + " of series " + std::to_string(series_.size() + 1);
    const Drawn drawn = Fresh();
    if (auto r = OneCall(InputsOf(drawn), label, nullptr); !r) return r;
    if (over()) return Ok{};
    samples_.push_back(timings_.back());
    const long left = series_calls_ - c;
    if (series_checks_left_ > 0 && left > 0 && static_cast<long>(eval::FreshSeed() % static_cast<uint64_t>(left)) <
                                                   series_checks_left_) {
      --series_checks_left_;
      to_check_.push_back({drawn.set, drawn.seed});
      kept_.push_back({0, label + ", with fresh inputs", scratch_});
      ++checked_calls_;
    }
    return Ok{};
  }

  // The current series ends, with the share of the machine others took meanwhile; its samples.
  const std::vector<double>& EndSeries(double others_load) {
    series_.push_back(samples_);
    series_load_.push_back(others_load);
    return series_.back();
  }

  bool ok() const { return !over(); }

  // Ends the process, accounts for its CPU time, compares what was kept.
  Status Finish(bool timed) {
    if (!process_) return Ok{};
    const eval::SandboxOutcome end = process_->Finish();
    const double outside_cpu = process_->outside_cpu_seconds();
    profile_.run_log = eval::TruncateLog(eval::RunLog(end), 64 << 10);
    profile_.phase_seconds["candidate_process"] = end.wall_seconds;
    profile_.outside_cpu_seconds = outside_cpu;
    profile_.kernel_seconds = std::accumulate(timings_.begin(), timings_.end(), 0.0);
    if (over()) return Ok{};
    if (!end.exited_cleanly()) {
      // Its calls all returned, yet it did not exit as told: its own doing (a destructor cannot run).
      profile_.status = Verdict::kRuntimeError;
      profile_.message = "the kernel's process did not end cleanly after its last call";
      return Ok{};
    }
    const double allowance = options_.timing.outside_cpu_seconds + options_.timing.outside_cpu_fraction *
                                                                       std::max<size_t>(1, options_.cpus.size()) *
                                                                       profile_.kernel_seconds;
    if (outside_cpu > allowance) {
      char why[256];
      std::snprintf(why, sizeof why,
                    "kept computing after returning: its threads used %.2f ms of CPU outside its %zu calls "
                    "(allowance %.2f ms)",
                    outside_cpu * 1e3, timings_.size(), allowance * 1e3);
      return SetVerdict(Verdict::kWrongAnswer, why);
    }
    if (auto s = ReferenceForChecked(); !s) return s;
    Compare();
    if (profile_.status != Verdict::kOk) return Ok{};
    profile_.phase.clear();
    // Where the machine refused to isolate the process, nothing it measured is
    // trusted: it could have reached the engine or the other side (issue 24).
    const eval::SandboxIsolation& isolation = process_->isolation();
    if (!isolation.full()) {
      profile_.status = Verdict::kSuspect;
      profile_.message =
          "correct, but its process could not be isolated from the machine (" + isolation.refused + "): not trusted";
    }
    if (!profile_.conditions.empty() && !isolation.limits.empty())
      profile_.conditions += "; the kernel's process limited by " + isolation.limits;
    if (!timed || series_.empty()) return Ok{};
    // The most stable undisturbed series; a disturbed one only when every one was.
    std::vector<std::vector<double>> quiet;
    double load = 0;
    for (size_t i = 0; i < series_.size(); ++i)
      if (series_load_[i] <= options_.timing.disturbed_share) {
        quiet.push_back(series_[i]);
        load = std::max(load, series_load_[i]);
      }
    if (quiet.empty()) {
      quiet = series_;
      for (double l : series_load_) load = std::max(load, l);
      profile_.disturbed = true;
    }
    profile_.latency = eval::MostStable(quiet);
    profile_.latency->series = static_cast<int>(series_.size());
    profile_.other_load = load;
    profile_.checked_calls = checked_calls_;
    if (counters_) {
      long timed_calls = 0;
      for (const auto& s : series_) timed_calls += static_cast<long>(s.size());
      profile_.counters = counters_->Read(timed_calls);
    }
    return Ok{};
  }

 private:
  bool over() const { return profile_.status != Verdict::kOk; }

  Status SetVerdict(Verdict verdict, std::string message) {
    profile_.status = verdict;
    profile_.message = std::move(message);
    return Ok{};
  }

  // The process failed during `during`: a verdict, or the engine's error when
  // the harness itself could not start.
  Status Failed(const std::string& during) {
    const eval::ProcessFailure& f = *process_->failed();
    profile_.phase = during;
    profile_.run_log = eval::TruncateLog(eval::RunLog(f.outcome), 64 << 10);
    Verdict verdict;
    std::string message;
    if (!eval::DescribeFailure(f, *process_, bound_, during, verdict, message)) return Error{message};
    return SetVerdict(verdict, std::move(message));
  }

  // The handshake (releasing the process, seeing it stop again) is part of every
  // call's time. Its cost is measured with empty calls, prepared like real
  // ones, before any kernel code is in the process: the fastest is reported.
  // It is not subtracted: its jitter would make the fastest kernels look
  // faster than they are, and a latency stays an upper bound of the call.
  Status Handshake(int calls) {
    for (int i = 0; i < calls; ++i) {
      eval::PrepareCall(*process_, bound_, OutputType::kFloat, InputsOf(Fresh()), options_.timing.flush_caches);
      auto timing = process_->Noop();
      if (!timing) return timing.error();
      if (!*timing) return Failed("start");
      const double seconds = (*timing)->seconds;
      if (i == 0 || seconds < profile_.handshake_seconds) profile_.handshake_seconds = seconds;
    }
    return Ok{};
  }

  Drawn Fresh() const { return {static_cast<size_t>(eval::FreshSeed() % expected_.seeds()), eval::FreshSeed()}; }
  CallInputs InputsOf(const Drawn& d) const { return {expected_.set(d.set), d.seed}; }

  // The checked timed calls' slots: the reference run on their inputs now, all at once.
  Status ReferenceForChecked() {
    if (to_check_.empty()) return Ok{};
    auto first = expected_.AddSlots(bound_, to_check_);
    if (!first) return first.error();
    size_t slot = *first;
    for (size_t k = kept_.size() - to_check_.size(); k < kept_.size(); ++k) kept_[k].slot = slot++;
    to_check_.clear();
    return Ok{};
  }

  // One call, prepared like every other; its outputs copied into `kept` (a
  // checked call) or a scratch buffer (any other: the same copy, so that the
  // time between calls does not tell them apart).
  Status OneCall(const CallInputs& inputs, const std::string& label, Kept* kept) {
    const double prepare_start = NowSeconds();
    eval::PrepareCall(*process_, bound_, OutputType::kFloat, inputs, options_.timing.flush_caches);
    profile_.phase_seconds["call_setup"] += NowSeconds() - prepare_start;
    profile_.phase = label;
    auto timing = process_->Call();
    if (!timing) return timing.error();
    if (!*timing) return Failed(label);
    timings_.push_back((*timing)->seconds);
    if (kept) kept->outputs.resize(scratch_.size());
    const double collect_start = NowSeconds();
    eval::CopyOutputs(*process_, bound_, OutputType::kFloat, kept ? kept->outputs.data() : scratch_.data());
    profile_.phase_seconds["call_collect"] += NowSeconds() - collect_start;
    if (std::string slack = eval::CheckSlack(*process_, bound_); !slack.empty())
      return SetVerdict(Verdict::kRuntimeError, "the kernel " + slack + " (" + label + ")");
    return Ok{};
  }

  void Compare() {
    const double compare_start = NowSeconds();
    ErrorStats worst;
    bool first = true;
    for (const Kept& k : kept_) {
      const ErrorStats e =
          expected_.Judge(bound_, k.slot, k.outputs.data(), k.label, profile_.tolerance, profile_.message);
      worst = first ? e : eval::Worst(worst, e);
      first = false;
    }
    profile_.errors = worst;
    profile_.phase_seconds["compare"] = NowSeconds() - compare_start;
    if (!profile_.message.empty()) profile_.status = Verdict::kWrongAnswer;
  }

  const suite::BoundTask& bound_;
  Expected& expected_;
  const CpuTargetOptions& options_;
  Profile& profile_;
  std::vector<float> scratch_;
  std::unique_ptr<eval::KernelProcess> process_;
  std::unique_ptr<eval::ProcessCounters> counters_;
  std::vector<Kept> kept_;
  std::vector<double> timings_;  // every call's, in order
  std::vector<std::vector<double>> series_;
  std::vector<double> samples_;      // of the current series
  std::vector<double> series_load_;  // others' share of the machine during each series, parallel to series_
  long series_calls_ = 0;
  int series_checks_left_ = 0;
  std::vector<CheckedInputs> to_check_;  // inputs of the checked timed calls not yet referenced, in kept_'s order
  int checked_calls_ = 0;
};

}  // namespace

Status RunCandidate(const suite::BoundTask& bound, const std::string& library, Expected& expected,
                    const CpuTargetOptions& options, const std::string& dir, bool timed, Profile& profile) {
  profile.status = Verdict::kOk;
  Run run(bound, expected, options, profile);
  if (auto s = run.Start(library, dir, timed); !s) return s;
  if (profile.status == Verdict::kOk)
    if (auto s = run.Correctness(); !s) return s;
  if (profile.status == Verdict::kOk && timed)
    if (auto s = run.Timed(); !s) return s;
  return run.Finish(timed);
}

Result<PairedSpeedup> RunPair(const suite::BoundTask& bound, const std::string& library_a, const std::string& library_b,
                              Expected& expected, const CpuTargetOptions& options, const std::string& dir_a,
                              const std::string& dir_b, Profile& a, Profile& b) {
  a.status = b.status = Verdict::kOk;
  Run run_a(bound, expected, options, a), run_b(bound, expected, options, b);
  if (auto s = run_a.Start(library_a, dir_a, true); !s) return s.error();
  if (auto s = run_b.Start(library_b, dir_b, true); !s) return s.error();
  for (Run* run : {&run_a, &run_b})
    if (run->ok())
      if (auto s = run->Correctness(); !s) return s.error();
  for (Run* run : {&run_a, &run_b})
    if (run->ok())
      if (auto s = run->Warmup(); !s) return s.error();
  // Interleaved: A and B alternate call by call, in the order AB, BA, AB, ...
  // so that neither always runs right after the other; every call is
  // prepared as in a single evaluation. Series continue until the interval
  // is narrow or max_series is reached. A series during which other
  // processes took more than the allowed share is measured again after a
  // wait for a quiet moment: pairing cancels a load's drift, not a load that
  // slows one kernel more than the other.
  std::vector<double> times_a, times_b, disturbed_a, disturbed_b;
  PairedSpeedup conditions;
  double disturbed_load = 0;
  const TimingOptions& t = options.timing;
  const std::vector<pid_t> pids = {run_a.pid(), run_b.pid()};
  const long calls = run_a.CallsPerSeries(run_a.FirstTiming() + run_b.FirstTiming()) * 2;
  for (int s = 0, retries = 0; s < t.max_series + retries && run_a.ok() && run_b.ok(); ++s) {
    run_a.BeginSeries(calls);
    run_b.BeginSeries(calls);
    const eval::CpuSnapshot before = eval::TakeCpuSnapshot(pids);
    for (long c = 0; c < calls && run_a.ok() && run_b.ok(); ++c) {
      Run& first = c % 2 == 0 ? run_a : run_b;
      Run& second = c % 2 == 0 ? run_b : run_a;
      if (auto r = first.SeriesCall(c); !r) return r.error();
      if (!first.ok()) break;
      if (auto r = second.SeriesCall(c); !r) return r.error();
    }
    if (!run_a.ok() || !run_b.ok()) break;
    const double others = eval::LoadBetween(before, eval::TakeCpuSnapshot(pids)).others;
    const auto& series_a = run_a.EndSeries(others);
    const auto& series_b = run_b.EndSeries(others);
    if (others > t.disturbed_share) {
      ++conditions.disturbed_series;
      disturbed_a.insert(disturbed_a.end(), series_a.begin(), series_a.end());
      disturbed_b.insert(disturbed_b.end(), series_b.begin(), series_b.end());
      disturbed_load = std::max(disturbed_load, others);
      if (retries == t.disturbed_retries) break;
      ++retries;
      eval::WaitForQuiet(QuietWaitOf(t), pids);
      continue;
    }
    times_a.insert(times_a.end(), series_a.begin(), series_a.end());
    times_b.insert(times_b.end(), series_b.begin(), series_b.end());
    conditions.other_load = std::max(conditions.other_load, others);
    const PairedSpeedup so_far = eval::PairedComparison(times_a, times_b);
    if ((so_far.ci_high - so_far.ci_low) / so_far.speedup <= 2 * t.spread_tolerance) break;
  }
  if (times_a.empty()) {  // no quiet series came: the disturbed ones, marked so
    times_a = std::move(disturbed_a);
    times_b = std::move(disturbed_b);
    conditions.other_load = disturbed_load;
    conditions.disturbed = true;
  }
  if (auto s = run_a.Finish(true); !s) return s.error();
  if (auto s = run_b.Finish(true); !s) return s.error();
  if (a.status != Verdict::kOk || b.status != Verdict::kOk || times_a.empty()) return PairedSpeedup{};
  PairedSpeedup speedup = eval::PairedComparison(times_a, times_b);
  speedup.other_load = conditions.other_load;
  speedup.disturbed_series = conditions.disturbed_series;
  speedup.disturbed = conditions.disturbed;
  return speedup;
}

}  // namespace accelopt::cpu
