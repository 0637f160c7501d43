// accelopt optimize / resume: the self-improving loop over one or more tasks.

#include <fmt/core.h>
#include <fmt/ranges.h>

#include <signal.h>

#include <atomic>
#include <cmath>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <optional>

#include "cli/common.h"
#include "cli/interrupt.h"
#include "cli/llm_setup.h"
#include "core/paths.h"
#include "run/estimate.h"
#include "run/optimize.h"
#include "run/task_definitions.h"
#include "service/eval_job.h"
#include "service/queue_evaluator.h"
#include "service/slurm_workers.h"
#include "service/worker_processes.h"

namespace accelopt::cli {
namespace {

constexpr const char* kDemoTasks[] = {"silu", "matmul", "rmsnorm_matmul"};

// The run's settings, as the store keeps them, and what only this command line has.
struct OptimizeFlags : run::RunConfig {
  std::string db = "accelopt.db";
  LlmFlags llm;        // recorded as llm_config and model
  CommonFlags common;  // --suite; recorded as suite_dir
  std::string slurm_program;  // --slurm-program; "" = this binary
};

// The run's configuration as the store keeps it.
run::RunConfig ConfigOf(const OptimizeFlags& f) {
  run::RunConfig c = f;
  c.suite_dir = f.common.suite_dir;
  c.llm_config = ConfigPathFor(f.llm);
  c.model = f.llm.override_;
  c.queue.location = service::RedactUri(f.queue.location);  // never a password in the store
  return c;
}

// The flags a recorded configuration stands for.
OptimizeFlags FlagsOf(const run::RunConfig& c) {
  OptimizeFlags f;
  static_cast<run::RunConfig&>(f) = c;
  f.common.suite_dir = c.suite_dir;
  f.llm = {c.llm_config, c.model};
  return f;
}

void AddSearchFlags(CLI::App& cmd, OptimizeFlags& f) {
  auto& s = f.search;
  cmd.add_option("--iterations,-I", s.iterations, "search iterations")->check(CLI::PositiveNumber);
  cmd.add_option("--plans,-N", s.plans, "plans per beam kernel per iteration")->check(CLI::PositiveNumber);
  cmd.add_option("--beam,-B", s.beam, "beam width")->check(CLI::PositiveNumber);
  cmd.add_option("--samples,-K", s.samples, "executor samples per plan")->check(CLI::PositiveNumber);
  cmd.add_option("--top-k", s.top_k, "lesson pairs summarized per iteration")->check(CLI::NonNegativeNumber);
  cmd.add_option("--memory-capacity", s.memory_capacity, "lessons given to a planner, at most (ExpN)")
      ->check(CLI::PositiveNumber);
  cmd.add_option("--lesson-bytes", s.lesson_bytes, "size of the lessons block in a planner's prompt, at most")
      ->check(CLI::PositiveNumber);
  cmd.add_option("--tune-budget", s.tune_budget,
                 "variants of a kernel's declared tunable constants (// accelopt:tune NAME v1 v2 ...) the engine "
                 "builds and times itself; 0 turns the sweep off")
      ->check(CLI::NonNegativeNumber);
  static std::string proposals = search::ProposalModeName(s.proposals);
  cmd.add_option("--proposals", proposals,
                 "how the N plans for a kernel are asked for: sequential (one call each, told the titles before "
                 "it) or one-call (N distinct plans from one call)")
      ->check(CLI::IsMember({"sequential", "one-call"}))
      ->each([&s](const std::string& name) { s.proposals = *search::ProposalModeFromName(name); });
  cmd.add_option("--max-threshold", s.max_threshold, "speedup above which a pair becomes a lesson");
  cmd.add_option("--min-threshold", s.min_threshold, "a pair slower than 1/this becomes a negative lesson");
  cmd.add_option("--fix-rounds,-R", s.fix_rounds, "fixer rounds for a failing candidate (0 disables)")
      ->check(CLI::NonNegativeNumber);
  cmd.add_option("--llm-parallelism", s.llm_parallelism, "agent calls in flight at once")->check(CLI::PositiveNumber);
  cmd.add_option("--memory", f.memory, "lessons to start from and add to: fresh, shared, or a name");
  cmd.add_option("--db", f.db, kDbHelp);
  cmd.add_option("--shape", f.shape, kShapeHelp);
  cmd.add_flag("--queue", f.queue.enabled,
               "evaluate through the store's job queue, served by `accelopt worker` processes (started elsewhere, "
               "or here with --workers)");
  cmd.add_option("--workers", f.queue.workers,
                 "start this many `accelopt worker` processes on this machine and evaluate through the queue")
      ->check(CLI::NonNegativeNumber);
  cmd.add_option("--queue-db", f.queue.location,
                 "where the queue lives (implies --queue): a PostgreSQL database shared by workers on many machines "
                 "(postgresql://user@host:port/db; give the password by $PGPASSWORD or ~/.pgpass: the run records "
                 "the URI without it); default: the store's SQLite file");
  cmd.add_option("--lease", f.queue.lease,
                 "with --workers or --slurm: seconds a worker's claim holds without a heartbeat (a job whose worker "
                 "died runs again this long after)")
      ->check(CLI::PositiveNumber);
  auto& slurm = f.queue.slurm;
  auto* on_slurm = cmd.add_option(
      "--slurm", slurm.partition,
      "submit `accelopt worker` processes to this Slurm partition with sbatch, one per device, as the queue needs "
      "them (implies --queue); cancelled with scancel when the run ends");
  cmd.add_option("--slurm-gres", slurm.gres, "with --slurm: the generic resources of each worker's job (gpu:1)")
      ->needs(on_slurm);
  cmd.add_option("--slurm-time", slurm.time_limit, "with --slurm: each worker job's time limit (sbatch --time)")
      ->needs(on_slurm);
  cmd.add_option("--slurm-account", slurm.account, "with --slurm: the account the jobs are charged to")
      ->needs(on_slurm);
  cmd.add_option("--slurm-workers", slurm.max_workers, "with --slurm: worker jobs pending or running at once, at most")
      ->check(CLI::PositiveNumber)
      ->needs(on_slurm);
  cmd.add_option("--slurm-program", f.slurm_program,
                 "with --slurm: the accelopt the nodes run (default: this one; e.g. bin/accelopt of an unpacked "
                 "`make dist` on a shared filesystem)")
      ->needs(on_slurm);
  cmd.add_option("--machine-class", f.queue.machine_class,
                 "with the queue: the class of machine the jobs run on (workers serving it take them; default: "
                 "this machine's fingerprint)");
  AddSuiteFlag(cmd, f.common);
  AddEvalFlags(cmd, f.eval);
  AddLlmFlags(cmd, f.llm);
  AddBudgetFlag(cmd, f.llm.override_.budget_usd);
}

// The recorded demo of the target (TargetKind::demo), or else the default
// target's: its tasks, a small search, answers from the recording.
void UseDemo(OptimizeFlags& f) {
  f.demo = true;
  const targets::TargetKind* kind = targets::FindTarget(f.eval.target);
  if (!kind || !kind->demo) kind = targets::FindTarget(targets::kDefaultTarget);
  const targets::TargetKind::Demo& demo = *kind->demo;
  if (f.tasks.empty()) f.tasks = demo.tasks;
  f.llm.override_ = llm::ModelOverride{};
  f.llm.override_.scripted_path = ProjectDataPath(demo.recording);
  f.search.iterations = demo.iterations;
  f.search.plans = demo.plans;
  f.search.beam = 1;
  f.search.samples = 1;
  f.search.fix_rounds = 0;
  f.search.proposals = search::ProposalMode::kSequential;  // recorded one plan per call
  if (f.memory == "shared") f.memory = "demo";             // recorded lessons stay out of the shared memory
}

std::string MemoryNameFor(const OptimizeFlags& f, int64_t run_id) {
  return f.memory == "fresh" ? "run-" + std::to_string(run_id) : f.memory;
}

// The speedup the evidence gives: the best against the baseline directly,
// side by side; else the product of its lineage's steps; "-" for the baseline.
std::string SpeedupCell(const run::TaskResult& r) {
  if (r.best.id == r.baseline.id || r.evidence.steps == 0) return "-";
  if (r.vs_baseline && !r.vs_baseline->disturbed)
    return fmt::format("{:.2f}x [{:.2f}-{:.2f}]", r.vs_baseline->speedup, r.vs_baseline->ci_low,
                       r.vs_baseline->ci_high);
  return fmt::format("{:.2f}x [{:.2f}-{:.2f}]{}", r.evidence.estimate, r.evidence.low, r.evidence.high,
                     r.evidence.medians ? "m" : "c");
}

void PrintResults(const std::vector<run::TaskResult>& results, int64_t run_id, bool json) {
  if (json) {
    Json out = Json::array();
    for (const auto& r : results) out.push_back(run::ToJson(r));
    fmt::print("{}\n", DumpJson({{"run", run_id}, {"tasks", out}}, 2));
    return;
  }
  fmt::print("\n{:<18} {:>12} {:>12} {:>22} {:>14} {:>14} {:>12}\n", "task", "baseline", "best", "speedup",
             "% peak before", "% peak after", "LLM cost");
  bool chained = false, medians = false, disturbed = false;
  for (const auto& r : results) {
    std::string cost = fmt::format("${:.4f}", r.cost) + (r.unknown_cost_calls ? "+?" : "");
    // A code task's figure is its own metric, with no peak to be a percentage
    // of; a kernel timed with no calibration stored is not scored.
    auto percent = [](const Candidate& c) {
      if (c.profile.metric) return std::string("-");
      if (!c.profile.scored_against) return std::string("unscored");
      return fmt::format("{:.2f}%", c.profile.percent_of_peak);
    };
    const std::string cell = SpeedupCell(r);
    chained = chained || cell.back() == 'c';
    medians = medians || cell.back() == 'm';
    fmt::print("{:<18} {:>12} {:>12} {:>22} {:>14} {:>14} {:>12}\n", r.task, MeasureText(r.baseline.profile),
               MeasureText(r.best.profile), cell, percent(r.baseline), percent(r.best), cost);
    const run::Disturbance& d = r.disturbance;
    if (d.disturbed_evaluations + d.disturbed_comparisons + d.retried_series > 0) {
      disturbed = true;
      fmt::print(
          "  {} measured under load: {} of {} evaluations and {} of {} comparisons stayed disturbed (shown, deciding "
          "nothing); {} series measured again\n",
          r.task, d.disturbed_evaluations, d.evaluations, d.disturbed_comparisons, d.comparisons, d.retried_series);
      if (d.comparisons > 0 && d.disturbed_comparisons == d.comparisons)
        fmt::print("  {}: no comparison was measured quietly, so nothing was decided: run it again when the machine "
                   "is quiet\n",
                   r.task);
    }
    if (r.vs_baseline && r.vs_baseline->disturbed)
      fmt::print("  {}: the final check against the baseline was measured disturbed ({}); the speedup shown is the "
                 "chain of undisturbed steps\n",
                 r.task, PairedSpeedupText(*r.vs_baseline));
    for (const auto& [name, profile] : r.anchors)
      fmt::print("  {} anchor {}: {} ({}{}); the best {} its speed (ratio of medians, not timed side by side)\n",
                 r.task, name, MeasureText(profile),
                 profile.scored_against ? fmt::format("{:.2f}% of peak", profile.percent_of_peak) : "unscored",
                 profile.disturbed ? ", disturbed" : "",
                 profile.latency && r.best.profile.latency
                     ? fmt::format("{:.2f}x", profile.latency->median_s / r.best.profile.latency->median_s)
                     : std::string("-"));
    if (!r.stopped.empty()) fmt::print("  {} stopped early: {}\n", r.task, r.stopped);
  }
  fmt::print("\nspeedup: the best against the baseline timed side by side at the end, with its 95% interval");
  if (chained) fmt::print(";\n  c: the product of the steps of its lineage, each timed side by side");
  if (medians) fmt::print(";\n  m: the product of ratios of medians (the target cannot time two kernels side by side)");
  fmt::print("\n");
  if (!disturbed) fmt::print("every measurement of this run was taken with the machine quiet\n");
  fmt::print("run {}: `accelopt show {}` for the best kernels and the plans that led to them\n", run_id, run_id);
}

// Everything a run needs, checked before the run is created: a run that
// cannot start never appears in `runs`.
struct Prepared {
  suite::Suite suite;
  std::vector<const suite::Task*> selected;
  std::unique_ptr<llm::LlmClient> client;
};

// `spent` is what the run's earlier sessions spent: it counts against the budget.
Prepared Prepare(OptimizeFlags& f, const run::LlmTotals& spent = {}) {
  Prepared p;
  p.suite = LoadSuiteOrExit(f.common.suite_dir);
  p.selected = SelectTasks(p.suite, f.tasks);
  f.eval.target = TargetNameFor(f.eval, p.selected);
  llm::LlmConfig config = LlmConfigFor(f.llm);
  if (!config.configured()) throw Exit{kExitError, HowToConfigure()};
  config.budget.spent_usd = spent.cost_usd;
  config.budget.spent_tokens = spent.input_tokens + spent.output_tokens;
  auto client = llm::BuildLlmClient(config);
  if (!client) throw Exit{kExitError, client.error().message};
  p.client = std::move(*client);
  p.client->RetainRecords(false);  // the store keeps them
  return p;
}

// What the run will ask of its models, at most, on stderr before it starts.
void PrintEstimate(const OptimizeFlags& f, size_t tasks, const llm::LlmClient& client) {
  std::map<std::string, run::RoleModel> models;
  for (const char* role : {"planner", "executor", "fixer", "summarizer"})
    if (auto described = client.Describe(role))
      models[role] = {described->first, described->second, client.PriceOf(role)};
  fmt::print(stderr, "{}", run::EstimateText(run::EstimateRun(f.search, tasks, models)));
}

// Each task runs on the target and has its baseline, or the run is not created.
void CheckSupported(const std::vector<const suite::Task*>& tasks, const std::string& shape,
                    const targets::Target& target) {
  for (const suite::Task* task : tasks) {
    if (target.Supports(*task)) continue;
    const std::string why = task->kind == suite::TaskKind::kCode
                                ? "it is a code task (the code target runs it: leave out --target or say --target code)"
                                : "it has no reference and baseline" + target.Describe().file_extension + " for it";
    throw Exit{kExitError, "the " + target.name() + " target cannot run task '" + task->name + "': " + why};
  }
  // The shape is one of each task's, and what each search starts from can be
  // had (a code task's repository cloned, its files found).
  for (const suite::Task* task : tasks) {
    if (auto bound = suite::Bind(*task, shape); !bound) throw Exit{kExitError, bound.error().message};
    if (auto baseline = target.Baseline(*task); !baseline) throw Exit{kExitError, baseline.error().message};
  }
}

// Workers that Slurm would refuse (no such partition, GRES or account; no
// Slurm here): said before the run is created, in sbatch's words.
void CheckSlurm(const service::SlurmSettings& slurm) {
  if (slurm.partition.empty()) return;
  if (Status s = service::CheckSlurmSettings(slurm); !s)
    throw Exit{kExitError, "the workers cannot be submitted to Slurm partition " + slurm.partition + ": " +
                               s.error().message};
}

// On Ctrl-C or SIGTERM the run is marked interrupted (after the store's
// current write) and the user told how to go on.
// Returns the flag to set once the run has ended otherwise.
std::shared_ptr<std::atomic<bool>> MarkInterruptedOnSignal(store::Store& db, int64_t run_id) {
  auto ended = std::make_shared<std::atomic<bool>>(false);
  OnInterrupt([&db, run_id, ended](int signal) {
    if (*ended) return;
    auto s = db.SetRunStatus(run_id, "interrupted", {{"signal", signal == SIGINT ? "SIGINT" : "SIGTERM"}});
    if (!s) fmt::print(stderr, "accelopt: could not mark run {} interrupted: {}\n", run_id, s.error().message);
    fmt::print(stderr, "run {} interrupted; `accelopt resume {}` goes on without redoing what it recorded\n", run_id,
               run_id);
  });
  return ended;
}

// Where the run's kernels are measured: here, under the device's lock (the
// target was made without its own), or through the queue by workers, some
// started here. Holds what it started until the run ends.
// The run's workers on Slurm, finished once: at the run's end, its failure
// or an interrupt, whichever comes first.
struct SlurmRun {
  SlurmRun(service::SlurmWorkersOptions options, std::string record_path, int64_t run)
      : workers(std::move(options)), record(std::move(record_path)), run_id(run) {}
  service::SlurmWorkers workers;
  std::string record;  // where the jobs' final states are kept
  int64_t run_id = 0;
  std::once_flag finished;
};

struct Measuring {
  std::unique_ptr<service::JobQueue> queue;
  std::optional<service::WorkerProcesses> workers;
  // Shared with the interrupt action; tends on a thread while the queue lives.
  std::shared_ptr<SlurmRun> slurm;
  std::unique_ptr<service::Evaluator> evaluator;
  run::EvalRoute route;
  ~Measuring() {
    if (slurm) slurm->workers.Stop();
  }
};

// The one password the workers get ($PGPASSWORD) for the store and the queue
// a run names; "" when neither URI holds one.
std::string WorkersPassword(const std::string& db, const std::string& queue) {
  const std::string a = store::UriPassword(db), b = store::UriPassword(queue);
  if (!a.empty() && !b.empty() && a != b)
    throw Exit{kExitUsage,
               "--db and --queue-db hold different passwords, and the workers started here get one ($PGPASSWORD): "
               "give the user one password, or keep them in ~/.pgpass"};
  return a.empty() ? b : a;
}

// The Slurm jobs earlier sessions of the run kept (a resumed run adds to them).
Json KeptSlurmJobs(const std::string& record) {
  if (!std::filesystem::exists(record)) return Json::array();
  auto text = ReadFile(record);
  Json j = text ? Json::parse(*text, nullptr, /*allow_exceptions=*/false) : Json();
  return j.is_object() && j.contains("slurm_jobs") && j["slurm_jobs"].is_array() ? j["slurm_jobs"] : Json::array();
}

// Cancels the run's Slurm jobs that still run, says each job's final state
// and log, and keeps them in the record `accelopt show RUN` reads.
void FinishSlurmOnce(service::SlurmWorkers& slurm, const std::string& record, int64_t run_id) {
  if (Status s = slurm.Stop(); !s) fmt::print(stderr, "slurm: {}\n", s.error().message);
  const auto jobs = slurm.Workers();
  Json list = KeptSlurmJobs(record);
  for (const auto& w : jobs) {
    list.push_back(w.ToJson());
    fmt::print(stderr, "slurm: job {} ({}): {}, exit code {}{}, log {}\n", w.job_id, w.name, w.state.state,
               w.state.exit_code, w.state.signal ? fmt::format(", signal {}", w.state.signal) : "", w.log);
  }
  if (Status s = WriteFile(record, DumpJson({{"run", run_id}, {"slurm_jobs", list}}, 2)); !s)
    fmt::print(stderr, "slurm: could not keep the jobs' states: {}\n", s.error().message);
  else if (!jobs.empty())
    fmt::print(stderr, "slurm: {} job(s) of run {} kept in {} (`accelopt show {}` lists them)\n", jobs.size(), run_id,
               record, run_id);
  else
    fmt::print(stderr, "slurm: no worker job was needed\n");
}

void FinishSlurm(SlurmRun& run) {
  std::call_once(run.finished, [&run] { FinishSlurmOnce(run.workers, run.record, run.run_id); });
}

std::unique_ptr<Measuring> StartMeasuring(const OptimizeFlags& f, int64_t run_id, targets::Target& target) {
  auto m = std::make_unique<Measuring>();
  auto say = [](const std::string& text) { fmt::print(stderr, "{}\n", text); };
  const bool on_slurm = !f.queue.slurm.partition.empty();
  if (!f.queue.enabled && f.queue.workers == 0 && f.queue.location.empty() && !on_slurm) {
    m->evaluator = EvaluatorHere(target, "optimize run " + std::to_string(run_id));
    m->route.evaluator = m->evaluator.get();
    m->route.settings = service::SettingsToJson(TargetSettingsFor(f.eval));
    return m;
  }
  const std::string machine_class = f.queue.machine_class.empty() ? target.Machine() : f.queue.machine_class;
  const std::string queue_at = f.queue.location.empty() ? f.db : f.queue.location;
  auto queue = service::OpenJobQueue(queue_at);
  if (!queue) throw Exit{kExitError, queue.error().message};
  m->queue = std::move(*queue);
  // The store by its absolute path (a worker started by hand may start in
  // another folder), or its URI without the password.
  const std::string db = store::IsPostgresUri(f.db) ? store::RedactUri(f.db) : std::filesystem::absolute(f.db).string();
  std::vector<std::string> worker_args = {"worker", "--db", db, "--machine-class", machine_class};
  if (!f.queue.location.empty())
    worker_args.insert(worker_args.end(), {"--queue", service::RedactUri(f.queue.location)});
  const std::string shown = service::RedactUri(queue_at);
  if (!f.common.suite_dir.empty())
    worker_args.insert(worker_args.end(), {"--suite", std::filesystem::absolute(f.common.suite_dir).string()});
  // The workers started here or on Slurm take the password from their
  // environment (sbatch exports it), not from a command line every user of the
  // machine can read.
  if (f.queue.workers > 0 || on_slurm)
    if (const std::string password = WorkersPassword(f.db, f.queue.location); !password.empty())
      setenv("PGPASSWORD", password.c_str(), 1);
  const std::vector<std::string> lease = {"--lease", fmt::format("{:g}", f.queue.lease), "--heartbeat",
                                          fmt::format("{:g}", std::min(5.0, f.queue.lease / 4))};
  const std::string self = std::filesystem::read_symlink("/proc/self/exe").string();
  if (on_slurm) {
    service::SlurmWorkersOptions options;
    options.slurm = f.queue.slurm;
    options.program = f.slurm_program.empty() ? self : std::filesystem::absolute(f.slurm_program).string();
    options.arguments = worker_args;
    options.arguments.insert(options.arguments.end(), lease.begin(), lease.end());
    options.name_prefix = "run" + std::to_string(run_id) + "-slurm";
    options.first_number = static_cast<int>(KeptSlurmJobs(SlurmRecordPath(f.db, run_id)).size()) + 1;
    options.log_dir = SlurmLogDir(f.db);
    options.say = say;
    std::error_code ec;
    std::filesystem::create_directories(options.log_dir, ec);
    if (ec)
      throw Exit{kExitError, "cannot create the Slurm workers' log folder " + options.log_dir + ": " + ec.message()};
    m->slurm = std::make_shared<SlurmRun>(std::move(options), SlurmRecordPath(f.db, run_id), run_id);
    m->slurm->workers.TendInBackground(*m->queue, machine_class);
    OnInterrupt([slurm = m->slurm](int) { FinishSlurm(*slurm); });
    say(fmt::format("evaluating through the job queue in {}: up to {} worker(s) submitted to Slurm partition {} as "
                    "jobs wait (logs in {})",
                    shown, f.queue.slurm.max_workers, f.queue.slurm.partition, SlurmLogDir(f.db)));
  }
  if (f.queue.workers > 0) {
    std::vector<std::string> args = worker_args;
    args.insert(args.end(), lease.begin(), lease.end());
    args.push_back("--stop-with-parent");
    const std::string logs = CacheDir() + "/workers";
    auto started = service::WorkerProcesses::Start(self, args,
                                                   f.queue.workers, "run" + std::to_string(run_id) + "-worker", logs);
    if (!started) throw Exit{kExitError, started.error().message};
    m->workers.emplace(std::move(*started));
    say(fmt::format("evaluating through the job queue in {}: {} worker(s) started here (logs in {})", shown,
                    f.queue.workers, logs));
  } else if (!on_slurm) {
    say(fmt::format("evaluating through the job queue in {} (machine class {}): start workers with `accelopt {}`",
                    shown, machine_class, fmt::join(worker_args, " ")));
  }
  service::QueueEvaluatorOptions options;
  options.say = say;
  options.worker_hint = fmt::format("{}", fmt::join(worker_args.begin() + 1, worker_args.end(), " "));
  m->evaluator = service::MakeQueueEvaluator(*m->queue, std::move(options));
  m->route.evaluator = m->evaluator.get();
  // Workers of this machine's class score against the run's profile (recorded
  // with it, so a resumed run's percentages stay comparable); workers of
  // another class against their own machine's, named in every profile.
  // This machine's profile was loaded or measured when the run began: its
  // workers do not calibrate again when there is none.
  targets::TargetSettings settings = TargetSettingsFor(f.eval);
  const bool here = machine_class == target.Machine();
  settings.hardware = here ? target.Hardware() : Json(nullptr);
  settings.calibrate_if_missing = !here;
  m->route.settings = service::SettingsToJson(settings);
  m->route.machine_class = machine_class;
  return m;
}

void Execute(OptimizeFlags& f, Prepared& p, int64_t run_id, store::Store& db, targets::Target& target, bool json) {
  auto ended = MarkInterruptedOnSignal(db, run_id);
  auto measuring = StartMeasuring(f, run_id, target);
  // What `serve` shows while the run goes; its last state is written when it ends.
  run::LiveProgress progress(db, run_id);
  std::vector<run::TaskResult> results;
  Json summary = Json::array();
  for (const suite::Task* task : p.selected) {
    run::TaskSettings settings{f.search,       MemoryNameFor(f, run_id),
                               f.shape,        ProjectDataPath(target.Describe().prompts_dir),
                               measuring->route, &progress, f.anchors};
    auto r = run::OptimizeTask(settings, *task, run_id, db, *p.client, target);
    if (!r) {
      db.SetRunStatus(run_id, "failed", {{"error", r.error().message}});
      *ended = true;
      if (measuring->slurm) FinishSlurm(*measuring->slurm);
      throw Exit{kExitError, r.error().message +
                                 fmt::format("\n(run {} can be resumed with `accelopt resume {}`)", run_id, run_id)};
    }
    results.push_back(*r);
    summary.push_back(run::ToJson(*r));
  }
  bool stopped = std::any_of(results.begin(), results.end(), [](const auto& r) { return !r.stopped.empty(); });
  db.SetRunStatus(run_id, stopped ? "stopped" : "finished", summary);
  *ended = true;
  if (measuring->slurm) FinishSlurm(*measuring->slurm);
  PrintResults(results, run_id, json);
  // A recorded demo answers every agent of every task it names: an agent left
  // without an answer is a stale recording, not a result to pass off as one.
  if (f.demo) {
    std::string unanswered;
    for (const auto& r : results)
      for (const auto& [role, message] : r.agent_failures)
        if (role != "comparison") unanswered += fmt::format("\n  task '{}', {}: {}", r.task, role, message.substr(0, 300));
    if (!unanswered.empty())
      throw Exit{kExitError, "the recorded demo (" + f.llm.override_.scripted_path +
                                 ") left agents without an answer:" + unanswered};
  }
}

// A run resumes only against the task files it began with; a run recorded
// before it kept them resumes as it always did, unchecked, and says so.
void CheckDefinitions(const Json& config, const std::vector<const suite::Task*>& tasks, const OptimizeFlags& f,
                      int64_t run_id) {
  if (!config.contains("task_definitions")) {
    fmt::print(stderr,
               "run {} was recorded before runs kept their task definitions: resuming without checking that its "
               "tasks' files are unchanged\n",
               run_id);
    return;
  }
  auto same = run::CheckTaskDefinitions(config["task_definitions"], tasks, f.shape);
  if (!same)
    throw Exit{kExitError,
               fmt::format("run {} cannot resume: its tasks differ from those it began with: {}\n(restore those "
                           "files, point --suite at a folder holding them, or start a new run)",
                           run_id, same.error().message)};
}

}  // namespace

void RegisterOptimize(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "optimize",
      "optimize tasks with the LLM agents: beam search, lessons in a persistent memory, everything recorded\n"
      "without tasks and without a configured model: the recorded offline demo");
  static OptimizeFlags flags;
  static bool json = false;
  cmd->add_option("TASK", flags.tasks, "tasks to optimize (see `accelopt tasks`)");
  cmd->add_flag("--json", json, "print the final table as JSON on stdout (progress stays on stderr)");
  cmd->add_flag("--anchors", flags.anchors,
                "at the end of each task, measure its vendor anchor too (vendor.cpp on OpenBLAS for the cpu) and keep "
                "it in the run's summary, for `report`");
  cmd->add_flag("--demo", flags.demo,
                "replay the recorded demo (silu, matmul, rmsnorm_matmul) instead of a live model");
  AddSearchFlags(*cmd, flags);
  cmd->callback([cmd] {
    OptimizeFlags& f = flags;
    if (!f.demo && !LlmConfigFor(f.llm).configured()) {
      auto servers = llm::ProbeLocalServers();
      if (!servers.empty() && !servers.front().models.empty()) {
        const auto& s = servers.front();
        f.llm.override_.base_url = s.base_url;
        f.llm.override_.model = s.models.front();
        fmt::print(stderr, "No model is configured; using {} found at {} (model {}).\n", s.name, s.base_url,
                   s.models.front());
      } else if (!f.tasks.empty()) {
        // Named tasks are a request for a real search: never answered by a recording with settings of its own.
        throw Exit{kExitError, HowToConfigure() +
                                   "To replay the recorded demo instead (silu, matmul, rmsnorm_matmul), run "
                                   "`accelopt optimize --demo`."};
      } else {
        fmt::print(stderr,
                   "No language model is configured or found: running the recorded demo (answers replayed from "
                   "demo/recording.jsonl; every figure is measured now). To use a model: --base-url URL --model M, "
                   "or accelopt.yaml (docs/llm.md).\n");
        f.demo = true;
      }
    }
    if (!f.demo && f.tasks.empty()) {
      f.tasks.assign(std::begin(kDemoTasks), std::end(kDemoTasks));
      fmt::print(stderr, "No tasks named: optimizing {}, {} and {} (name tasks to choose).\n", kDemoTasks[0],
                 kDemoTasks[1], kDemoTasks[2]);
    }
    if (f.demo) UseDemo(f);
    Prepared prepared = Prepare(f);
    // The run keeps the hardware profile it is scored against: every stored
    // percentage can be recomputed from its latency and this profile.
    if (f.queue.workers > 0 || !f.queue.slurm.partition.empty()) f.queue.enabled = true;
    targets::TargetSettings target_settings = TargetSettingsFor(f.eval);
    target_settings.device_lock = false;  // the evaluator holds the device's lock, for every target
    auto target = MakeTargetOrExit(target_settings, f.eval.target);
    // Without --shape, the target's shape for the tasks (gpu on the cuda target); the run records it.
    if (cmd->get_option("--shape")->count() == 0) f.shape = ShapeFor("", *target, prepared.selected);
    CheckSupported(prepared.selected, f.shape, *target);
    CheckSlurm(f.queue.slurm);
    // The tasks as they are now, kept with the run: a resume goes on only against the same files.
    auto definitions = run::TaskDefinitions(prepared.selected, f.shape);
    if (!definitions) throw Exit{kExitError, definitions.error().message};
    PrintEstimate(f, prepared.selected.size(), *prepared.client);
    auto db = OpenStoreOrExit(f.db, /*create=*/true);
    Json config = run::ToJson(ConfigOf(f));
    config["hardware"] = target->Hardware();
    config["task_definitions"] = *definitions;
    auto run_id = db->CreateRun(config);
    if (!run_id) throw Exit{kExitError, run_id.error().message};
    fmt::print(stderr, "run {} (store {})\n", *run_id, store::RedactUri(f.db));
    Execute(f, prepared, *run_id, *db, *target, json);
  });

