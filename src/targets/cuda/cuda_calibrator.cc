// The cuda target's calibrator: the first CUDA device's HBM bandwidth, GEMM
// and FMA peaks (calibrate.h), saved under its machine name.

#include <iterator>

#include <fmt/core.h>

#include "core/paths.h"
#include "targets/cuda/calibrate.h"
#include "targets/cuda/cuda_target.h"
#include "targets/cuda/hardware_store.h"

namespace accelopt::cuda {
namespace {

void AppendFigure(std::string& text, const char* name, const GpuFigure& f, const char* unit) {
  auto out = std::back_inserter(text);
  const std::string theoretical =
      f.theoretical > 0 ? fmt::format("{:>10.1f} {:<4}", f.theoretical, unit) : fmt::format("{:>15}", "-");
  const std::string ratio = f.theoretical > 0 ? fmt::format("{:.0f}%", 100 * f.measured / f.theoretical) : "-";
  fmt::format_to(out, "{:<26} {:>10.1f} {:<4} {} {:>6} {:>7.1f}%  {}\n", name, f.measured, unit, theoretical, ratio,
                 100 * f.spread, f.method);
}

std::string ProfileText(const GpuHardwareProfile& p, const std::string& data_dir, const std::string& state) {
  std::string text;
  auto out = std::back_inserter(text);
  fmt::format_to(out, "device       {} (sm_{}{}, {} SMs up to {:.0f} MHz, {} MB L2; memory {:.0f} MHz x {} bits)\n",
                 p.device, p.cc_major, p.cc_minor, p.sm_count, p.sm_clock_mhz, p.l2_bytes >> 20, p.memory_clock_mhz,
                 p.memory_bus_bits);
  fmt::format_to(out, "profile      {} ({})\n\n", GpuHardwareProfilePath(data_dir + "/hardware", p.machine), state);
  fmt::format_to(out, "{:<26} {:>15} {:>15} {:>6} {:>8}  {}\n", "figure", "measured", "theoretical", "ratio", "spread",
                 "how");
  AppendFigure(text, "HBM bandwidth", p.hbm, "GB/s");
  AppendFigure(text, "bf16 GEMM (tensor cores)", p.bf16_gemm, "GF/s");
  AppendFigure(text, "fp32 GEMM (no TF32)", p.fp32_gemm, "GF/s");
  AppendFigure(text, "FP32 FMA peak", p.fp32_fma, "GF/s");
  for (const auto& [name, f] : p.details)
    fmt::format_to(out, "  {} {:.1f} (spread {:.1f}%): {}\n", name, f.measured, 100 * f.spread, f.method);
  fmt::format_to(
      out,
      "\ntheoretical = SMs x the architecture's rate per SM and clock (src/targets/cuda/arch_peaks.h) x the maximum "
      "SM clock; HBM = memory clock x 2 x bus width\n"
      "scored against: HBM bandwidth; fp32 GEMM for float32 inputs, bf16 GEMM for bf16 inputs; the FMA peak for "
      "other arithmetic\n"
      "spread = (best - third best repetition) / best\n");
  for (const auto& e : p.evidence)
    fmt::format_to(out, "raised       {} to {:.1f} on {} by kernel {} ({}: {})\n", e.figure, e.value, e.measured_at,
                   e.kernel_hash, e.task, e.shape);
  return text;
}

class CudaCalibrator : public targets::Calibrator {
 public:
  Result<targets::CalibrationReport> Calibrate(const targets::CalibrateOptions& options) override {
    if (auto settings = targets::ResolveSettings({}, options.settings, "the cuda target's calibration"); !settings)
      return settings.error();
    auto device = FindDevice();
    if (!device) return Error{"cannot calibrate the cuda target: " + device.error().message};
    const std::string data_dir = options.data_dir.empty() ? DataDir() : options.data_dir;
    const std::string cache_dir = options.cache_dir.empty() ? CacheDir() : options.cache_dir;
    targets::CalibrationReport report;
    auto saved = LoadGpuHardwareProfile(data_dir + "/hardware", device->Machine());
    if (!saved) return saved.error();
    if (saved->has_value() && !options.force) {
      report.json = ToJson(**saved);
      report.text = ProfileText(**saved, data_dir, "saved " + (*saved)->measured_at + "; --force to measure again");
      return report;
    }
    if (options.before_measuring) options.before_measuring();
    GpuCalibrationOptions calibration_options;
    calibration_options.nvcc.cache_dir = cache_dir + "/cuda-build";  // where the cuda target builds its programs
    calibration_options.work_dir = cache_dir + "/work";
    auto calibration = CalibrateGpuAndSave(calibration_options, data_dir, options.say, &report.saved);
    if (!calibration) return calibration.error();
    report.measured = true;
    report.json = ToJson(calibration->profile);
    report.json["saved"] = report.saved;
    report.json["problems"] = calibration->problems;
    report.text =
        ProfileText(calibration->profile, data_dir, report.saved ? "measured now, saved" : "measured now, NOT saved");
    return report;
  }
};

}  // namespace

std::unique_ptr<targets::Calibrator> MakeCudaCalibrator() { return std::make_unique<CudaCalibrator>(); }

}  // namespace accelopt::cuda
