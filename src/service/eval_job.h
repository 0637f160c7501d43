#pragma once
/// service: evaluation as a service of jobs (DESIGN.md section 7).
///
/// A job is a value: everything needed to evaluate one kernel, or to compare
/// two side by side, on any machine of the right class, with no pointer into
/// the engine that made it. It serializes to JSON (versioned) and has a stable
/// key, so a queue can tell a job it holds already from a new one and a
/// result is reused only where it was measured. Results are values too.

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/json_io.h"
#include "core/profile.h"
#include "core/result.h"
#include "eval/stats.h"
#include "suite/task.h"
#include "targets/registry.h"

namespace accelopt::service {

/// The job format's version: a reader refuses a job of another version by name.
constexpr int kJobVersion = 1;

/// A task folder as data, bound to one of its shapes: its files' contents (the
/// task as it was loaded, wherever the job runs), where it was loaded from
/// (tried first: a code task's code base is found from there) and a digest of
/// the files, which names the task in keys and caches.
struct TaskSpec {
  std::string name;
  std::string shape;
  std::string origin;                         ///< the folder it was read from, on the machine that made the job
  std::map<std::string, std::string> files;  ///< path in the folder -> contents
  std::string digest;                         ///< of `files` (SHA-256 over paths and contents, hex)
  Json parameters;                            ///< the shape's parameters, bound (for reading; never trusted)
};

/// The digest of a task's files (TaskSpec::digest).
std::string DigestOfFiles(const std::map<std::string, std::string>& files);

/// The task `task` as a spec at `shape`: its folder's regular files, at most
/// `max_bytes` in all (a task is data, not a data set). An Error names the
/// file that cannot be read, the shape that does not bind, or the size.
Result<TaskSpec> TaskSpecOf(const suite::Task& task, const std::string& shape, size_t max_bytes = 4 << 20);

/// One kernel of a job.
struct JobSource {
  std::string label;                   ///< "candidate", "parent", a path ...
  std::string source;                  ///< the whole kernel file
  std::string hash;                    ///< of the source, as the engine keys it (agents::CodeHash)
  std::vector<std::string> libraries;  ///< extra libraries it may link ("openblas")
};

enum class JobKind {
  kEvaluate,  ///< one source: its profile
  kCompare,   ///< two sources timed side by side: both profiles and the speedup of the second over the first
};
const char* JobKindName(JobKind kind);

struct EvalJob {
  int version = kJobVersion;
  JobKind kind = JobKind::kEvaluate;
  TaskSpec task;
  std::vector<JobSource> sources;
  std::string target;         ///< the registered target that measures it
  Json settings = Json::object();  ///< the target's settings as data (SettingsToJson)
  /// Where it must run: a class of machines its workers serve (by default one
  /// machine's fingerprint). Results are kept per class.
  std::string machine_class;

  /// "evaluate|compare/task@digest/shape/target@class/hash[-hash]": the same
  /// for the same work, whoever asks.
  std::string Key() const;
  Json ToJson() const;
  /// An Error names the missing or mistyped field, or a version it cannot read.
  static Result<EvalJob> FromJson(const Json& j);
};

/// A job's result: one profile per source, and for a comparison the speedup
/// when both were ok; who measured it, and how long it took.
struct EvalOutcome {
  std::vector<Profile> profiles;
  std::optional<PairedSpeedup> speedup;
  std::string worker;   ///< "" when measured in the engine's own process
  std::string device;   ///< the device it held while measuring
  std::string machine;  ///< the fingerprint of the machine that measured it
  double seconds = 0;   ///< from claiming (or starting) to the result
  Json ToJson() const;
  static Result<EvalOutcome> FromJson(const Json& j);
};

/// Why a job has no outcome: the engine's failure, never a kernel's verdict.
/// Retryable errors (a worker died, a device was busy) may succeed elsewhere;
/// permanent ones (a task that does not load, an unknown target) never will.
struct JobError {
  std::string message;
  bool retryable = false;
};

/// The data of `settings` a job carries (seeds, timeout, the target's own
/// options, a recorded hardware profile, whether to calibrate a machine without one),
/// and back onto a base (which keeps its folders
/// and message sink: those belong to the machine that measures).
Json SettingsToJson(const targets::TargetSettings& settings);
Status ApplySettings(const Json& data, targets::TargetSettings& settings);

/// The task of a spec, loaded: from its origin when that folder still holds
/// the same files, else from a copy of its files written under `cache_dir`.
/// An Error names what could not be written or loaded.
Result<suite::Task> LoadTaskSpec(const TaskSpec& spec, const std::string& cache_dir);

}  // namespace accelopt::service
