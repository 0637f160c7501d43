#pragma once
/// cli: one file per subcommand; this header holds what several of them share.
/// Only cli/ turns errors into messages and exit codes.

#include <CLI/CLI.hpp>
#include <optional>
#include <string>
#include <vector>

#include "core/format.h"
#include "core/result.h"
#include "run/config.h"
#include "service/evaluator.h"
#include "store/store.h"
#include "suite/task.h"
#include "targets/registry.h"

namespace accelopt::cli {

/// Exit codes: 0 success, 1 engine or input error, 2 usage, 3 a kernel's verdict was not ok.
constexpr int kExitError = 1;
constexpr int kExitUsage = 2;
constexpr int kExitVerdict = 3;

/// Thrown by subcommand callbacks to end with a message and an exit code.
struct Exit {
  int code;
  std::string message;
};

/// What every --db option says: an SQLite file or a PostgreSQL database.
inline constexpr const char* kDbHelp =
    "the store: an SQLite file, or a PostgreSQL database a team shares (postgresql://user@host:port/db; a "
    "password from $PGPASSWORD or ~/.pgpass stays out of process listings)";

/// Opens the store a --db names. `create` false: a missing SQLite file is an
/// error (a mistyped --db never becomes a new empty store).
std::unique_ptr<store::Store> OpenStoreOrExit(const std::string& location, bool create);

/// Run `run` of the store a --db named `db`; a store error, or "no run N in
/// DB" (the URI without its password), ends the command.
store::RunInfo RunOrExit(store::Store& store, int64_t run, const std::string& db);

/// Options every subcommand that reads the suite shares.
struct CommonFlags {
  std::string suite_dir;
};
void AddSuiteFlag(CLI::App& app, CommonFlags& flags);

/// Options every subcommand that evaluates kernels shares: a run records them.
using EvalFlags = run::EvalConfig;
void AddEvalFlags(CLI::App& app, EvalFlags& flags);

/// The suite: its tasks that load and its broken folders with their errors.
/// Exit when the folder cannot be listed or holds no task folder at all.
suite::Suite LoadSuiteOrExit(const std::string& suite_dir);
/// Selected tasks by name (all that load when `names` is empty, each broken
/// one named on stderr as left out); an unknown name exits with the known
/// list, a broken task's name with its error.
std::vector<const suite::Task*> SelectTasks(const suite::Suite& suite, const std::vector<std::string>& names);

/// The target named by the flags, else the one for these tasks' kind: cpu for
/// kernels, code for code tasks. Exit when the tasks are of both kinds.
std::string TargetNameFor(const EvalFlags& flags, const std::vector<const suite::Task*>& tasks);

/// The settings of a target for these flags: data and cache folders, messages on stderr.
targets::TargetSettings TargetSettingsFor(const EvalFlags& flags);

/// The target the flags name, from the registry (measuring the machine when it
/// has no profile yet), or Exit with the reason it cannot be built.
std::unique_ptr<targets::Target> MakeTargetOrExit(const targets::TargetSettings& settings, const std::string& name);

/// What --shape says of its default, for every command that takes it.
inline constexpr const char* kShapeHelp =
    "shape (bench, test, gpu, ...); default: the target's, gpu on the cuda target where the task has it, else bench";
/// The shape asked for (`--shape`), or when none was, the target's default for
/// `task` (Target::DefaultShape: gpu on the cuda target, bench on the cpu).
std::string ShapeFor(const std::string& asked, const targets::Target& target, const suite::Task& task);
/// The same for several tasks measured at one shape (a run): Exit when the
/// target's defaults for them differ and none was asked for.
std::string ShapeFor(const std::string& asked, const targets::Target& target,
                     const std::vector<const suite::Task*>& tasks);

/// "waiting for the DEVICE device, held by HOLDER" on stderr (LocalEvaluatorOptions::on_device_wait).
void PrintDeviceWait(const std::string& device, const std::string& holder);

/// A local evaluator on `target` (made with TargetSettings::device_lock
/// false): it holds the device's machine-wide lock while it measures, and says
/// on stderr when it waits for it.
std::unique_ptr<service::Evaluator> EvaluatorHere(targets::Target& target, const std::string& purpose);
/// A job for `target` on this machine; an Error when the task cannot be made one.
Result<service::EvalJob> JobHere(const targets::Target& target, const suite::Task& task, const std::string& shape,
                                 service::JobKind kind, std::vector<service::JobSource> sources);

/// One job measured here, on `target` (made with TargetSettings::device_lock
/// false), under its device's machine-wide lock, as `optimize` measures:
/// the profile of each source (and for a comparison the speedup). An Error is the engine's.
Result<service::EvalOutcome> MeasureHere(targets::Target& target, const suite::Task& task, const std::string& shape,
                                         service::JobKind kind, std::vector<service::JobSource> sources);

void RegisterTasks(CLI::App& app);
void RegisterEval(CLI::App& app);
void RegisterCompare(CLI::App& app);
void RegisterCalibrate(CLI::App& app);
void RegisterTargets(CLI::App& app);
void RegisterBench(CLI::App& app);
void RegisterLlm(CLI::App& app);
void RegisterOptimize(CLI::App& app);
void RegisterStoreCommands(CLI::App& app);
void RegisterExport(CLI::App& app);
void RegisterWorker(CLI::App& app);
void RegisterServe(CLI::App& app);
void RegisterReport(CLI::App& app);
/// `candidates` and `export candidate` (after RegisterExport).
void RegisterCandidateCommands(CLI::App& app);

/// The machine class a target's jobs run on by default: the fingerprint of the
/// machine it measures on here (Target::Machine), or Exit when it cannot be made.
std::string DefaultMachineClass(const std::string& target_name);

/// The folder of a run's Slurm workers' logs: beside an SQLite store `db`,
/// which the nodes reach already (a worker opens it); for a PostgreSQL store,
/// in the folder the command runs in.
std::string SlurmLogDir(const std::string& db);
/// The record of run `run_id`'s Slurm jobs and their final states (JSON),
/// written when the run ends and shown by `accelopt show`.
std::string SlurmRecordPath(const std::string& db, int64_t run_id);

}  // namespace accelopt::cli
