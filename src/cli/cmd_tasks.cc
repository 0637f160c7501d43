// accelopt tasks: list the suite with shapes, bound and T on this machine.

#include <fmt/core.h>

#include "cli/common.h"
#include "suite/roofline.h"
#include "targets/cpu/cpu_target.h"
#include "targets/cpu/hardware_store.h"
#include "targets/cpu/register.h"

namespace accelopt::cli {
void RegisterTasks(CLI::App& app) {
  auto* cmd = app.add_subcommand("tasks", "list the task suite: shapes, bound and roofline time T on this machine");
  static CommonFlags flags;
  static std::string shape = "bench";
  static bool json = false;
  AddSuiteFlag(*cmd, flags);
  cmd->add_option("--shape", shape, "shape to show (bench, test, ...)");
  cmd->add_flag("--json", json, "print JSON");
  cmd->callback([] {
    auto tasks = LoadSuiteOrExit(flags.suite_dir);
    targets::TargetSettings settings;
    settings.calibrate_if_missing = false;
    auto hardware = cpu::HardwareFor(settings);
    if (!hardware) throw Exit{kExitError, hardware.error().message};
    if (!*hardware && !json) fmt::print(stderr, "(not calibrated: T is shown once `accelopt calibrate` has run)\n");
    Json out = Json::array();
    std::vector<std::string> too_large;
    if (!json)
      fmt::print("{:<20} {:<7} {:>11}  {:<32} {}\n", "task", "bound", "T", "shape (" + shape + ")", "computes");
    for (const auto& task : tasks) {
      auto bound = suite::Bind(task, shape);
      if (!bound) throw Exit{kExitError, bound.error().message};
      auto counts = suite::CountRoofline(*bound);
      if (!counts) throw Exit{kExitError, counts.error().message};
      suite::RooflineTime t{0, "-"};
      if (*hardware) t = suite::ComputeRooflineTime(*counts, cpu::RatesOf(**hardware));
      // Dimensions are integers (the task loader checks it).
      Json params = Json::object();
      for (const auto& [k, v] : bound->params) params[k] = static_cast<long>(v);
      const double needed = cpu::MemoryNeededBytes(*bound), available = cpu::AvailableMemoryBytes();
      const bool fits = available <= 0 || needed <= available;
      if (!fits)
        too_large.push_back(fmt::format("{} ({}): needs at least {:.1f} GB, this machine has {:.1f} GB available",
                                        task.name, shape, needed / 1e9, available / 1e9));
      if (json) {
        out.push_back({{"task", task.name},
                       {"description", task.description},
                       {"shape", params},
                       {"memory_needed_bytes", needed},
                       {"fits_in_memory", fits},
                       {"flops_mm", counts->flops_mm},
                       {"flops_vec", counts->flops_vec},
                       {"min_bytes", counts->min_bytes},
                       {"bound", t.bound},
                       {"roofline_seconds", t.seconds},
                       {"provenance", task.provenance}});
      } else {
        fmt::print("{:<20} {:<7} {:>11}  {:<32} {}\n", task.name + (fits ? "" : " (!)"), t.bound,
                   FormatSeconds(t.seconds), suite::ShapeText(bound->params), task.description);
      }
    }
    if (json) fmt::print("{}\n", DumpJson(out, 2));
    if (!json && !too_large.empty()) {
      fmt::print("\n(!) too large for this machine's memory; an evaluation would be refused:\n");
      for (const auto& line : too_large) fmt::print("  {}\n", line);
    }
  });
}

}  // namespace accelopt::cli
