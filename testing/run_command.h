#pragma once
/// Runs the built `accelopt` binary as a user would (tests only).

#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>

#include "testing/test_paths.h"

namespace accelopt::testing {

struct CommandRun {
  int exit_code;
  std::string out;  ///< stdout and stderr together
};

/// `command` run through the shell, its stderr with its stdout.
inline CommandRun RunShell(const std::string& shell_command) {
  std::string command = shell_command + " 2>&1";
  FILE* pipe = popen(command.c_str(), "r");
  std::string out;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, pipe)) > 0) out.append(buf, n);
  int status = pclose(pipe);
  return {WEXITSTATUS(status), out};
}

/// `args` are appended to the binary's path and run through the shell.
inline CommandRun Accelopt(const std::string& args) { return RunShell(AccelBinary() + " " + args); }

/// `accelopt ARGS` started in the background (through the shell, which execs
/// it, so pid() is the engine's), its output going to `log_path`.
class BackgroundAccelopt {
 public:
  BackgroundAccelopt(const std::string& args, std::string log_path) : log_(std::move(log_path)) {
    std::string command = "exec " + AccelBinary() + " " + args + " >" + log_ + " 2>&1";
    pid_ = fork();
    if (pid_ == 0) {
      execl("/bin/sh", "sh", "-c", command.c_str(), static_cast<char*>(nullptr));
      _exit(127);
    }
  }
  pid_t pid() const { return pid_; }
  /// Waits for the process; its exit code (128 + the signal when a signal ended it) and output.
  CommandRun Wait() {
    int status = 0;
    waitpid(pid_, &status, 0);
    std::string out;
    if (FILE* f = fopen(log_.c_str(), "r")) {
      char buf[4096];
      size_t n;
      while ((n = fread(buf, 1, sizeof buf, f)) > 0) out.append(buf, n);
      fclose(f);
    }
    return {WIFSIGNALED(status) ? 128 + WTERMSIG(status) : WEXITSTATUS(status), out};
  }

 private:
  std::string log_;
  pid_t pid_ = -1;
};

}  // namespace accelopt::testing
