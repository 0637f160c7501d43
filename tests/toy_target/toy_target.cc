#include "tests/toy_target/toy_target.h"

#include <cmath>
#include <sstream>

#include "core/hash.h"

namespace accelopt::toy {
namespace {

// The one registration line a new target needs.
const targets::TargetRegistrar kRegistered{Registration()};

constexpr int kElements = 64;

// A toy kernel, as its source says.
struct Kernel {
  double scale = 1;
  double cost_us = 1;
};

// An Error says which line is not `scale X` or `cost_us X` (X > 0 for the cost).
Result<Kernel> Parse(const std::string& source) {
  Kernel k;
  std::istringstream lines(source);
  std::string line;
  for (int n = 1; std::getline(lines, line); ++n) {
    std::istringstream words(line);
    std::string key;
    double value = 0;
    if (!(words >> key)) continue;
    if (!(words >> value) || (key != "scale" && key != "cost_us") || (key == "cost_us" && value <= 0))
      return Error{"line " + std::to_string(n) + ": expected `scale X` or `cost_us X`, got `" + line + "`"};
    (key == "scale" ? k.scale : k.cost_us) = value;
  }
  return k;
}

class ToyBuilt : public targets::Built {
 public:
  ToyBuilt(Profile profile, Kernel kernel, const suite::Task* task)
      : profile_(std::move(profile)), kernel_(kernel), task_(task) {}
  const Profile& BuildProfile() const override { return profile_; }
  const Kernel& kernel() const { return kernel_; }
  const suite::Task& task() const { return *task_; }

 private:
  Profile profile_;
  Kernel kernel_;
  const suite::Task* task_;
};

class ToyTarget : public targets::Target {
 public:
  explicit ToyTarget(double noise_us) : noise_us_(noise_us) {}
  std::string name() const override { return kToyTarget; }
  targets::TargetInfo Describe() const override { return {kToyTarget, "toy", ".toy", {"toy"}, "(none)", ""}; }
  std::string Machine() const override { return "toy-machine"; }
  bool Supports(const suite::Task& task) const override { return !task.inputs.empty() && !task.outputs.empty(); }

  std::vector<Result<std::unique_ptr<targets::Built>>> Build(std::span<const targets::EvalRequest> requests) override {
    std::vector<Result<std::unique_ptr<targets::Built>>> out;
    for (const targets::EvalRequest& r : requests) {
      Profile p;
      p.task = r.task->name;
      p.shape = r.shape;
      p.target = name();
      auto kernel = Parse(r.candidate.source);
      if (!kernel) {
        p.status = Verdict::kCompileError;
        p.message = kernel.error().message;
        p.compile_log = kernel.error().message;
      }
      out.push_back(std::unique_ptr<targets::Built>(
          std::make_unique<ToyBuilt>(std::move(p), kernel ? *kernel : Kernel{}, r.task)));
    }
    return out;
  }

  std::vector<Result<Profile>> Run(std::span<targets::Built* const> built, const OnResult& on_result) override {
    std::vector<Result<Profile>> out;
    for (size_t k = 0; k < built.size(); ++k) {
      out.push_back(RunOne(static_cast<const ToyBuilt&>(*built[k])));
      if (on_result) on_result(k, out.back());
    }
    return out;
  }

  bool ComparesSideBySide() const override { return true; }

  Result<targets::PairedResult> Compare(const targets::EvalRequest& a, const targets::EvalRequest& b) override {
    const targets::EvalRequest both[] = {a, b};
    std::vector<Result<Profile>> profiles = Evaluate(both);
    if (!profiles[0]) return profiles[0].error();
    if (!profiles[1]) return profiles[1].error();
    targets::PairedResult paired{*profiles[0], *profiles[1], std::nullopt};
    if (paired.a.status == Verdict::kOk && paired.b.status == Verdict::kOk) {
      const double speedup = paired.a.latency->median_s / paired.b.latency->median_s;
      paired.speedup = PairedSpeedup{speedup, speedup, speedup};
    }
    return paired;
  }

 private:
  // The kernel on inputs drawn from the task's name, against the inputs doubled.
  Profile RunOne(const ToyBuilt& built) const {
    Profile p = built.BuildProfile();
    if (p.status != Verdict::kOk) return p;
    uint64_t state = Fnv1a64(built.task().name);
    double worst = 0;
    for (int i = 0; i < kElements; ++i) {
      state = SplitMix64(state);
      const double x = static_cast<double>(state >> 11) / static_cast<double>(1ULL << 53) - 0.5;
      worst = std::max(worst, std::abs(built.kernel().scale * x - 2 * x));
    }
    p.seeds = 1;
    p.tolerance = built.task().tolerance;
    if (worst > p.tolerance) {
      p.status = Verdict::kWrongAnswer;
      p.message = "an output differs from its input doubled by " + std::to_string(worst);
      return p;
    }
    const double seconds = (built.kernel().cost_us + noise_us_) * 1e-6;
    p.latency = LatencyStats{seconds, seconds, seconds, seconds, 0, 1, 1};
    return p;
  }

  double noise_us_;
};

// Its calibration measures nothing: a fixed profile, never saved.
class ToyCalibrator : public targets::Calibrator {
 public:
  Result<targets::CalibrationReport> Calibrate(const targets::CalibrateOptions& options) override {
    if (auto settings = targets::ResolveSettings({}, options.settings, "the toy target's calibration"); !settings)
      return settings.error();
    targets::CalibrationReport report;
    report.json = {{"bandwidth_gbs", 1.0}, {"peak_mm_gflops", 1.0}, {"peak_vec_gflops", 1.0}};
    report.text = "toy machine: 1 GB/s, 1 GFLOP/s\n";
    return report;
  }
};

}  // namespace

targets::TargetKind Registration() {
  targets::TargetKind kind;
  kind.name = kToyTarget;
  kind.summary = "toy kernels (`scale X`, `cost_us X`), run by the tests";
  kind.settings = {{"noise_us", targets::SettingType::kNumber, 0.0, "added to every call's cost, microseconds"}};
  kind.make = [](const targets::TargetSettings& settings) -> Result<std::unique_ptr<targets::Target>> {
    auto own = targets::SettingsFor(kToyTarget, settings);
    if (!own) return own.error();
    return std::unique_ptr<targets::Target>(std::make_unique<ToyTarget>((*own)["noise_us"].get<double>()));
  };
  kind.calibrator = [] { return std::unique_ptr<targets::Calibrator>(std::make_unique<ToyCalibrator>()); };
  kind.free_form_languages = {"toy"};
  return kind;
}

}  // namespace accelopt::toy
