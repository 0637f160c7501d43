#pragma once
/// service: `accelopt worker` processes as Slurm jobs (`optimize --slurm
/// PARTITION`), one worker (one device) per job, submitted with sbatch as the
/// queue needs them and cancelled with scancel when the run ends.
///
/// Their states come from squeue and `scontrol show job`: a cluster without
/// an accounting daemon (slurmdbd) has no sacct, and scontrol forgets a job
/// MinJobAge seconds after it ended (300 by default), so the final state is
/// read while the run still watches and kept with the run.

#include <atomic>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "core/command.h"
#include "core/json_io.h"
#include "core/result.h"
#include "service/job_queue.h"

namespace accelopt::service {

/// Runs argv (argv[0] found on PATH) and returns what it printed; an Error
/// only when it could not be run at all. The Slurm commands go through one so
/// that tests can check their command lines without a cluster.
using CommandRunner = std::function<Result<CommandOutput>(const std::vector<std::string>& argv)>;

// The runner of real commands is core/command.h's RunCommand: a child
// inheriting this process's environment (SLURM_CONF, PGPASSWORD).
using accelopt::CommandOutput;
using accelopt::RunCommand;

/// Where and how the workers' jobs are submitted.
struct SlurmSettings {
  std::string partition;   ///< sbatch --partition
  std::string gres;        ///< sbatch --gres, e.g. "gpu:1" ("" = none)
  std::string time_limit;  ///< sbatch --time, e.g. "2:00:00" ("" = the partition's default)
  std::string account;     ///< sbatch --account ("" = the user's default)
  int max_workers = 1;     ///< jobs pending or running at once, at most
};

/// A Slurm job's state as scontrol or squeue tells it.
struct SlurmJobState {
  std::string state = "SUBMITTED";  ///< PENDING, RUNNING, COMPLETED, CANCELLED, FAILED, TIMEOUT, ...
  std::string reason;               ///< why it pends ("None" when it does not)
  std::string node;                 ///< where it runs or ran
  int exit_code = 0;                ///< from ExitCode=E:S
  int signal = 0;                   ///< the signal that ended it, from ExitCode=E:S
  /// The job will not run (again): any state but submitted, pending,
  /// configuring, running, completing, suspended or requeued.
  bool Ended() const;
};

/// One line of `scontrol show job -o ID` (Key=Value pairs); an Error naming
/// the line when it has no JobState.
Result<SlurmJobState> ParseScontrolJob(const std::string& line);

/// The output of `squeue -h -o %i|%T|%N`: each job id's state and node.
std::map<std::string, SlurmJobState> ParseSqueue(const std::string& text);

/// `text` quoted for a POSIX shell.
std::string ShellQuote(const std::string& text);

/// The sbatch command line that runs `worker_argv` as job `name`, its output
/// in `log`: the environment exported (a password reaches the worker there,
/// never on a command line), not requeued by Slurm (the queue runs a lost
/// worker's job again).
std::vector<std::string> SbatchCommand(const SlurmSettings& settings, const std::string& name, const std::string& log,
                                       const std::vector<std::string>& worker_argv);

/// Asks Slurm whether a worker's job with `settings` would be accepted
/// (sbatch --test-only: partition, GRES, time limit and account checked,
/// nothing submitted). An Error with sbatch's own words when not, or when the
/// Slurm commands cannot be run. Blocks.
Status CheckSlurmSettings(const SlurmSettings& settings, const CommandRunner& run = RunCommand);

/// A worker submitted as a Slurm job.
struct SlurmWorker {
  std::string job_id;
  std::string name;  ///< its job name and its name in the queue
  std::string log;   ///< its stdout and stderr
  SlurmJobState state;
  Json ToJson() const;
};

struct SlurmWorkersOptions {
  SlurmSettings slurm;
  std::string program;                          ///< the accelopt binary (or a dist's run.sh) the nodes run
  std::vector<std::string> arguments;           ///< the worker's arguments, without --name
  std::string name_prefix = "worker";           ///< workers are named <prefix>-<first_number>, then on
  int first_number = 1;                         ///< the number of the first worker (a resumed run goes on counting)
  int max_failures = 3;                         ///< worker jobs failing in a row before no more are submitted
  std::string log_dir;                          ///< where their logs go (a folder the nodes share)
  double idle_exit_seconds = 120;               ///< a worker without a job this long ends its job (0: never)
  CommandRunner run = RunCommand;               ///< runs sbatch, squeue, scontrol and scancel
  std::function<void(const std::string&)> say;  ///< progress: submitted, started, ended
};

/// The run's workers on Slurm. Thread-safe. Destroying it stops the
/// background tending and cancels every job not yet ended.
class SlurmWorkers {
 public:
  explicit SlurmWorkers(SlurmWorkersOptions options);
  ~SlurmWorkers();
  SlurmWorkers(const SlurmWorkers&) = delete;
  SlurmWorkers& operator=(const SlurmWorkers&) = delete;

  /// One round: reads the states of the jobs not yet ended (saying what
  /// changed), then submits one job per worker missing: while fewer than
  /// max_workers are pending or running and fewer than `outstanding` (the
  /// queue's jobs for their class). An Error names the command that failed
  /// with its stderr; what was done before it stands. Once max_failures jobs
  /// in a row failed (FAILED, BOOT_FAIL, OUT_OF_MEMORY: a node without the
  /// program, a worker that cannot open the queue) none is submitted any
  /// more, and every round is an Error naming the last one's log.
  Status Tend(int outstanding);

  /// Calls Tend every `poll_seconds` on a thread, with the queue's
  /// Outstanding(machine_class), until Stop or destruction; its errors are
  /// said (each once in a row). `queue` must outlive this object.
  void TendInBackground(JobQueue& queue, const std::string& machine_class, double poll_seconds = 2);

  /// Stops tending, cancels the jobs not yet ended (scancel), and reads
  /// their states until they end or `wait_seconds` pass. Idempotent. An
  /// Error names what failed; every job was asked to end regardless.
  Status Stop(double wait_seconds = 30);

  /// Every worker submitted so far, in order, with its last known state.
  std::vector<SlurmWorker> Workers() const;

 private:
  Status Refresh();  // reads the states of live jobs; mu_ held
  Status Submit();   // one more worker; mu_ held
  void Say(const std::string& text) const;

  SlurmWorkersOptions options_;
  mutable std::mutex mu_;
  std::vector<SlurmWorker> workers_;
  std::thread tender_;
  std::atomic<bool> stop_{false};
  std::mutex stop_mu_;  // one Stop at a time (the run's end and an interrupt may race)
  bool stopped_ = false;
};

}  // namespace accelopt::service
