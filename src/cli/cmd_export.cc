// accelopt export fib: a run's best kernels as FlashInfer-Bench solutions and traces.

#include <fmt/core.h>

#include "cli/common.h"
#include "run/fib_export.h"
#include "store/store.h"

namespace accelopt::cli {
namespace {

void RegisterExportFib(CLI::App& export_cmd) {
  auto* cmd = export_cmd.add_subcommand(
      "fib",
      "write each task's best kernel and its baseline as FlashInfer-Bench Solution JSON, their evaluations as "
      "Trace JSON lines (docs/fib-export.md)");
  static std::string db = "accelopt.db", dir, suite_dir, author = "accelopt";
  static int64_t run = 0;
  cmd->add_option("RUN", run, "run id (see `accelopt runs`)")->required();
  cmd->add_option("DIR", dir, "the dataset folder to write into (created when missing)")->required();
  cmd->add_option("--db", db, kDbHelp);
  cmd->add_option("--suite", suite_dir, "the task suite the run's tasks come from (default: the one it recorded)");
  cmd->add_option("--author", author, "the solutions' author, and the folder they are filed under");
  cmd->callback([] {
    auto store = OpenStoreOrExit(db, /*create=*/false);
    const store::RunInfo info = RunOrExit(*store, run, db);
    std::string suite_path = suite_dir;
    if (suite_path.empty() && info.config.is_object()) suite_path = info.config.value("suite", "");
    suite::Suite suite;
    try {
      suite = LoadSuiteOrExit(suite_path);
    } catch (const Exit& e) {
      if (!suite_dir.empty() || suite_path.empty()) throw;
      throw Exit{e.code, e.message + fmt::format(" (the suite run {} recorded; name it with --suite)", run)};
    }
    for (const auto& b : suite.broken) fmt::print(stderr, "task '{}' does not load: {}\n", b.name, b.error);
    const std::vector<suite::Task>& tasks = suite.tasks;

    run::FibExportOptions export_options{run, dir, author, ACCELOPT_VERSION};
    auto report = run::ExportFib(*store, tasks, export_options);
    if (!report) throw Exit{kExitError, report.error().message};
    for (const auto& skipped : report->skipped) fmt::print(stderr, "skipped {}\n", skipped);
    for (const auto& t : report->tasks) {
      fmt::print("{}: definition {}, baseline candidate {}, best candidate {} ({:.2f}x)\n", t.task, t.definition,
                 t.baseline_id, t.best_id, t.speedup);
      if (t.definition_is_task_name)
        fmt::print(
            "  (task {} names no fib_definition: filed under its own name, which FlashInfer-Bench holds no "
            "definition for)\n",
            t.task);
      for (const auto& file : t.files) fmt::print("  {}/{}\n", dir, file);
    }
  });
}

}  // namespace

void RegisterExport(CLI::App& app) {
  auto* cmd = app.add_subcommand("export", "write a run's results in another tool's format");
  cmd->require_subcommand(1);
  RegisterExportFib(*cmd);
}

}  // namespace accelopt::cli
