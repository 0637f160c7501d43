// accelopt calibrate: measure this machine's limits and save them.

#include <fmt/core.h>

#include "cli/common.h"
#include "core/paths.h"
#include "targets/cpu/hardware_store.h"

namespace accelopt::cli {
namespace {

void PrintProfile(const cpu::HardwareProfile& p, bool fresh) {
  fmt::print("machine      {} ({} cores, {}-bit SIMD, fingerprint {})\n", p.machine.cpu_model, p.machine.cores,
             p.machine.simd_bits, p.machine.fingerprint);
  fmt::print("profile      {} ({})\n", cpu::HardwareProfilePath(DataDir() + "/hardware", p.machine.fingerprint),
             fresh ? "measured now" : "saved " + p.measured_at + "; --force to measure again");
  fmt::print("clock        {:.2f} GHz measured under load\n\n", p.clock_ghz);
  fmt::print("{:<28} {:>12} {:>14} {:>8}\n", "figure", "measured", "theoretical", "ratio");
  auto row = [](const char* name, double measured, double theoretical, const char* unit) {
    if (theoretical > 0)
      fmt::print("{:<28} {:>8.1f} {:<4}{:>10.1f} {:<4}{:>6.0f}%\n", name, measured, unit, theoretical, unit,
                 100 * measured / theoretical);
    else
      fmt::print("{:<28} {:>8.1f} {:<4}{:>15}{:>8}\n", name, measured, unit, "-", "-");
  };
  row("memory bandwidth (streaming)", p.bandwidth_gbs, 0, "GB/s");
  row("peak_mm (FMA)", p.peak_mm_gflops, p.theoretical_mm_gflops, "GF/s");
  row("peak_vec (add/mul)", p.peak_vec_gflops, p.theoretical_vec_gflops, "GF/s");
  row("OpenBLAS sgemm (ceiling)", p.blas_sgemm_gflops, p.theoretical_mm_gflops, "GF/s");
  fmt::print(
      "\ntheoretical = cores x {} FMA units x {} lanes x 2 flops x clock (units and lanes assumed per CPU family)\n",
      p.fma_units, p.fma_lanes);
  if (p.other_load > 0.05)
    fmt::print(
        "\nwarning: other processes used {:.0f}% of the CPU time while this profile was measured, so the\n"
        "peaks are likely underestimated (and percentages of peak overstated). Run `accelopt calibrate\n"
        "--force` on an idle machine.\n",
        100 * p.other_load);
}

}  // namespace

void RegisterCalibrate(CLI::App& app) {
  auto* cmd = app.add_subcommand("calibrate",
                                 "measure memory bandwidth, FMA and vector peaks and OpenBLAS sgemm on this machine");
  static bool force = false, json = false;
  cmd->add_flag("--force", force, "measure again even if this machine has a saved profile");
  cmd->add_flag("--json", json, "print the profile as JSON");
  cmd->callback([] {
    bool measured = false;
    auto profile = HardwareProfileFor(/*calibrate_if_missing=*/true, force, &measured);
    if (json)
      fmt::print("{}\n", cpu::ToJson(*profile).dump(2));
    else
      PrintProfile(*profile, measured);
  });
}

}  // namespace accelopt::cli
