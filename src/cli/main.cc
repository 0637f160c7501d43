// accelopt: LLM agents optimizing compute kernels, scored as a percentage of
// the hardware's measured peak.

#include <fmt/core.h>

#include "cli/common.h"
#include "cli/interrupt.h"

int main(int argc, char** argv) {
  CLI::App app{"accelopt: build, check, time and score compute kernels against this machine's measured peak"};
  app.require_subcommand(1);
  accelopt::cli::RegisterTasks(app);
  accelopt::cli::RegisterEval(app);
  accelopt::cli::RegisterCompare(app);
  accelopt::cli::RegisterCalibrate(app);
  accelopt::cli::RegisterTargets(app);
  accelopt::cli::RegisterBench(app);
  accelopt::cli::RegisterLlm(app);
  accelopt::cli::RegisterOptimize(app);
  accelopt::cli::RegisterStoreCommands(app);
  accelopt::cli::RegisterExport(app);
  accelopt::cli::RegisterWorker(app);
  accelopt::cli::RegisterCandidateCommands(app);
  accelopt::cli::RegisterServe(app);
  accelopt::cli::RegisterReport(app);
  // Ctrl-C or a SIGTERM removes the scratch folders and lets commands record that they were stopped.
  accelopt::cli::InstallInterruptHandler();
  app.set_version_flag("--version", std::string("accelopt ") + ACCELOPT_VERSION);
  try {
    // An unknown command is named as such, with the commands there are.
    if (argc > 1 && argv[1][0] != '-') {
      bool known = false;
      std::string commands;
      for (const CLI::App* sub : app.get_subcommands({})) {
        known = known || sub->get_name() == argv[1];
        commands += (commands.empty() ? "" : ", ") + sub->get_name();
      }
      if (!known) {
        fmt::print(stderr, "accelopt: unknown command '{}' (commands: {}; --help for more)\n", argv[1], commands);
        return accelopt::cli::kExitUsage;
      }
    }
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // Help and --version succeed; every usage error exits with the one code the help names.
    const int code = app.exit(e);
    return code == 0 ? 0 : accelopt::cli::kExitUsage;
  } catch (const accelopt::cli::Exit& e) {
    if (!e.message.empty()) fmt::print(stderr, "accelopt: {}\n", e.message);
    return e.code;
  }
  return 0;
}
