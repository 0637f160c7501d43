// accelopt: LLM agents optimizing compute kernels, scored as a percentage of
// the hardware's measured peak.

#include <fmt/core.h>

#include "cli/common.h"

int main(int argc, char** argv) {
  CLI::App app{"accelopt: build, check, time and score compute kernels against this machine's measured peak"};
  app.require_subcommand(1);
  accelopt::cli::RegisterTasks(app);
  accelopt::cli::RegisterEval(app);
  accelopt::cli::RegisterCompare(app);
  accelopt::cli::RegisterCalibrate(app);
  accelopt::cli::RegisterBench(app);
  accelopt::cli::RegisterLlm(app);
  accelopt::cli::RegisterOptimize(app);
  accelopt::cli::RegisterStoreCommands(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  } catch (const accelopt::cli::Exit& e) {
    if (!e.message.empty()) fmt::print(stderr, "accelopt: {}\n", e.message);
    return e.code;
  }
  return 0;
}
