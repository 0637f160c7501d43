#pragma once
/// Running a program and reading what it printed, without a shell: the
/// arguments go to it as they are, so no path or value needs quoting.

#include <string>
#include <vector>

#include "core/result.h"

namespace accelopt {

/// What a command printed and how it ended.
struct CommandOutput {
  int exit_code = 0;  ///< 128 + the signal when a signal ended it
  std::string out;
  std::string err;
};

/// Runs argv (argv[0] found on PATH) in a child process that inherits this
/// process's environment, stdin from /dev/null, and returns what it printed;
/// an Error only when it could not be run at all. Blocks.
Result<CommandOutput> RunCommand(const std::vector<std::string>& argv);

}  // namespace accelopt
