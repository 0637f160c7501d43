// accelopt calibrate: measure this machine's limits (its cores, or with
// --target cuda its GPU) and save them.

#include <fmt/core.h>

#include "cli/common.h"
#include "core/paths.h"
#include "targets/cpu/hardware_store.h"
#include "targets/cpu/register.h"
#include "targets/cuda/calibrate.h"
#include "targets/cuda/hardware_store.h"

namespace accelopt::cli {
namespace {

void PrintProfile(const cpu::HardwareProfile& p, const std::string& state) {
  auto spread = [&](const char* name) {
    auto it = p.spreads.find(name);
    return it == p.spreads.end() ? std::string("-") : fmt::format("{:.1f}%", 100 * it->second);
  };
  fmt::print("machine      {} ({} cores, {}-bit SIMD, fingerprint {})\n", p.machine.cpu_model, p.machine.cores,
             p.machine.simd_bits, p.machine.fingerprint);
  fmt::print("profile      {} ({})\n", cpu::HardwareProfilePath(DataDir() + "/hardware", p.machine.fingerprint), state);
  fmt::print("clock        {:.2f} GHz with every core running FMAs (spread {})\n", p.clock_ghz, spread("clock"));
  fmt::print("rounds       {}; other processes used {:.0f}% of the CPU meanwhile\n\n", p.rounds, 100 * p.other_load);
  fmt::print("{:<28} {:>12} {:>14} {:>8} {:>8}\n", "figure", "measured", "theoretical", "ratio", "spread");
  auto row = [&](const char* name, double measured, double theoretical, const char* unit, const char* key) {
    if (theoretical > 0)
      fmt::print("{:<28} {:>8.1f} {:<4}{:>10.1f} {:<4}{:>6.0f}% {:>8}\n", name, measured, unit, theoretical, unit,
                 100 * measured / theoretical, spread(key));
    else
      fmt::print("{:<28} {:>8.1f} {:<4}{:>15}{:>8} {:>8}\n", name, measured, unit, "-", "-", spread(key));
  };
  row("memory bandwidth (streaming)", p.bandwidth_gbs, 0, "GB/s", "bandwidth");
  row("peak_mm (FMA)", p.peak_mm_gflops, p.theoretical_mm_gflops, "GF/s", "peak_mm");
  row("peak_vec (add/mul)", p.peak_vec_gflops, p.theoretical_vec_gflops, "GF/s", "peak_vec");
  row("OpenBLAS sgemm (ceiling)", p.blas_sgemm_gflops, p.theoretical_mm_gflops, "GF/s", "sgemm");
  fmt::print(
      "\ntheoretical = cores x {} FMA units x {} lanes x 2 flops x clock (units and lanes assumed per CPU family, "
      "units as stated with --fma-units)\n"
      "spread = (best - third best round) / best\n",
      p.fma_units, p.fma_lanes);
  for (const auto& e : p.evidence)
    fmt::print("raised       {} to {:.1f} on {} by kernel {} ({}: {})\n", e.figure, e.value, e.measured_at,
               e.kernel_hash, e.task, e.shape);
}

void PrintGpuFigure(const char* name, const cuda::GpuFigure& f, const char* unit) {
  const std::string theoretical =
      f.theoretical > 0 ? fmt::format("{:>10.1f} {:<4}", f.theoretical, unit) : fmt::format("{:>15}", "-");
  const std::string ratio = f.theoretical > 0 ? fmt::format("{:.0f}%", 100 * f.measured / f.theoretical) : "-";
  fmt::print("{:<26} {:>10.1f} {:<4} {} {:>6} {:>7.1f}%  {}\n", name, f.measured, unit, theoretical, ratio,
             100 * f.spread, f.method);
}

void PrintGpuProfile(const cuda::GpuHardwareProfile& p, const std::string& state) {
  fmt::print("device       {} (sm_{}{}, {} SMs up to {:.0f} MHz, {} MB L2; memory {:.0f} MHz x {} bits)\n", p.device,
             p.cc_major, p.cc_minor, p.sm_count, p.sm_clock_mhz, p.l2_bytes >> 20, p.memory_clock_mhz,
             p.memory_bus_bits);
  fmt::print("profile      {} ({})\n\n", cuda::GpuHardwareProfilePath(DataDir() + "/hardware", p.machine), state);
  fmt::print("{:<26} {:>15} {:>15} {:>6} {:>8}  {}\n", "figure", "measured", "theoretical", "ratio", "spread", "how");
  PrintGpuFigure("HBM bandwidth", p.hbm, "GB/s");
  PrintGpuFigure("bf16 GEMM (tensor cores)", p.bf16_gemm, "GF/s");
  PrintGpuFigure("fp32 GEMM (no TF32)", p.fp32_gemm, "GF/s");
  PrintGpuFigure("FP32 FMA peak", p.fp32_fma, "GF/s");
  for (const auto& [name, f] : p.details)
    fmt::print("  {} {:.1f} (spread {:.1f}%): {}\n", name, f.measured, 100 * f.spread, f.method);
  fmt::print(
      "\ntheoretical = SMs x the architecture's rate per SM and clock (src/targets/cuda/arch_peaks.h) x the maximum "
      "SM clock; HBM = memory clock x 2 x bus width\n"
      "scored against: HBM bandwidth; fp32 GEMM for float32 inputs, bf16 GEMM for bf16 inputs; the FMA peak for "
      "other arithmetic\n"
      "spread = (best - third best repetition) / best\n");
  for (const auto& e : p.evidence)
    fmt::print("raised       {} to {:.1f} on {} by kernel {} ({}: {})\n", e.figure, e.value, e.measured_at,
               e.kernel_hash, e.task, e.shape);
}

// --target cuda: the first CUDA device, saved under its machine name.
void CalibrateCuda(bool force, bool json) {
  auto device = cuda::FindDevice();
  if (!device) throw Exit{kExitError, "cannot calibrate the cuda target: " + device.error().message};
  auto saved = cuda::LoadGpuHardwareProfile(DataDir() + "/hardware", device->Machine());
  if (!saved) throw Exit{kExitError, saved.error().message};
  if (saved->has_value() && !force) {
    if (json)
      fmt::print("{}\n", DumpJson(cuda::ToJson(**saved), 2));
    else
      PrintGpuProfile(**saved, "saved " + (*saved)->measured_at + "; --force to measure again");
    return;
  }
  cuda::GpuCalibrationOptions options;
  options.nvcc.cache_dir = CacheDir() + "/cuda-build";  // where the cuda target builds its programs
  options.work_dir = CacheDir() + "/work";
  bool fresh = false;
  auto calibration = cuda::CalibrateGpuAndSave(
      options, DataDir(), [](const std::string& text) { fmt::print(stderr, "{}\n", text); }, &fresh);
  if (!calibration) throw Exit{kExitError, calibration.error().message};
  if (json) {
    Json j = cuda::ToJson(calibration->profile);
    j["saved"] = fresh;
    j["problems"] = calibration->problems;
    fmt::print("{}\n", DumpJson(j, 2));
  } else {
    PrintGpuProfile(calibration->profile, fresh ? "measured now, saved" : "measured now, NOT saved");
  }
  if (!fresh) throw Exit{kExitError, "the calibration failed its checks (above) and was not saved"};
}

}  // namespace

void RegisterCalibrate(CLI::App& app) {
  auto* cmd = app.add_subcommand("calibrate",
                                 "measure memory bandwidth, FMA and vector peaks and OpenBLAS sgemm on this machine "
                                 "(--target cuda: HBM bandwidth, cuBLASLt GEMM and FMA peaks of its GPU)");
  static bool force = false, json = false;
  static int fma_units = 0;
  static std::string target = "cpu";
  cmd->add_option("--target", target, "the target whose hardware to measure: cpu (this machine's cores) or cuda")
      ->check(CLI::IsMember({"cpu", "cuda"}));
  cmd->add_flag("--force", force, "measure again even if this machine has a saved profile");
  cmd->add_option("--fma-units", fma_units,
                  "FMA pipes per core for the theoretical peak, when this CPU has fewer than its family "
                  "(default: assumed per CPU family)")
      ->check(CLI::Range(1, 8));
  cmd->add_flag("--json", json, "print the profile as JSON (with `saved` and `problems`)");
  cmd->callback([] {
    if (target == "cuda") {
      if (fma_units != 0) throw Exit{kExitUsage, "--fma-units applies to the cpu target only"};
      return CalibrateCuda(force, json);
    }
    auto saved = cpu::LoadHardwareProfile(DataDir() + "/hardware", cpu::DetectMachine().fingerprint);
    if (!saved) throw Exit{kExitError, saved.error().message};
    if (saved->has_value() && !force && fma_units == 0) {
      if (json)
        fmt::print("{}\n", DumpJson(cpu::ToJson(**saved), 2));
      else
        PrintProfile(**saved, "saved " + (*saved)->measured_at + "; --force to measure again");
      return;
    }
    bool fresh = false;
    cpu::CalibrationOptions options;
    options.fma_units = fma_units;
    auto calibration = cpu::CalibrateAndSave(
        options, DataDir(), [](const std::string& text) { fmt::print(stderr, "{}\n", text); }, &fresh);
    if (!calibration) throw Exit{kExitError, calibration.error().message};
    if (json) {
      Json j = cpu::ToJson(calibration->profile);
      j["saved"] = fresh;
      j["problems"] = calibration->problems;
      j["notes"] = calibration->notes;
      fmt::print("{}\n", DumpJson(j, 2));
    } else {
      PrintProfile(calibration->profile, fresh ? "measured now, saved" : "measured now, NOT saved");
    }
    if (!fresh) throw Exit{kExitError, "the calibration failed its checks (above) and was not saved"};
  });
}

}  // namespace accelopt::cli
