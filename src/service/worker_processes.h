#pragma once
/// service: `accelopt worker` processes a run starts on this machine itself
/// (`optimize --workers N`), and stops when it ends.

#include <sys/types.h>

#include <string>
#include <vector>

#include "core/result.h"

namespace accelopt::service {

/// Worker processes started by this process. Destroying it stops them:
/// SIGTERM (a worker finishes the job it measures, then exits), then, after
/// `grace_seconds`, SIGKILL.
class WorkerProcesses {
 public:
  /// Starts `count` processes of `program` with `arguments` followed by
  /// `--name <name_prefix>-<i>`; each one's stdout and stderr go to
  /// `<log_dir>/<name_prefix>-<i>.log`. An Error names what could not be
  /// started; the ones already started are stopped.
  static Result<WorkerProcesses> Start(const std::string& program, const std::vector<std::string>& arguments,
                                       int count, const std::string& name_prefix, const std::string& log_dir);
  WorkerProcesses(WorkerProcesses&& other) noexcept : pids_(std::move(other.pids_)), logs_(std::move(other.logs_)) {}
  WorkerProcesses(const WorkerProcesses&) = delete;
  ~WorkerProcesses() { Stop(); }

  /// Stops them all and waits for them (idempotent).
  void Stop(double grace_seconds = 30);
  /// Their log files, in order.
  const std::vector<std::string>& logs() const { return logs_; }
  /// Those that exited already, with how ("w-1: exit 1", "w-2: signal 9"); reaps them.
  std::vector<std::string> Exited();

 private:
  WorkerProcesses() = default;
  std::vector<pid_t> pids_;
  std::vector<std::string> logs_;
};

}  // namespace accelopt::service
