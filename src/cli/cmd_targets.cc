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
  cmd->add_flag("--json", json, "print JSON: [{name, summary, available, reason}]");
  cmd->callback([] {
    Json out = Json::array();
    for (const targets::TargetKind& kind : targets::RegisteredTargets()) {
      const std::string why = kind.unavailable();
      out.push_back({{"name", kind.name}, {"summary", kind.summary}, {"available", why.empty()}, {"reason", why}});
      if (!json)
        fmt::print("{:<10} {:<14} {}\n", kind.name, why.empty() ? "available" : "unavailable",
                   why.empty() ? kind.summary : kind.summary + " (" + why + ")");
    }
    if (json) fmt::print("{}\n", DumpJson(out, 2));
  });
}

}  // namespace accelopt::cli
