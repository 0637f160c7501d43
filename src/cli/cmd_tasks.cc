// accelopt tasks: list the suite with shapes, bound and T on this machine.

#include <fmt/core.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "cli/common.h"
#include "eval/machine.h"
#include "suite/roofline.h"

namespace accelopt::cli {
namespace {

// A code task as `tasks --json` lists it: what it changes and what it measures.
Json CodeTaskJson(const suite::Task& task) {
  const suite::CodeSpec& c = task.code;
  return {{"task", task.name},
          {"kind", "code"},
          {"description", task.description},
          {"code_base", c.path.empty() ? c.repo + "@" + c.commit : c.path},
          {"files", c.files},
          {"language", c.language},
          {"metric", c.metric.name},
          {"unit", c.metric.unit},
          {"direction", c.metric.higher_is_better ? "higher" : "lower"}};
}

}  // namespace

void RegisterTasks(CLI::App& app) {
  auto* cmd = app.add_subcommand("tasks", "list the task suite: shapes, bound and roofline time T on this machine");
  static CommonFlags flags;
  static EvalFlags eval_flags;
  static std::string shape;
  static bool json = false;
  AddSuiteFlag(*cmd, flags);
  cmd->add_option("--shape", shape, kShapeHelp);
  cmd->add_flag("--json", json, "print JSON");
  cmd->add_option("--target", eval_flags.target, "the target whose tasks and peaks to show (see `accelopt targets`)");
  cmd->add_option("--evaluator", eval_flags.evaluator, "the external target's evaluator program and arguments");
  cmd->callback([] {
    const suite::Suite suite = LoadSuiteOrExit(flags.suite_dir);
    const std::vector<suite::Task>& tasks = suite.tasks;
    targets::TargetSettings settings = TargetSettingsFor(eval_flags);
    settings.calibrate_if_missing = false;  // listing measures nothing
    auto target = MakeTargetOrExit(settings, TargetNameFor(eval_flags, {}));
    const suite::PeakRates rates = target->Rates();
    const bool scored = rates.bandwidth_gbs > 0 && rates.peak_mm_gflops > 0 && rates.peak_vec_gflops > 0;
    if (!scored && !json) fmt::print(stderr, "(not calibrated: T is shown once `accelopt calibrate` has run)\n");
    Json out = Json::array();
    std::vector<std::string> too_large, unsupported;
    const bool any_kernel = std::any_of(tasks.begin(), tasks.end(),
                                        [](const suite::Task& t) { return t.kind == suite::TaskKind::kKernel; });
    // The shapes shown: the one asked for, else each task's default on this target.
    std::vector<std::string> shown;
    for (const auto& task : tasks)
      if (task.kind == suite::TaskKind::kKernel && target->Supports(task))
        if (const std::string at = ShapeFor(shape, *target, task);
            std::find(shown.begin(), shown.end(), at) == shown.end())
          shown.push_back(at);
    if (!json && any_kernel)
      fmt::print("{:<20} {:<7} {:>11}  {:<32} {}\n", "task", "bound", "T",
                 fmt::format("shape ({})", fmt::join(shown.empty() ? std::vector<std::string>{shape.empty() ? "bench" : shape} : shown, "/")),
                 "computes");
    std::vector<const suite::Task*> code_tasks;
    for (const auto& task : tasks) {
      if (task.kind == suite::TaskKind::kCode) {
        code_tasks.push_back(&task);
        if (json) out.push_back(CodeTaskJson(task));
        continue;
      }
      if (!target->Supports(task)) {
        unsupported.push_back(task.name);
        continue;
      }
      const std::string at = ShapeFor(shape, *target, task);
      auto bound = suite::Bind(task, at);
      if (!bound) throw Exit{kExitError, bound.error().message};
      auto counts = suite::CountRoofline(*bound);
      if (!counts) throw Exit{kExitError, counts.error().message};
      suite::RooflineTime t{0, "-"};
      if (scored) t = suite::ComputeRooflineTime(*counts, target->RatesFor(task));
      // Dimensions are integers (the task loader checks it).
      Json params = Json::object();
      for (const auto& [k, v] : bound->params) params[k] = static_cast<long>(v);
      // What this machine's memory must hold for the target (a device's memory is its own).
      const double needed = target->MemoryNeededBytes(*bound);
      const double available = needed > 0 ? eval::AvailableMemoryBytes() : 0;
      const bool fits = available <= 0 || needed <= available;
      if (!fits)
        too_large.push_back(fmt::format("{} ({}): needs at least {:.1f} GB, this machine has {:.1f} GB available",
                                        task.name, at, needed / 1e9, available / 1e9));
      if (json) {
        out.push_back({{"task", task.name},
                       {"description", task.description},
                       {"shape", params},
                       {"shape_name", at},
                       {"memory_needed_bytes", needed},
                       {"fits_in_memory", fits},
                       {"flops_mm", counts->flops_mm},
                       {"flops_vec", counts->flops_vec},
                       {"min_bytes", counts->min_bytes},
                       {"bound", t.bound},
                       {"roofline_seconds", t.seconds},
                       {"provenance", task.provenance},
                       {"fib_definition", task.fib_definition.empty() ? Json(nullptr) : Json(task.fib_definition)}});
      } else {
        fmt::print("{:<20} {:<7} {:>11}  {:<32} {}\n", task.name + (fits ? "" : " (!)"), t.bound,
                   FormatSeconds(t.seconds), suite::ShapeText(bound->params), task.description);
      }
    }
    // A folder that does not load is listed with its error; the others stay usable.
    for (const auto& b : suite.broken)
      if (json) out.push_back({{"task", b.name}, {"error", b.error}});
    if (json) fmt::print("{}\n", DumpJson(out, 2));
    if (!json && !code_tasks.empty()) {
      fmt::print("{}code tasks (run on the code target; no percentage of peak):\n", any_kernel ? "\n" : "");
      for (const suite::Task* task : code_tasks)
        fmt::print("{:<20} {:<40} {}\n", task->name,
                   task->code.metric.name + (task->code.metric.higher_is_better ? " (higher is better)" : ""),
                   task->description);
    }
    if (!json && !unsupported.empty())
      fmt::print("\n({} task(s) have no reference and baseline{} for the {} target: {})\n", unsupported.size(),
                 target->Describe().file_extension.empty() ? "" : " " + target->Describe().file_extension,
                 target->name(), fmt::format("{}", fmt::join(unsupported, ", ")));
    if (!json && !suite.broken.empty()) {
      fmt::print("\n{} task folder(s) do not load (the other tasks are usable):\n", suite.broken.size());
      for (const auto& b : suite.broken) fmt::print("  {}: {}\n", b.name, b.error);
    }
    if (!json && !too_large.empty()) {
      fmt::print("\n(!) too large for this machine's memory; an evaluation would be refused:\n");
      for (const auto& line : too_large) fmt::print("  {}\n", line);
    }
  });
}

}  // namespace accelopt::cli
