// accelopt eval: build, check, time and score one kernel.

#include <fmt/core.h>

#include "cli/common.h"
#include "cli/print_profile.h"
#include "core/json_io.h"

namespace accelopt::cli {

void RegisterEval(CLI::App& app) {
  auto* cmd =
      app.add_subcommand("eval",
                         "evaluate one kernel: compile, run isolated, check on fresh random inputs, time, score\n"
                         "exit code: 0 ok, 3 the kernel's status is not ok, 1 error, 2 usage");
  static CommonFlags flags;
  static std::string task_name, kernel_path, shape;
  static std::vector<std::string> libraries;
  static bool json = false, verbose = false, keep = false;
  static EvalFlags eval_flags;
  cmd->add_option("TASK", task_name, "task name (see `accelopt tasks`)")->required();
  cmd->add_option("KERNEL", kernel_path,
                  "kernel source file (C++ defining extern \"C\" void kernel(...)), or a code task's files "
                  "(FILE: blocks); default: the task's baseline");
  cmd->add_option("--shape", shape, kShapeHelp);
  cmd->add_flag("--json", json, "print the profile as JSON");
  cmd->add_flag("-v,--verbose", verbose, "show compile log, vectorization report and run log");
  AddEvalFlags(*cmd, eval_flags);
  cmd->add_option("--lib", libraries, "link this library too (e.g. openblas, for vendor anchors)");
  cmd->add_flag("--keep", keep,
                "keep the evaluation folder (the builds for each shape, the reference's among them; its path is "
                "printed) for debugging");
  AddSuiteFlag(*cmd, flags);
  cmd->callback([] {
    auto tasks = LoadSuiteOrExit(flags.suite_dir);
    const suite::Task* task = SelectTasks(tasks, {task_name}).front();
    targets::TargetSettings settings = TargetSettingsFor(eval_flags);
    settings.keep_work = keep;
    settings.device_lock = false;  // held by the evaluator, as for every target
    // A kernel file that cannot be read is said before the target is made (which may calibrate first).
    Result<std::string> source = kernel_path.empty() ? Result<std::string>(std::string()) : ReadFile(kernel_path);
    if (!source) throw Exit{kExitError, source.error().message};
    auto target = MakeTargetOrExit(settings, TargetNameFor(eval_flags, {task}));
    if (kernel_path.empty()) source = target->Baseline(*task);
    if (!source) throw Exit{kExitError, source.error().message};
    if (kernel_path.empty()) kernel_path = "baseline";
    auto outcome = MeasureHere(*target, *task, ShapeFor(shape, *target, *task), service::JobKind::kEvaluate,
                               {{kernel_path, *source, "", libraries}});
    if (!outcome) throw Exit{kExitError, outcome.error().message};
    const Profile& profile = outcome->profiles.at(0);
    if (json)
      fmt::print("{}\n", DumpJson(profile.ToJson(), 2));
    else
      PrintProfile(profile, verbose);
    if (profile.status != Verdict::kOk) throw Exit{kExitVerdict, ""};
  });
}

}  // namespace accelopt::cli
