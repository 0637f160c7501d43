#pragma once
/// Running an untrusted program in a child process with limits.
///
/// The child gets its own process group and working directory, stdin from
/// /dev/null, captured (and truncated) stdout/stderr, resource limits, no core
/// dumps, and dies with the engine. Whatever the child does, RunSandboxed
/// returns: crashes, hangs and floods are fields of the outcome. Only a failure
/// to start the child is an Error. SandboxedProcess is the same child for a
/// caller that talks to it while it runs (the evaluation monitor).

#include <sys/types.h>

#include <memory>
#include <string>
#include <vector>

#include "core/result.h"

namespace accelopt::eval {

class SandboxCgroup;

struct SandboxLimits {
  double wall_seconds = 60;             ///< killed (whole process group) after this
  double cpu_seconds = 0;               ///< RLIMIT_CPU; 0 = wall_seconds x cores + 1
  long address_space_bytes = 8L << 30;  ///< RLIMIT_AS; 0 = unlimited
  long file_size_bytes = 1L << 30;      ///< RLIMIT_FSIZE
  long max_processes = 0;               ///< RLIMIT_NPROC (ignored for root); 0 = unchanged
  size_t capture_bytes = 64 << 10;      ///< kept of stdout and of stderr each
};

/// How far the child is kept from the machine beyond limits (issue 24): its
/// own PID, IPC, mount and network namespaces (it sees no other process, a
/// /proc of its own, no System V IPC or socket of anyone else's, and what it
/// creates there dies with it) and a user of its own (it cannot open, signal,
/// trace or re-schedule the engine's processes, nor change the engine's files).
struct SandboxIsolation {
  bool namespaces = false;  ///< own PID, IPC, mount and network namespaces, a fresh /proc
  bool own_user = false;    ///< runs as a user of its own, without capabilities
  /// That user is one of a user namespace of its own, mapped to the engine's
  /// user outside (an engine that is not root, or root of a container whose
  /// user namespace does not hold the sandbox's uids): the kernel can name
  /// nothing outside its namespaces, but files the engine's user may read are
  /// readable to it while it loads.
  bool user_namespace = false;
  /// What the machine refused, in words ("" when fully isolated): the child
  /// still runs, and the caller must not call its results trusted.
  std::string refused;
  /// How its memory, tasks and cores are limited: "cgroup v1 accelopt-12-0:
  /// memory 2048 MiB, 256 tasks, cores 0" where a group of its own counts
  /// everything its processes allocate, else "per process (rlimits): " and why
  /// no group could be made. Not a condition of trust: the filter lets the
  /// kernel's process start no other process, so its limits count it all.
  std::string limits;
  bool full() const { return refused.empty(); }
};

/// The processes and threads an isolated child may have at once (its cgroup's
/// pids.max) unless SandboxLimits::max_processes says otherwise.
constexpr long kSandboxDefaultTasks = 512;

/// The first uid the isolated children run as; each child takes
/// kSandboxUidBase + its host pid modulo 65536 (no two running children share
/// one) where the engine is root of a user namespace that holds those uids;
/// elsewhere it is kSandboxUidBase in a user namespace of its own.
constexpr unsigned kSandboxUidBase = 0x7ff00000u;

struct SandboxRequest {
  std::vector<std::string> argv;  ///< argv[0] is the program path
  std::string workdir;            ///< the child's working directory
  /// Extra NAME=VALUE, added to the engine's environment (isolated: to the
  /// part of it a kernel needs, PATH, locale and the OpenMP/BLAS settings).
  std::vector<std::string> env;
  std::vector<int> cpus;         ///< pin the child (and its threads) to these cores; empty = unchanged
  std::vector<int> inherit_fds;  ///< passed to the child as fds 3, 4, ... (at most 8)
  SandboxLimits limits;
  /// Isolate the child (SandboxIsolation): its own namespaces and its own
  /// user (another uid where the engine runs as root, else a user namespace). What the machine refuses is said in
  /// SandboxedProcess::isolation(), never silently dropped.
  bool isolate = false;
};

struct SandboxOutcome {
  int exit_code = -1;      ///< -1 when killed by a signal
  int term_signal = 0;     ///< signal that ended it, 0 if it exited
  bool timed_out = false;  ///< the wall limit was hit and the group killed
  double wall_seconds = 0;
  double cpu_seconds = 0;  ///< user + system, all threads
  long max_rss_kb = 0;
  std::string out;  ///< stdout, truncated to capture_bytes
  std::string err;  ///< stderr, truncated to capture_bytes
  bool out_truncated = false, err_truncated = false;
  bool exited_cleanly() const { return !timed_out && term_signal == 0 && exit_code == 0; }
};

/// Whether this machine lets the engine isolate a child, found by starting
/// /bin/true isolated once (cached): what `accelopt targets` shows.
const SandboxIsolation& ProbeIsolation();

/// Runs the request to completion. Blocks. Thread-safe (each call owns its child).
Result<SandboxOutcome> RunSandboxed(const SandboxRequest& request);

/// A running sandboxed child. The owner reads its output while it runs
/// (DrainOutput when OutputFds are readable) and ends it with Wait; the
/// destructor kills and reaps a child that was not waited for.
/// Thread-compatible: one thread drives it.
class SandboxedProcess {
 public:
  /// Starts the child; an Error when it could not be started (names the step that failed).
  static Result<std::unique_ptr<SandboxedProcess>> Start(const SandboxRequest& request);
  ~SandboxedProcess();
  SandboxedProcess(const SandboxedProcess&) = delete;
  SandboxedProcess& operator=(const SandboxedProcess&) = delete;

  pid_t pid() const { return pid_; }
  /// Readable once the child has exited; -1 when the kernel has no pidfds.
  int pidfd() const { return pidfd_; }
  /// How far the child was isolated (request.isolate), as it actually started.
  const SandboxIsolation& isolation() const { return isolation_; }
  /// Steady-clock seconds (core/clock.h) at which the wall limit runs out.
  double deadline() const { return deadline_; }
  /// The stdout and stderr pipes still open, to poll for input.
  std::vector<int> OutputFds() const;
  /// Reads what stdout and stderr hold, without blocking.
  void DrainOutput();
  /// Kills the whole process group (the outcome then says timed_out when asked).
  void Kill(bool timed_out);
  /// Waits for the child to end (killing it at the deadline), reaps it and
  /// returns the outcome. Call once.
  SandboxOutcome Wait();

 private:
  SandboxedProcess() = default;
  void EndNamespace();
  void EndCgroup();
  struct Stream {
    int fd = -1;
    std::string* text = nullptr;
    bool* truncated = nullptr;
  };
  pid_t pid_ = -1;
  pid_t init_ = -1;  ///< the idle init of the child's PID namespace; killing it ends all there
  int pidfd_ = -1;
  SandboxIsolation isolation_;
  std::unique_ptr<SandboxCgroup> cgroup_;  ///< its control group, where one could be made
  double start_ = 0, deadline_ = 0;
  size_t capture_bytes_ = 0;
  bool reaped_ = false;
  Stream streams_[2];
  SandboxOutcome outcome_;
};

/// Keeps the first `cap` bytes of a log and says that the rest was cut.
std::string TruncateLog(std::string text, size_t cap);

/// "SIGSEGV (segmentation fault)" etc.
std::string SignalName(int sig);

}  // namespace accelopt::eval
