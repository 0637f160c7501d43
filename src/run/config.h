#pragma once
/// A run's settings as the store keeps them: what `optimize` was asked to do,
/// so that `resume` goes on with exactly the same search, model and target.

#include <string>
#include <vector>

#include "core/json_io.h"
#include "core/result.h"
#include "llm/config.h"
#include "search/beam_search.h"
#include "service/slurm_workers.h"

namespace accelopt::run {

/// Where and how kernels are evaluated.
struct EvalConfig {
  /// The target's name; "" until chosen: by the tasks' kind (cli::TargetNameFor).
  std::string target;
  std::string evaluator;  ///< the external target's program ("" = $ACCELOPT_EVALUATOR)
  int seeds = 3;
  double timeout = 60;
  std::vector<int> cpus;
  bool bind_openmp = false;
};

/// Where a run's kernels are measured: in the engine's process (the default)
/// or through the store's job queue, by `accelopt worker` processes.
struct QueueConfig {
  bool enabled = false;       ///< evaluate through the queue
  int workers = 0;            ///< workers the run starts on this machine itself (0: started elsewhere)
  std::string machine_class;  ///< the class of machine its jobs run on ("" = this machine's fingerprint)
  /// Where the queue lives: "" = the store's SQLite file, else a PostgreSQL URI
  /// (kept without its password: libpq reads it from $PGPASSWORD or ~/.pgpass).
  std::string location;
  double lease = 30;  ///< seconds a worker's claim holds without a heartbeat (the workers it starts)
  /// Workers submitted to Slurm as the queue needs them (`--slurm PARTITION`;
  /// "" partition = none): partition, GRES, time limit, account, how many at most.
  service::SlurmSettings slurm;
};

struct RunConfig {
  std::vector<std::string> tasks;
  std::string memory = "shared";
  std::string shape = "bench";
  bool demo = false;
  /// At the end of each task, its vendor anchor (vendor.cpp on OpenBLAS for the cpu) is
  /// measured too and kept in the summary, beside the baseline and the best.
  bool anchors = false;
  std::string suite_dir;  ///< "" = the default suite
  search::SearchOptions search;
  std::string llm_config;    ///< the configuration file read ("" = none)
  llm::ModelOverride model;  ///< the command line's model settings
  EvalConfig eval;
  QueueConfig queue;
};

Json ToJson(const RunConfig& config);

/// A recorded configuration. Settings added after a run was recorded take the
/// value that run behaved with; an Error names a missing or mistyped field.
Result<RunConfig> RunConfigFromJson(const Json& j);

}  // namespace accelopt::run
