#pragma once
/// A throwaway one-node Slurm cluster for a test (tests only): munged with a
/// fresh key and its socket in a temporary folder, slurmctld and slurmd in
/// the foreground as children, with a generated slurm.conf (free ports, state,
/// spool and logs in that folder, one node with this machine's CPUs and one
/// GPU (gres gpu:1, a plain file for its device) in a partition named `test`). Stopped and removed when the object dies, or when
/// the test program dies without it (a watcher process).
///
/// Needs root (slurmd runs jobs as their users) and no systemd: this is how
/// CI runs. Client commands (sbatch, squeue, scancel) find the cluster by
/// SLURM_CONF=conf(). No accounting daemon: sacct does not work here.

#include <memory>
#include <string>
#include <vector>

#include "core/result.h"
#include "testing/cleanup_watcher.h"
#include "service/slurm_workers.h"

namespace accelopt::testing {

class SlurmCluster {
 public:
  /// True when munged, slurmctld, slurmd and the client commands are
  /// installed and this process is root; else the reason in `*why_not`.
  static bool Available(std::string* why_not);

  /// Starts the cluster; blocks until sinfo shows its node idle (at most
  /// `timeout_seconds`). An Error names the step that failed, with the logs.
  static Result<std::unique_ptr<SlurmCluster>> Start(double timeout_seconds = 60);

  /// Cancels the cluster's jobs, stops the daemons and removes the folder.
  ~SlurmCluster();
  SlurmCluster(const SlurmCluster&) = delete;
  SlurmCluster& operator=(const SlurmCluster&) = delete;

  /// The generated slurm.conf: SLURM_CONF for every client command.
  const std::string& conf() const { return conf_; }
  /// "SLURM_CONF='...'" to put before a shell command.
  std::string Env() const;
  const std::string& partition() const { return partition_; }
  const std::string& dir() const { return dir_; }
  /// Runs a client command (squeue, scancel, ...) against this cluster.
  Result<service::CommandOutput> Client(const std::vector<std::string>& argv) const;
  /// The ends of the daemons' logs, for a failure message.
  std::string Logs() const;

 private:
  SlurmCluster() = default;
  Status Spawn(const std::string& name, const std::vector<std::string>& argv);
  Status StartWatcher();
  void StopDaemons();

  std::string dir_;
  std::string conf_;
  std::string partition_ = "test";
  std::vector<int> pids_;  // munged, slurmctld, slurmd
  CleanupWatcher watcher_;  // cancels, stops and removes everything when this process ends it or dies
};

/// One cluster for the whole test program, started on first use and stopped
/// at exit. nullptr with the reason in `*why_not` when Slurm is not installed
/// or this is not root (a test then skips); a cluster that is installed but
/// does not start fails the calling test with its logs.
SlurmCluster* SharedSlurmCluster(std::string* why_not);

}  // namespace accelopt::testing
