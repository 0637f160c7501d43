#pragma once
/// Where the engine finds its parts and keeps its data.

#include <string>

#include "core/result.h"

namespace accelopt {

/// Directory holding the running executable (resolved from /proc/self/exe).
std::string ExecutableDir();

/// The child-side harness binary: $ACCELOPT_HARNESS, else `accelopt-harness`
/// beside the running executable.
std::string HarnessPath();

/// The program `name` as the shell would find it: `name` itself when it holds
/// a slash, else the first executable file of that name in $PATH; "" when none.
std::string FindProgram(const std::string& name);

/// A data file or folder shipped with the project (suite, prices, prompts): in
/// an unpacked dist (core/dist.h), <root>/<relative>; else the first of ./<relative>
/// and <executable dir>/../<relative> that exists; ./<relative> when none does.
std::string ProjectDataPath(const std::string& relative);

/// The task suite: $ACCELOPT_SUITE, else ProjectDataPath("suite").
std::string DefaultSuiteDir();

/// Per-user data (hardware profiles): $ACCELOPT_HOME, else
/// $XDG_DATA_HOME/accelopt, else ~/.local/share/accelopt.
std::string DataDir();

/// Scratch space for builds and evaluations: $ACCELOPT_CACHE, else
/// $XDG_CACHE_HOME/accelopt, else ~/.cache/accelopt.
std::string CacheDir();

/// Creates `dir` if needed and checks that a file can be written in it; the
/// Error names the folder and the system's reason.
Status CheckWritableDir(const std::string& dir);

}  // namespace accelopt
