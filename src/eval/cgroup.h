#pragma once
/// A control group of one sandboxed child (issue 24): the memory, the number
/// of processes and threads, and the cores of everything the child starts are
/// counted and limited together, not per process. Both hierarchies are served:
/// the unified one (cgroup v2) where its controllers are available, else the
/// memory, pids and cpuset controllers of cgroup v1. The group is made under
/// the engine's own group (so it stays within the engine's limits) and removed
/// when the child's processes are gone.

#include <memory>
#include <string>
#include <vector>

#include "core/result.h"

namespace accelopt::eval {

struct CgroupLimits {
  long memory_bytes = 0;   ///< resident memory of all its processes; 0 = the engine's limit
  long max_tasks = 0;      ///< processes and threads together; 0 = unlimited
  std::vector<int> cpus;   ///< the cores its processes may run on; empty = the engine's
};

class SandboxCgroup {
 public:
  /// Makes the group with its limits; an Error says why none could be made
  /// (no writable hierarchy, a controller missing, the engine not allowed).
  static Result<std::unique_ptr<SandboxCgroup>> Create(const CgroupLimits& limits);
  ~SandboxCgroup();  ///< removes the group (waiting briefly for its last processes)
  SandboxCgroup(const SandboxCgroup&) = delete;
  SandboxCgroup& operator=(const SandboxCgroup&) = delete;

  /// The `cgroup.procs` files a starting child writes "0" to, to enter the
  /// group (one per v1 controller, one in v2); its descendants stay in it.
  const std::vector<std::string>& procs_files() const { return procs_files_; }
  /// The group's folders, one per hierarchy it was made in.
  const std::vector<std::string>& folders() const { return folders_; }
  /// "cgroup v2 accelopt-123-4: memory 8 GiB, 256 tasks, cores 0-1" (for the profile).
  const std::string& description() const { return description_; }

 private:
  SandboxCgroup() = default;
  std::vector<std::string> folders_, procs_files_;
  std::string description_;
};

/// Removes the empty groups under `parent` that an engine no longer running
/// left behind (named after its pid); SandboxCgroup::Create calls it once per
/// parent and engine.
void RemoveStaleCgroups(const std::string& parent);

}  // namespace accelopt::eval
