#pragma once
/// Where the engine finds its parts and keeps its data.

#include <string>

namespace accelopt {

/// Directory holding the running executable (resolved from /proc/self/exe).
std::string ExecutableDir();

/// The child-side harness binary: $ACCELOPT_HARNESS, else `accelopt-harness`
/// beside the running executable.
std::string HarnessPath();

/// The task suite: $ACCELOPT_SUITE, else the first of ./suite and
/// <executable dir>/../suite that exists (the build tree sits in the checkout).
std::string DefaultSuiteDir();

/// Per-user data (hardware profiles): $ACCELOPT_HOME, else
/// $XDG_DATA_HOME/accelopt, else ~/.local/share/accelopt.
std::string DataDir();

/// Scratch space for builds and evaluations: $ACCELOPT_CACHE, else
/// $XDG_CACHE_HOME/accelopt, else ~/.cache/accelopt.
std::string CacheDir();

}  // namespace accelopt
