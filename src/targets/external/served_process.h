#pragma once
/// A persistent evaluator process: one JSON request per line on its stdin,
/// one JSON answer per line on its stdout (docs/external-protocol.md,
/// "Persistent evaluators"). Its stderr is kept (the last few KB) for error
/// messages. Killed with its process group when destroyed.

#include <sys/types.h>

#include <memory>
#include <string>
#include <vector>

#include "core/result.h"

namespace accelopt::external {

class ServedProcess {
 public:
  /// Starts `argv` (argv[0] a path) in `workdir`; an Error when it cannot start.
  static Result<std::unique_ptr<ServedProcess>> Start(const std::vector<std::string>& argv, const std::string& workdir);
  ~ServedProcess();
  ServedProcess(const ServedProcess&) = delete;
  ServedProcess& operator=(const ServedProcess&) = delete;

  /// Sends one line and waits up to `timeout_seconds` for one line back. An
  /// Error (the process is then killed) when it ends, closes its output, or
  /// does not answer in time; the message ends with its last stderr output.
  Result<std::string> Exchange(const std::string& line, double timeout_seconds);
  /// False once it failed: a new one must be started.
  bool alive() const { return pid_ > 0; }

 private:
  ServedProcess() = default;
  void Kill();
  std::string StderrTail() const;
  pid_t pid_ = -1;
  int in_ = -1, out_ = -1, err_ = -1;
  std::string pending_;  // stdout read past the last answer
  std::string stderr_;   // the last few KB of stderr
};

}  // namespace accelopt::external
