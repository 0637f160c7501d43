#include "cli/common.h"

#include <algorithm>
#include <filesystem>

#include <fmt/core.h>
#include <sched.h>

#include "core/paths.h"
#include "service/evaluator.h"

namespace accelopt::cli {

std::unique_ptr<store::Store> OpenStoreOrExit(const std::string& location, bool create) {
  auto db = store::OpenStore(location, create);
  if (!db) throw Exit{kExitError, db.error().message};
  return std::move(*db);
}

store::RunInfo RunOrExit(store::Store& store, int64_t run, const std::string& db) {
  auto info = store.GetRun(run);
  if (!info) throw Exit{kExitError, info.error().message};
  if (!*info) throw Exit{kExitError, fmt::format("no run {} in {}", run, store::RedactUri(db))};
  return std::move(**info);
}

void AddSuiteFlag(CLI::App& app, CommonFlags& flags) {
  app.add_option("--suite", flags.suite_dir, "task suite folder (default: $ACCELOPT_SUITE, else the suite of an unpacked dist, else ./suite)");
}

suite::Suite LoadSuiteOrExit(const std::string& suite_dir) {
  const std::string dir = suite_dir.empty() ? DefaultSuiteDir() : suite_dir;
  auto suite = suite::ScanSuite(dir);
  if (!suite) throw Exit{kExitError, suite.error().message};
  if (suite->tasks.empty() && suite->broken.empty()) throw Exit{kExitError, "no tasks found in " + dir};
  return std::move(*suite);
}

std::vector<const suite::Task*> SelectTasks(const suite::Suite& suite, const std::vector<std::string>& names) {
  const std::vector<suite::Task>& tasks = suite.tasks;
  std::vector<const suite::Task*> out;
  if (names.empty()) {
    for (const auto& b : suite.broken) fmt::print(stderr, "task '{}' is left out: {}\n", b.name, b.error);
    if (tasks.empty()) throw Exit{kExitError, "no task of the suite loads (each is named above with its error)"};
    for (const auto& t : tasks) out.push_back(&t);
    return out;
  }
  for (const auto& name : names) {
    if (std::count(names.begin(), names.end(), name) > 1 &&
        std::any_of(out.begin(), out.end(), [&](const suite::Task* t) { return t->name == name; })) {
      fmt::print(stderr, "task '{}' is named more than once: taken once\n", name);
      continue;
    }
    if (const suite::BrokenTask* broken = suite.FindBroken(name))
      throw Exit{kExitError, "task '" + name + "' does not load: " + broken->error};
    const suite::Task* found = nullptr;
    for (const auto& t : tasks)
      if (t.name == name) found = &t;
    if (!found) {
      std::string known;
      for (const auto& t : tasks) known += (known.empty() ? "" : ", ") + t.name;
      throw Exit{kExitError, "unknown task '" + name + "' (known: " + known + ")"};
    }
    out.push_back(found);
  }
  return out;
}

targets::TargetSettings TargetSettingsFor(const EvalFlags& flags) {
  targets::TargetSettings settings;
  settings.seeds = flags.seeds;
  settings.timeout = flags.timeout;
  // The flags of one target or another, passed on by name: each target takes its own.
  if (!flags.cpus.empty()) settings.options["cpus"] = flags.cpus;
  if (flags.bind_openmp) settings.options["bind_openmp"] = true;
  if (!flags.evaluator.empty()) settings.options["evaluator"] = flags.evaluator;
  settings.data_dir = DataDir();
  settings.cache_dir = CacheDir();
  settings.say = [](const std::string& text) { fmt::print(stderr, "{}\n", text); };
  return settings;
}

std::string TargetNameFor(const EvalFlags& flags, const std::vector<const suite::Task*>& tasks) {
  if (!flags.target.empty()) return flags.target;
  const suite::Task *code = nullptr, *kernel = nullptr;
  for (const suite::Task* t : tasks) (t->kind == suite::TaskKind::kCode ? code : kernel) = t;
  if (code && kernel)
    throw Exit{kExitError, "'" + code->name + "' is a code task and '" + kernel->name +
                               "' a kernel: they run on different targets (code and cpu), so optimize them in "
                               "separate runs"};
  return code ? "code" : targets::kDefaultTarget;
}

void PrintDeviceWait(const std::string& device, const std::string& holder) {
  fmt::print(stderr, "waiting for the {} device, held by {}\n", device, holder);
}

std::unique_ptr<service::Evaluator> EvaluatorHere(targets::Target& target, const std::string& purpose) {
  service::LocalEvaluatorOptions options;
  options.target = &target;
  options.purpose = purpose;
  options.on_device_wait = PrintDeviceWait;
  return service::MakeLocalEvaluator(std::move(options));
}

Result<service::EvalJob> JobHere(const targets::Target& target, const suite::Task& task, const std::string& shape,
                                 service::JobKind kind, std::vector<service::JobSource> sources) {
  auto spec = service::TaskSpecOf(task, shape);
  if (!spec) return spec.error();
  service::EvalJob job;
  job.kind = kind;
  job.task = std::move(*spec);
  job.target = target.name();
  job.machine_class = target.Machine();
  job.sources = std::move(sources);
  return job;
}

Result<service::EvalOutcome> MeasureHere(targets::Target& target, const suite::Task& task, const std::string& shape,
                                         service::JobKind kind, std::vector<service::JobSource> sources) {
  auto job = JobHere(target, task, shape, kind, std::move(sources));
  if (!job) return job.error();
  auto evaluator = EvaluatorHere(target, "accelopt " + std::string(service::JobKindName(kind)));
  return evaluator->Submit({std::move(*job)}).front().get();
}

std::unique_ptr<targets::Target> MakeTargetOrExit(const targets::TargetSettings& settings, const std::string& name) {
  auto target = targets::MakeTarget(name, settings);
  if (!target) throw Exit{kExitError, target.error().message};
  return std::move(*target);
}

std::string ShapeFor(const std::string& asked, const targets::Target& target, const suite::Task& task) {
  return asked.empty() ? target.DefaultShape(task) : asked;
}

std::string ShapeFor(const std::string& asked, const targets::Target& target,
                     const std::vector<const suite::Task*>& tasks) {
  if (!asked.empty() || tasks.empty()) return asked.empty() ? "bench" : asked;
  const std::string shape = target.DefaultShape(*tasks.front());
  for (const suite::Task* task : tasks)
    if (target.DefaultShape(*task) != shape)
      throw Exit{kExitError, fmt::format("the {} target measures task '{}' at shape '{}' and task '{}' at '{}': "
                                         "name the shape of the run (--shape)",
                                         target.name(), tasks.front()->name, shape, task->name,
                                         target.DefaultShape(*task))};
  return shape;
}

void AddEvalFlags(CLI::App& app, EvalFlags& flags) {
  app.add_option("--target", flags.target, "where kernels are built and measured (see `accelopt targets`)")
      ->check(CLI::Validator(
          [](const std::string& value) -> std::string {
            std::string known;
            for (const auto& kind : targets::RegisteredTargets()) {
              if (kind.name == value) return "";
              known += (known.empty() ? "" : ", ") + kind.name;
            }
            return "unknown target '" + value + "' (known: " + known + "; see `accelopt targets`)";
          },
          "NAME", "target name"));
  app.add_option("--evaluator", flags.evaluator,
                 "the external target's evaluator: program and arguments, split at spaces (default: "
                 "$ACCELOPT_EVALUATOR; see docs/external-protocol.md)");
  app.add_option("--seeds", flags.seeds, "correctness runs, each with fresh random inputs")->check(CLI::Range(1, 100));
  app.add_option("--timeout", flags.timeout, "wall-clock limit per child process, seconds")->check(CLI::PositiveNumber);
  app.add_option("--cpus", flags.cpus, "cores the kernel runs on, e.g. --cpus 0,1 (default: all allowed)")
      ->delimiter(',')
      ->check(CLI::Validator(
          [](const std::string& value) -> std::string {
            return !value.empty() && value.find_first_not_of("0123456789") == std::string::npos
                       ? ""
                       : "a core is a number from 0 up, got '" + value + "'";
          },
          "CORE", "core number"));
  // Checked once the command line is parsed, before the command does anything.
  app.parse_complete_callback([&flags] {
    for (size_t i = 0; i < flags.cpus.size(); ++i)
      for (size_t j = 0; j < i; ++j)
        if (flags.cpus[i] == flags.cpus[j])
          throw CLI::ValidationError("--cpus", fmt::format("core {} is named twice", flags.cpus[i]));
  });
  app.add_flag("--bind-openmp", flags.bind_openmp,
               "bind each OpenMP thread to one core (also pins the main thread, which confines OpenBLAS and "
               "std::thread workers to one core)");
}

std::string SlurmLogDir(const std::string& db) {
  // A store on a server has no folder: the one the command runs in stands for it.
  if (store::IsPostgresUri(db)) return (std::filesystem::current_path() / "slurm-logs").string();
  return (std::filesystem::absolute(db).parent_path() / "slurm-logs").string();
}

std::string SlurmRecordPath(const std::string& db, int64_t run_id) {
  return SlurmLogDir(db) + "/run" + std::to_string(run_id) + "-slurm.json";
}

}  // namespace accelopt::cli
