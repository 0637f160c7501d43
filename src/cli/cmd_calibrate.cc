// accelopt calibrate: measure the hardware a target scores against (the
// default target: this machine's cores; --target cuda: its GPU) and save it.

#include <algorithm>

#include <fmt/core.h>

#include "cli/common.h"
#include "core/paths.h"
#include "eval/machine_load.h"

namespace accelopt::cli {

void RegisterCalibrate(CLI::App& app) {
  auto* cmd = app.add_subcommand("calibrate",
                                 "measure memory bandwidth, FMA and vector peaks and OpenBLAS sgemm on this machine "
                                 "(--target cuda: HBM bandwidth, cuBLASLt GEMM and FMA peaks of its GPU)");
  static bool force = false, json = false;
  static int fma_units = 0;
  static std::string target = targets::kDefaultTarget;
  std::string calibrated;
  for (const targets::TargetKind& kind : targets::RegisteredTargets())
    if (kind.calibrator) calibrated += (calibrated.empty() ? "" : ", ") + kind.name;
  cmd->add_option("--target", target,
                  "the target whose hardware to measure (" + calibrated + "; default " + targets::kDefaultTarget + ")");
  cmd->add_flag("--force", force, "measure again even if this machine has a saved profile");
  cmd->add_option("--fma-units", fma_units,
                  "FMA pipes per core for the theoretical peak, when this CPU has fewer than its family "
                  "(default: assumed per CPU family)")
      ->check(CLI::Range(1, 8));
  cmd->add_flag("--json", json,
                "print the profile as JSON, with `saved`, `problems` and `measured_now` (false: the saved profile)");
  static double wait_quiet = 0;
  static bool or_unscored = false;
  cmd->add_option("--wait-quiet", wait_quiet,
                  "before measuring, wait up to this many seconds for a quiet machine (other processes using at "
                  "most 10% of the CPU), counting down on stderr")
      ->check(CLI::NonNegativeNumber);
  cmd->add_flag("--or-unscored", or_unscored,
                "when the measurement fails its checks (a busy machine), say why and how to score later, and exit "
                "0: kernels are then checked and timed, unscored (what `make demo` uses)");
  cmd->callback([] {
    const targets::TargetKind* kind = targets::FindTarget(target);
    if (!kind || !kind->calibrator)
      throw Exit{kExitUsage, "--target " + target + ": " +
                                 (kind ? "the " + target + " target has no hardware to calibrate"
                                       : "no such target (see `accelopt targets`)")};
    std::unique_ptr<targets::Calibrator> calibrator = kind->calibrator();
    targets::CalibrateOptions options;
    options.force = force;
    // A setting the target's calibration takes, passed on by name; one it does not take is refused.
    if (fma_units != 0) {
      const auto settings = calibrator->Settings();
      if (std::none_of(settings.begin(), settings.end(), [](const auto& s) { return s.name == "fma_units"; }))
        throw Exit{kExitUsage, "--fma-units does not apply to the " + target + " target's calibration"};
      options.settings["fma_units"] = fma_units;
    }
    options.data_dir = DataDir();
    options.cache_dir = CacheDir();
    options.say = [](const std::string& text) { fmt::print(stderr, "{}\n", text); };
    options.before_measuring = [] {
      if (wait_quiet <= 0) return;
      eval::QuietWait wait;
      wait.max_seconds = wait_quiet;
      wait.on_busy = [](double others, double left) {
        fmt::print(stderr, "\rthe machine is busy (other processes use {:.0f}% of the CPU): waiting for a quiet moment, "
                           "{:.0f} s left ",
                   100 * others, left);
      };
      const bool quiet = eval::WaitForQuiet(wait);
      fmt::print(stderr, "\r{:<90}\n", quiet ? "the machine is quiet: measuring" : "still busy: measuring anyway");
    };
    auto report = calibrator->Calibrate(options);
    if (!report) throw Exit{kExitError, report.error().message};
    if (json) {
      // A saved profile passed its checks when it was saved: it is the
      // machine's, with no problem, as a profile measured now and saved says.
      Json out = report->json;
      if (!report->measured) {
        out["saved"] = true;
        out["problems"] = Json::array();
      }
      out["measured_now"] = report->measured;
      fmt::print("{}\n", DumpJson(out, 2));
    } else {
      fmt::print("{}", report->text);
    }
    if (report->measured && !report->saved) {
      if (!or_unscored) throw Exit{kExitError, "the calibration failed its checks (above) and was not saved"};
      fmt::print(stderr,
                 "the calibration failed its checks (above; on a busy machine, other processes disturb it) and was "
                 "not saved: what follows checks and times kernels unscored (no % of peak). To score them, run "
                 "`accelopt calibrate` when the machine is quiet, then run again (a run is scored against the "
                 "profile it began with).\n");
    }
  });
}

}  // namespace accelopt::cli
