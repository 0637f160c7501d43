// The cpu target's calibrator: this machine's cores, their bandwidth, FMA and
// vector peaks and OpenBLAS sgemm (calibrate.h), saved per machine fingerprint.

#include <iterator>

#include <fmt/core.h>

#include "core/paths.h"
#include "targets/cpu/hardware_store.h"
#include "targets/cpu/register.h"

namespace accelopt::cpu {
namespace {

std::string ProfileText(const HardwareProfile& p, const std::string& data_dir, const std::string& state) {
  std::string text;
  auto out = std::back_inserter(text);
  auto spread = [&](const char* name) {
    auto it = p.spreads.find(name);
    return it == p.spreads.end() ? std::string("-") : fmt::format("{:.1f}%", 100 * it->second);
  };
  fmt::format_to(out, "machine      {} ({} cores, {}-bit SIMD, fingerprint {})\n", p.machine.cpu_model, p.machine.cores,
                 p.machine.simd_bits, p.machine.fingerprint);
  fmt::format_to(out, "profile      {} ({})\n", HardwareProfilePath(data_dir + "/hardware", p.machine.fingerprint),
                 state);
  fmt::format_to(out, "clock        {:.2f} GHz with every core running FMAs (spread {})\n", p.clock_ghz,
                 spread("clock"));
  fmt::format_to(out, "rounds       {}; other processes used {:.0f}% of the CPU meanwhile\n\n", p.rounds,
                 100 * p.other_load);
  fmt::format_to(out, "{:<28} {:>12} {:>14} {:>8} {:>8}\n", "figure", "measured", "theoretical", "ratio", "spread");
  auto row = [&](const char* name, double measured, double theoretical, const char* unit, const char* key) {
    if (theoretical > 0)
      fmt::format_to(out, "{:<28} {:>8.1f} {:<4}{:>10.1f} {:<4}{:>6.0f}% {:>8}\n", name, measured, unit, theoretical,
                     unit, 100 * measured / theoretical, spread(key));
    else
      fmt::format_to(out, "{:<28} {:>8.1f} {:<4}{:>15}{:>8} {:>8}\n", name, measured, unit, "-", "-", spread(key));
  };
  row("memory bandwidth (streaming)", p.bandwidth_gbs, 0, "GB/s", "bandwidth");
  row("peak_mm (FMA)", p.peak_mm_gflops, p.theoretical_mm_gflops, "GF/s", "peak_mm");
  row("peak_vec (add/mul)", p.peak_vec_gflops, p.theoretical_vec_gflops, "GF/s", "peak_vec");
  row("OpenBLAS sgemm (ceiling)", p.blas_sgemm_gflops, p.theoretical_mm_gflops, "GF/s", "sgemm");
  fmt::format_to(
      out,
      "\ntheoretical = cores x {} FMA units x {} lanes x 2 flops x clock (units and lanes assumed per CPU family, "
      "units as stated with --fma-units)\n"
      "spread = (best - third best round) / best\n",
      p.fma_units, p.fma_lanes);
  for (const auto& e : p.evidence)
    fmt::format_to(out, "raised       {} to {:.1f} on {} by kernel {} ({}: {})\n", e.figure, e.value, e.measured_at,
                   e.kernel_hash, e.task, e.shape);
  return text;
}

// A profile and what calibrate says of it, for --json.
Json ReportJson(const Calibration& calibration, bool saved) {
  Json j = ToJson(calibration.profile);
  j["saved"] = saved;
  j["problems"] = calibration.problems;
  j["notes"] = calibration.notes;
  return j;
}

class CpuCalibrator : public targets::Calibrator {
 public:
  std::vector<targets::SettingSpec> Settings() const override {
    return {{"fma_units", targets::SettingType::kInt, 0,
             "FMA pipes per core for the theoretical peak, when this CPU has fewer than its family (0: assumed per "
             "CPU family); given, the machine is measured again"}};
  }

  Result<targets::CalibrationReport> Calibrate(const targets::CalibrateOptions& options) override {
    auto settings = targets::ResolveSettings(Settings(), options.settings, "the cpu target's calibration");
    if (!settings) return settings.error();
    const int fma_units = (*settings)["fma_units"].get<int>();
    if (fma_units < 0 || fma_units > 8) return Error{"fma_units must be between 1 and 8 (0: assumed per CPU family)"};
    const std::string data_dir = options.data_dir.empty() ? DataDir() : options.data_dir;
    targets::CalibrationReport report;
    auto saved = LoadHardwareProfile(data_dir + "/hardware", DetectMachine().fingerprint);
    if (!saved) return saved.error();
    if (saved->has_value() && !options.force && fma_units == 0) {
      report.json = ToJson(**saved);
      report.text = ProfileText(**saved, data_dir, "saved " + (*saved)->measured_at + "; --force to measure again");
      return report;
    }
    if (options.before_measuring) options.before_measuring();
    CalibrationOptions calibration_options;
    calibration_options.fma_units = fma_units;
    auto calibration = CalibrateAndSave(calibration_options, data_dir, options.say, &report.saved);
    if (!calibration) return calibration.error();
    report.measured = true;
    report.json = ReportJson(*calibration, report.saved);
    report.text =
        ProfileText(calibration->profile, data_dir, report.saved ? "measured now, saved" : "measured now, NOT saved");
    return report;
  }

  // A run's recorded profile: the figures it was scored against, with their spreads.
  std::string DescribeRecorded(const Json& hardware) const override {
    std::string text;
    auto out = std::back_inserter(text);
    auto h = HardwareProfileFromJson(hardware);
    if (!h) return fmt::format("scored against: unreadable hardware profile ({})\n", h.error().message);
    auto spread = [&](const char* name) {
      auto it = h->spreads.find(name);
      return it == h->spreads.end() ? std::string("-") : fmt::format("{:.1f}%", 100 * it->second);
    };
    fmt::format_to(out, "scored against: {} ({} cores, fingerprint {}), calibrated {} in {} rounds\n",
                   h->machine.cpu_model, h->machine.cores, h->machine.fingerprint, h->measured_at, h->rounds);
    fmt::format_to(
        out,
        "  bandwidth {:.1f} GB/s (spread {}), peak_mm {:.1f} GFLOP/s (spread {}; theoretical {:.1f}), peak_vec "
        "{:.1f} GFLOP/s (spread {}), sgemm {:.1f} GFLOP/s, other load {:.0f}%\n",
        h->bandwidth_gbs, spread("bandwidth"), h->peak_mm_gflops, spread("peak_mm"), h->theoretical_mm_gflops,
        h->peak_vec_gflops, spread("peak_vec"), h->blas_sgemm_gflops, 100 * h->other_load);
    for (const auto& e : h->evidence)
      fmt::format_to(out, "  {} raised from {:.4g} to {:.4g} by kernel {} ({}, {})\n", e.figure, e.previous, e.value,
                     e.kernel_hash, e.task, e.measured_at);
    return text;
  }
};

}  // namespace

std::unique_ptr<targets::Calibrator> MakeCpuCalibrator() { return std::make_unique<CpuCalibrator>(); }

}  // namespace accelopt::cpu