  auto* resume =
      app.add_subcommand("resume", "continue a run that was stopped or killed, without redoing what it recorded");
  static int64_t run = 0;
  static std::string db_path = "accelopt.db";
  static std::string suite_dir;
  static std::optional<double> budget_usd;
  resume->add_option("RUN", run, "run id (see `accelopt runs`)")->required();
  resume->add_option("--db", db_path, kDbHelp);
  resume->add_option("--suite", suite_dir,
                     "the suite's folder, when it moved since the run began (its tasks must hold the files the run "
                     "recorded)");
  AddBudgetFlag(*resume, budget_usd);
  static bool resume_json = false;
  resume->add_flag("--json", resume_json, "print the final table as JSON on stdout (progress stays on stderr)");
  resume->callback([] {
    auto db = OpenStoreOrExit(db_path, /*create=*/false);
    const store::RunInfo info = RunOrExit(*db, run, db_path);
    const Json& config = info.config;
    auto recorded = run::RunConfigFromJson(config);
    if (!recorded) throw Exit{kExitError, fmt::format("run {}: {}", run, recorded.error().message)};
    OptimizeFlags f = FlagsOf(*recorded);
    f.db = db_path;
    if (!suite_dir.empty()) f.common.suite_dir = suite_dir;
    if (budget_usd) f.llm.override_.budget_usd = budget_usd;
    // Scored against the profile the run began with, so its percentages stay comparable.
    targets::TargetSettings settings = TargetSettingsFor(f.eval);
    settings.hardware = config.value("hardware", Json(nullptr));
    settings.device_lock = false;  // the evaluator holds the device's lock, for every target
    auto target = targets::MakeTarget(f.eval.target, settings);
    if (!target) throw Exit{kExitError, fmt::format("run {}: {}", run, target.error().message)};
    // The run's budget is its total: what its earlier sessions spent counts.
    auto calls = db->ListLlmCalls(run);
    if (!calls) throw Exit{kExitError, calls.error().message};
    const run::LlmTotals spent = run::SumLlmCalls(*calls);
    Prepared prepared = Prepare(f, spent);
    CheckDefinitions(config, prepared.selected, f, run);
    if (spent.calls > 0)
      fmt::print(stderr, "run {} spent ${:.4f} on {} model call(s) before this session: its budget counts them\n", run,
                 spent.cost_usd, spent.calls);
    CheckSlurm(f.queue.slurm);
    db->SetRunStatus(run, "running", Json::object());
    fmt::print(stderr, "resuming run {} ({} task(s))\n", run, f.tasks.size());
    Execute(f, prepared, run, *db, **target, resume_json);
  });
}

}  // namespace accelopt::cli
