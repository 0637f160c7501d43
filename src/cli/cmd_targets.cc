// accelopt targets: the registered targets, each available here or not, and why.

#include <fmt/core.h>

#include "cli/common.h"
#include "core/json_io.h"
#include "targets/registry.h"

namespace accelopt::cli {

void RegisterTargets(CLI::App& app) {
  auto* cmd =
      app.add_subcommand("targets", "list the targets kernels can be built and measured on, and which run here");
  static bool json = false;
  static std::string evaluator;
  cmd->add_flag("--json", json, "print JSON: [{name, summary, available, reason, trusted, isolation}]");
  cmd->add_option("--evaluator", evaluator, "the external target's evaluator program and arguments");
  cmd->callback([] {
    Json out = Json::array();
    targets::TargetSettings settings;
    if (!evaluator.empty()) settings.options["evaluator"] = evaluator;
    for (const targets::TargetKind& kind : targets::RegisteredTargets()) {
      const std::string why = targets::WhyUnavailable(kind, settings);
      targets::TargetKind::Isolation isolation;
      if (kind.isolation) isolation = kind.isolation();
      if (isolation.how.empty()) isolation.how = "not stated";
      out.push_back({{"name", kind.name},
                     {"summary", kind.summary},
                     {"available", why.empty()},
                     {"reason", why},
                     {"trusted", isolation.trusted},
                     {"isolation", isolation.how}});
      if (!json) {
        fmt::print("{:<10} {:<14} {}\n", kind.name, why.empty() ? "available" : "unavailable",
                   why.empty() ? kind.summary : kind.summary + " (" + why + ")");
        fmt::print("{:<10} {:<14} {}\n", "", isolation.trusted ? "trusted" : "NOT TRUSTED",
                   "against a kernel that attacks the machine: " + isolation.how);
      }
    }
    if (json) fmt::print("{}\n", DumpJson(out, 2));
  });
}

}  // namespace accelopt::cli
