// accelopt bench: score every task's baseline (and vendor anchor) on this machine.

#include <fmt/core.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <filesystem>

#include "cli/common.h"
#include "core/json_io.h"

namespace accelopt::cli {
namespace {

struct Row {
  std::string task, kernel;
  Profile profile;
};

double GeometricMean(const std::vector<double>& values) {
  if (values.empty()) return 0;
  double log_sum = 0;
  for (double v : values) log_sum += std::log(v);
  return std::exp(log_sum / static_cast<double>(values.size()));
}

std::string PercentText(const Profile& p) {
  return p.status == Verdict::kOk && p.percent_of_peak > 0 ? fmt::format("{:.2f}%", p.percent_of_peak)
                                                           : VerdictName(p.status);
}

// The geometric mean of % of peak over the scored (ok) rows of one kernel kind.
struct Summary {
  std::string kernel;  // "baseline", "openblas"
  size_t tasks = 0;
  double percent_of_peak = 0;
};

std::vector<Summary> Summarize(const std::vector<Row>& rows) {
  std::vector<Summary> out;
  for (const char* kernel : {"baseline", "openblas"}) {
    std::vector<double> scored;
    bool present = false;
    for (const auto& r : rows)
      if (r.kernel == kernel) {
        present = true;
        if (r.profile.status == Verdict::kOk && r.profile.percent_of_peak > 0)
          scored.push_back(r.profile.percent_of_peak);
      }
    if (present) out.push_back({kernel, scored.size(), GeometricMean(scored)});
  }
  return out;
}

void PrintTable(const std::vector<Row>& rows, const std::string& shape) {
  fmt::print("\n{:<20} {:<9} {:<7} {:>11} {:>11} {:>8} {:>10}\n", "task", "kernel", "bound", "T", "latency", "spread",
             "% of peak");
  for (const auto& r : rows) {
    const auto& p = r.profile;
    fmt::print("{:<20} {:<9} {:<7} {:>11} {:>11} {:>7.2f}% {:>10}\n", r.task, r.kernel, p.bound.empty() ? "-" : p.bound,
               FormatSeconds(p.roofline_seconds), p.latency ? FormatSeconds(p.latency->median_s) : "-",
               p.latency ? 100 * p.latency->spread : 0.0, PercentText(p));
  }
  fmt::print("\n");
  for (const auto& m : Summarize(rows))
    fmt::print("geometric mean, {} ({} tasks scored, shape {}): {:.3f}% of peak\n",
               m.kernel == "baseline" ? "baselines" : "OpenBLAS vendor anchors", m.tasks, shape, m.percent_of_peak);
}

// One row per kernel, then one `geomean` row per kernel kind (its task column
// says so; percent_of_peak holds the mean, the other figures are empty).
void PrintCsv(const std::vector<Row>& rows) {
  fmt::print(
      "task,kernel,status,bound,roofline_seconds,median_seconds,spread,percent_of_peak,achieved_gbs,achieved_gflops\n");
  for (const auto& r : rows) {
    const auto& p = r.profile;
    fmt::print("{},{},{},{},{:.6g},{:.6g},{:.4f},{:.4f},{:.4f},{:.4f}\n", r.task, r.kernel, VerdictName(p.status),
               p.bound, p.roofline_seconds, p.latency ? p.latency->median_s : 0.0, p.latency ? p.latency->spread : 0.0,
               p.percent_of_peak, p.achieved_gbs, p.achieved_gflops);
  }
  for (const auto& m : Summarize(rows)) fmt::print("geomean,{},,,,,,{:.4f},,\n", m.kernel, m.percent_of_peak);
}

void PrintJson(const std::vector<Row>& rows, const std::string& shape) {
  Json kernels = Json::array(), means = Json::array();
  for (const auto& r : rows) kernels.push_back(Json{{"kernel", r.kernel}, {"profile", r.profile.ToJson()}});
  for (const auto& m : Summarize(rows))
    means.push_back({{"kernel", m.kernel}, {"tasks_scored", m.tasks}, {"percent_of_peak", m.percent_of_peak}});
  fmt::print("{}\n", DumpJson({{"shape", shape}, {"rows", kernels}, {"geometric_mean", means}}, 2));
}

}  // namespace

void RegisterBench(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "bench",
      "score each task's baseline (and OpenBLAS vendor anchor where the task has vendor.cpp); geometric mean last");
  static CommonFlags flags;
  static std::vector<std::string> names;
  static std::string shape;
  static bool json = false, csv = false, no_vendor = false;
  static EvalFlags eval_flags;
  cmd->add_option("TASK", names, "tasks to run (default: all)");
  cmd->add_option("--shape", shape, kShapeHelp);
  auto* json_flag = cmd->add_flag("--json", json, "print JSON: {shape, rows: [{kernel, profile}], geometric_mean}");
  cmd->add_flag("--csv", csv, "print CSV, geometric means last")->excludes(json_flag);
  cmd->add_flag("--no-vendor", no_vendor, "skip the OpenBLAS vendor anchors");
  AddSuiteFlag(*cmd, flags);
  AddEvalFlags(*cmd, eval_flags);
  cmd->callback([] {
    auto tasks = LoadSuiteOrExit(flags.suite_dir);
    auto selected = SelectTasks(tasks, names);
    targets::TargetSettings settings = TargetSettingsFor(eval_flags);
    settings.device_lock = false;  // held by the evaluator, as for every target
    auto target = MakeTargetOrExit(settings, TargetNameFor(eval_flags, {}));
    auto evaluator = EvaluatorHere(*target, "accelopt bench");
    std::vector<Row> rows;
    std::vector<std::string> shapes;  // those measured at, for the report: one, unless the target's defaults differ
    size_t index = 0;
    for (const suite::Task* task : selected) {
      ++index;
      const std::string extension = target->Describe().file_extension;
      if (!target->Supports(*task)) {
        fmt::print(stderr, "[{}/{}] {}: {}: skipped\n", index, selected.size(), task->name,
                   task->kind == suite::TaskKind::kCode
                       ? "a code task (`accelopt eval` measures it)"
                       : "no reference and baseline" + extension + " for the " + target->name() + " target");
        continue;
      }
      const std::string at = ShapeFor(shape, *target, *task);
      if (std::find(shapes.begin(), shapes.end(), at) == shapes.end()) shapes.push_back(at);
      std::vector<std::pair<std::string, targets::Candidate>> kernels;
      auto baseline = ReadFile(task->baseline_path(extension));
      if (!baseline) throw Exit{kExitError, baseline.error().message};
      kernels.push_back({"baseline", {*baseline, task->baseline_path(extension), {}}});
      // The vendor anchor, in the target's language: for the cpu, vendor.cpp on OpenBLAS.
      std::string vendor_path = task->dir + "/vendor" + extension;
      if (!no_vendor && std::filesystem::exists(vendor_path)) {
        auto vendor = ReadFile(vendor_path);
        if (!vendor) throw Exit{kExitError, vendor.error().message};
        const targets::TargetInfo info = target->Describe();
        kernels.push_back({info.vendor_label, {*vendor, vendor_path, info.vendor_libraries}});
      }
      // One batch per task: the baseline and the anchor, submitted together, share inputs and reference outputs.
      std::vector<service::EvalJob> jobs;
      for (auto& [kind, candidate] : kernels) {
        auto job = JobHere(*target, *task, at, service::JobKind::kEvaluate,
                           {{candidate.label, candidate.source, "", candidate.libraries}});
        if (!job) throw Exit{kExitError, job.error().message};
        jobs.push_back(std::move(*job));
      }
      auto futures = evaluator->Submit(std::move(jobs));
      for (size_t k = 0; k < futures.size(); ++k) {
        fmt::print(stderr, "[{}/{}] {} {} ...", index, selected.size(), task->name, kernels[k].first);
        std::fflush(stderr);
        auto outcome = futures[k].get();
        if (!outcome) throw Exit{kExitError, task->name + ": " + outcome.error().message};
        const Profile& result = outcome->profiles.at(0);
        fmt::print(stderr, " {} ({})\n", PercentText(result), FormatSeconds(result.wall_seconds));
        rows.push_back({task->name, kernels[k].first, result});
      }
    }
    const std::string measured_at =
        shapes.empty() ? (shape.empty() ? "bench" : shape) : fmt::format("{}", fmt::join(shapes, "/"));
    if (json) {
      PrintJson(rows, measured_at);
    } else if (csv) {
      PrintCsv(rows);
    } else {
      PrintTable(rows, measured_at);
    }
  });
}

}  // namespace accelopt::cli
