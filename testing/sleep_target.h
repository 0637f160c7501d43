#pragma once
/// A target of the tests' own whose "kernels" only wait: a source
/// "sleep SECONDS" builds at once and runs for that long without using a core
/// (a synthetic job of fixed duration for the service's tests and benchmarks).
/// It records when each run began and ended, to check that runs on one device
/// never overlap. Thread-safe.

#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "targets/target.h"

namespace accelopt::testing {

class SleepTarget : public targets::Target {
 public:
  struct Interval {
    double begin, end;  ///< seconds on the steady clock
  };

  std::string name() const override { return "sleep"; }
  targets::TargetInfo Describe() const override { return {"sleep", "sleep", ".sleep", {"sleep"}, "", ""}; }
  std::string Machine() const override { return "sleep-machine"; }
  std::string Device() const override { return "sleep"; }
  bool Supports(const suite::Task&) const override { return true; }
  bool ComparesSideBySide() const override { return true; }

  std::vector<Result<std::unique_ptr<targets::Built>>> Build(std::span<const targets::EvalRequest> requests) override {
    std::vector<Result<std::unique_ptr<targets::Built>>> out;
    std::lock_guard lock(mu_);
    ++build_calls_;
    for (const auto& r : requests) {
      auto built = std::make_unique<SleepBuilt>();
      built->profile.task = r.task->name;
      built->profile.shape = r.shape;
      built->profile.status = Verdict::kOk;
      built->seconds = SecondsIn(r.candidate.source);
      if (built->seconds < 0) {
        built->profile.status = Verdict::kCompileError;
        built->profile.message = "not a sleep: " + r.candidate.source;
      }
      out.push_back(std::unique_ptr<targets::Built>(std::move(built)));
    }
    return out;
  }

  std::vector<Result<Profile>> Run(std::span<targets::Built* const> built, const OnResult& on_result) override {
    std::vector<Result<Profile>> out;
    for (size_t i = 0; i < built.size(); ++i) {
      auto& one = static_cast<SleepBuilt&>(*built[i]);
      Profile p = one.profile;
      if (one.ok()) p.latency = Latency(Sleep(one.seconds));
      out.push_back(p);
      if (on_result) on_result(i, out.back());
    }
    return out;
  }

  Result<targets::PairedResult> Compare(const targets::EvalRequest& a, const targets::EvalRequest& b) override {
    targets::PairedResult r;
    const targets::EvalRequest* both[] = {&a, &b};
    Profile* profiles[] = {&r.a, &r.b};
    for (int k = 0; k < 2; ++k) {
      profiles[k]->task = both[k]->task->name;
      profiles[k]->status = Verdict::kOk;
      profiles[k]->latency = Latency(Sleep(SecondsIn(both[k]->candidate.source)));
    }
    const double ratio = r.a.latency->median_s / r.b.latency->median_s;
    r.speedup = PairedSpeedup{ratio, ratio, ratio, 1};
    return r;
  }

  std::vector<Interval> runs() const {
    std::lock_guard lock(mu_);
    return runs_;
  }
  int build_calls() const {
    std::lock_guard lock(mu_);
    return build_calls_;
  }

 private:
  struct SleepBuilt : targets::Built {
    Profile profile;
    double seconds = 0;
    const Profile& BuildProfile() const override { return profile; }
  };

  static double SecondsIn(const std::string& source) {
    if (source.rfind("sleep ", 0) != 0) return -1;
    try {
      return std::stod(source.substr(6));
    } catch (...) {
      return -1;
    }
  }

  static LatencyStats Latency(double seconds) {
    LatencyStats l;
    l.median_s = l.min_s = l.max_s = l.mean_s = seconds;
    l.calls = l.series = 1;
    return l;
  }

  static double Now() {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
  }

  double Sleep(double seconds) {
    const double begin = Now();
    std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
    const double end = Now();
    std::lock_guard lock(mu_);
    runs_.push_back({begin, end});
    return end - begin;
  }

  mutable std::mutex mu_;
  std::vector<Interval> runs_;
  int build_calls_ = 0;
};

}  // namespace accelopt::testing
