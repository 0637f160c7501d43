// accelopt compare: time two kernels of one task side by side, interleaved,
// and say how much faster the second is, with a confidence interval.

#include <fmt/core.h>

#include <filesystem>

#include "cli/common.h"
#include "cli/print_profile.h"
#include "core/json_io.h"
#include "core/profile.h"

namespace accelopt::cli {

namespace {

// The task's own vendor anchor is linked with OpenBLAS, as `bench` builds it;
// any other kernel gets no library.
std::vector<std::string> LibrariesFor(const suite::Task& task, const std::string& path) {
  std::error_code ec;
  const bool vendor = std::filesystem::equivalent(path, task.dir + "/vendor.cpp", ec);
  return vendor ? std::vector<std::string>{"openblas"} : std::vector<std::string>{};
}

}  // namespace

void RegisterCompare(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "compare",
      "time kernels A and B of one task interleaved (A, B, B, A, ... in one window, each call prepared alike) and "
      "print the speedup of B over A with its confidence interval (and that interval's coverage)\n"
      "exit code: 0 both ok, 3 either kernel's status is not ok, 1 error, 2 usage");
  static CommonFlags flags;
  static std::string task_name, path_a, path_b, shape;
  static bool json = false, verbose = false;
  static EvalFlags eval_flags;
  cmd->add_option("TASK", task_name, "task name (see `accelopt tasks`)")->required();
  cmd->add_option("A", path_a, "the first kernel (the one compared against)")->required();
  cmd->add_option("B", path_b, "the second kernel")->required();
  cmd->add_option("--shape", shape, kShapeHelp);
  cmd->add_flag("--json", json,
                "print the speedup, its interval (ci_low, ci_high, coverage) and pairs, the load it was measured under "
                "and both profiles as JSON");
  cmd->add_flag("-v,--verbose", verbose, "show both profiles in full");
  AddEvalFlags(*cmd, eval_flags);
  AddSuiteFlag(*cmd, flags);
  cmd->callback([] {
    auto tasks = LoadSuiteOrExit(flags.suite_dir);
    const suite::Task* task = SelectTasks(tasks, {task_name}).front();
    auto source_a = ReadFile(path_a);
    if (!source_a) throw Exit{kExitError, source_a.error().message};
    auto source_b = ReadFile(path_b);
    if (!source_b) throw Exit{kExitError, source_b.error().message};
    targets::TargetSettings settings = TargetSettingsFor(eval_flags);
    settings.device_lock = false;  // held by the evaluator, as for every target
    auto target = MakeTargetOrExit(settings, TargetNameFor(eval_flags, {task}));
    const std::string at = ShapeFor(shape, *target, *task);
    auto outcome = MeasureHere(*target, *task, at, service::JobKind::kCompare,
                               {{path_a, *source_a, "", LibrariesFor(*task, path_a)},
                                {path_b, *source_b, "", LibrariesFor(*task, path_b)}});
    if (!outcome) throw Exit{kExitError, outcome.error().message};
    targets::PairedResult paired{outcome->profiles.at(0), outcome->profiles.at(1), outcome->speedup};
    const targets::PairedResult* result = &paired;
    const bool both_ok = result->speedup.has_value();
    if (json) {
      Json j = {{"task", task->name}, {"shape", at}, {"a", result->a.ToJson()}, {"b", result->b.ToJson()}};
      if (both_ok) {
        j.update(ToJson(*result->speedup));
      } else {
        j["speedup"] = nullptr;
      }
      fmt::print("{}\n", DumpJson(j, 2));
    } else {
      for (const auto& [label, path, profile] :
           {std::tuple{"A", path_a, &result->a}, std::tuple{"B", path_b, &result->b}}) {
        if (verbose) {
          fmt::print("== {}: {}\n", label, path);
          PrintProfile(*profile, true);
          continue;
        }
        std::string line = fmt::format("{}  {:<40} {}", label, path, VerdictName(profile->status));
        if (profile->latency)
          line +=
              fmt::format("  median {}  {} {}  spread {:.2f}%", MeasureText(*profile), profile->metric ? "best" : "min",
                          CostText(*profile, profile->latency->min_s), 100 * profile->latency->spread);
        if (profile->status != Verdict::kOk) line += ": " + profile->message;
        fmt::print("{}\n", line);
      }
      if (both_ok)
        fmt::print("speedup of B over A: {}, interleaved\n", PairedSpeedupText(*result->speedup));
      else
        fmt::print("no speedup: both kernels must be ok to be compared\n");
    }
    if (!both_ok) throw Exit{kExitVerdict, ""};
  });
}

}  // namespace accelopt::cli
