#pragma once
/// Runs the built `accelopt` binary as a user would (tests only).

#include <stdio.h>
#include <sys/wait.h>

#include <string>

namespace accelopt::testing {

struct CommandRun {
  int exit_code;
  std::string out;  ///< stdout and stderr together
};

/// `args` are appended to the binary's path and run through the shell.
inline CommandRun Accelopt(const std::string& args) {
  std::string command = std::string(ACCELOPT_BINARY) + " " + args + " 2>&1";
  FILE* pipe = popen(command.c_str(), "r");
  std::string out;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, pipe)) > 0) out.append(buf, n);
  int status = pclose(pipe);
  return {WEXITSTATUS(status), out};
}

}  // namespace accelopt::testing
