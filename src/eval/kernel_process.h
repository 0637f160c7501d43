#pragma once
/// The monitor's side of a kernel process (DESIGN.md section 5, "two
/// processes, two roles"; the protocol is eval/protocol.h).
///
/// The monitor starts accelopt-harness in the sandbox and gives it its
/// arguments as shared memory sealed against resizing: inputs it can only read,
/// outputs it can write. From then on the process runs only while one command
/// runs: the monitor prepares the arguments while it is stopped, releases it,
/// and sees it stopped again after the command returned. The monitor times
/// every command with its own clock, from the release to the sight of that
/// stop, and reads the CPU time of each of the process's threads at every
/// release, so CPU used outside call windows is measured, not guessed. Every
/// figure that decides a verdict stays in this process.

#include <sys/types.h>

#include <cstddef>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/result.h"
#include "eval/protocol.h"
#include "eval/sandbox.h"
#include "eval/shared_memory.h"

namespace accelopt::eval {

/// Where each argument sits in its memory: page-aligned, with the slack up to
/// the next page after each one (where a write past the end lands).
struct ArgumentLayout {
  std::vector<protocol::ArgumentSlot> inputs, outputs;
  size_t inputs_bytes = 0, outputs_bytes = 0;

  /// Lays out arguments of these sizes (bytes), inputs and outputs apart.
  static ArgumentLayout For(const std::vector<size_t>& input_bytes, const std::vector<size_t>& output_bytes);
};

struct KernelProcessOptions {
  SandboxRequest sandbox;  ///< argv[0] = the harness; its inherited descriptors are set here
  ArgumentLayout layout;
  bool seccomp = true;  ///< the harness installs its system-call filters
  int cores = 1;        ///< cores the process may run on (for the CPU accounting)
  /// The library Load will be given, copied here into sealed memory and
  /// handed to the harness as a descriptor (protocol::kLibraryFd); "" = Load
  /// passes the path itself.
  std::string library;
};

/// What one command cost, as the monitor measured it.
struct CommandTiming {
  double seconds = 0;  ///< from the release of the stopped process to the sight of it stopped again after returning
};

/// How a process that did not finish its command ended.
struct ProcessFailure {
  enum class Kind {
    kEnded,            ///< it exited or was killed by a signal (outcome says how)
    kTimedOut,         ///< the wall-clock limit ran out; it was killed (detail: when, if not during a command)
    kStoppedItself,    ///< it stopped during a command without finishing it
    kTamperedControl,  ///< the control memory changed where only the monitor and the harness write
  };
  Kind kind = Kind::kEnded;
  std::string detail;       ///< what it did, in words (for the last three kinds)
  protocol::Report report;  ///< what the harness said about it (untrusted; explains only)
  SandboxOutcome outcome;   ///< filled once the process is reaped
};

class KernelProcess {
 public:
  /// Creates the memories, starts the harness and waits until it is ready
  /// (stopped, its arguments mapped). An Error is the engine's failure
  /// (memory, the sandbox); a harness that dies during setup is a failure (failed()).
  static Result<std::unique_ptr<KernelProcess>> Start(KernelProcessOptions options);
  ~KernelProcess();
  KernelProcess(const KernelProcess&) = delete;
  KernelProcess& operator=(const KernelProcess&) = delete;

  /// The monitor's writable view of argument i. Valid while this object lives.
  char* input(size_t i) const;
  char* output(size_t i) const;
  const ArgumentLayout& layout() const { return options_.layout; }
  pid_t pid() const { return process_->pid(); }
  /// Where the harness mapped argument i, as it reported before the kernel was loaded.
  const protocol::Layout& mapped_at() const { return mapped_at_; }

  /// The monitor begins preparing this process's next command: from now until
  /// shortly after its release, a thread watches for its end spinning (at idle
  /// priority), so that a short command's end is seen at once. Call it right
  /// before preparing, and only for the process that runs next: a spinner left
  /// on while another process's command runs would slow that one.
  void Prepare();

  /// An empty command: the handshake alone (release, "done", stop seen), timed
  /// like a call. Before Load, no kernel code can influence it. Nothing when
  /// the process failed (failed()).
  Result<std::optional<CommandTiming>> Noop();
  /// Loads the kernel. True when loaded; false when the process failed (failed()).
  Result<bool> Load(const std::string& library, const std::string& symbol);
  /// Runs one call of the kernel on the arguments as they are. The timing when
  /// the call returned and the process stopped; nothing when it failed (failed()).
  Result<std::optional<CommandTiming>> Call();
  /// Ends the process (no destructors run in it) and returns its outcome
  /// (the same one when called again). No command runs after it.
  SandboxOutcome Finish();

  /// How far the process was kept from the machine (eval/sandbox.h), as it started.
  const SandboxIsolation& isolation() const { return isolation_; }
  /// Set once a command did not finish; the process is then ended and reaped.
  const std::optional<ProcessFailure>& failed() const { return failure_; }
  /// CPU time the process's threads used outside its commands (a thread that
  /// worked longer than its command lasted, release to stop), summed over the
  /// commands run so far but the last; Finish() adds the last.
  double outside_cpu_seconds() const { return outside_cpu_seconds_; }

 private:
  SandboxIsolation isolation_;
  explicit KernelProcess(KernelProcessOptions options);
  Result<std::optional<CommandTiming>> Run(protocol::Command command);
  Result<bool> WaitForStop(const std::string& late, bool poll_once = false, bool consume = true);
  void Arm(uint32_t sequence);
  Result<double> ProcessCpuSeconds() const;
  Status SettleCpu();
  void Fail(ProcessFailure::Kind kind, std::string detail);
  protocol::ControlBlock& control() const;

  class DoneWatcher;
  KernelProcessOptions options_;
  SharedMemory inputs_, outputs_, control_;
  std::unique_ptr<SandboxedProcess> process_;
  std::unique_ptr<DoneWatcher> watcher_;
  clockid_t cpu_clock_{};
  uint32_t sequence_ = 0;
  uint32_t armed_for_ = 0;      // the sequence the watcher watches for (0: none)
  double cpu_at_release_ = -1;  // the process's CPU time at the last release (-1: none yet)
  double last_seconds_ = 0;     // the duration of the command released then
  double outside_cpu_seconds_ = 0;
  std::map<pid_t, double> thread_cpu_;  // each thread's CPU time at the last release
  protocol::Layout mapped_at_;
  std::optional<ProcessFailure> failure_;
  std::optional<SandboxOutcome> finished_;
};

}  // namespace accelopt::eval
