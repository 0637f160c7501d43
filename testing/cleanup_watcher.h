#pragma once
/// A process that cleans up after a throwaway server (tests only): of its own
/// session (a ^C to the tests does not reach it), it waits for the end of a
/// pipe only this process writes to, then runs a shell script (stop the
/// server, remove its folder). The end comes at Finish, or when this process
/// dies however it dies, so a killed test program leaves nothing behind.

#include <sys/types.h>

#include <string>

#include "core/result.h"

namespace accelopt::testing {

class CleanupWatcher {
 public:
  CleanupWatcher() = default;
  ~CleanupWatcher() { Finish(); }
  CleanupWatcher(const CleanupWatcher&) = delete;
  CleanupWatcher& operator=(const CleanupWatcher&) = delete;

  /// Starts the watcher, which runs `script` with /bin/sh in / when its pipe
  /// ends. `what` names the server in an Error ("postgres server").
  Status Start(const std::string& what, const std::string& script);
  /// Ends the pipe and waits for the script to finish (idempotent).
  void Finish();

 private:
  pid_t pid_ = -1;
  int fd_ = -1;
};

}  // namespace accelopt::testing
