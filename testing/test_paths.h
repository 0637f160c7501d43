#pragma once
/// Where a test binary finds the project's files and its scratch home, found
/// at run time, not compiled in: a test binary runs from another folder or on
/// another machine (a bundle made by ../shared/tools/bundle-build.sh, whose
/// run.sh starts it from the bundled source tree).

#include <cstdlib>
#include <filesystem>
#include <string>

#include "core/paths.h"

namespace accelopt::testing {

/// The project's source tree (suite/, kernels/, demo/): $ACCELOPT_SOURCE_DIR;
/// else the working folder when it holds suite/; else the folder above the
/// binary's (a build folder inside the checkout); else src/ there (a bundle's
/// bin/ beside its src/). "" when none holds suite/.
inline std::string SourceDir() {
  if (const char* env = std::getenv("ACCELOPT_SOURCE_DIR"); env && *env) return env;
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path above = fs::path(ExecutableDir()).parent_path();
  for (const fs::path& dir : {fs::current_path(ec), above, above / "src"})
    if (!dir.empty() && fs::is_directory(dir / "suite", ec)) return fs::absolute(dir, ec).string();
  return "";
}

/// The tests' home for profiles, builds and scratch: $ACCELOPT_TEST_HOME,
/// else test-home beside the test binary.
inline std::string TestHome() {
  if (const char* env = std::getenv("ACCELOPT_TEST_HOME"); env && *env) return env;
  return ExecutableDir() + "/test-home";
}

/// The Chromium the browser tests drive: $ACCELOPT_CHROMIUM, else Debian's
/// (web/test/browser.mjs reads the same variable).
inline std::string ChromiumPath() {
  if (const char* env = std::getenv("ACCELOPT_CHROMIUM"); env && *env) return env;
  return "/usr/bin/chromium";
}

/// The accelopt binary: $ACCELOPT_BINARY, else accelopt beside the test binary.
inline std::string AccelBinary() {
  if (const char* env = std::getenv("ACCELOPT_BINARY"); env && *env) return env;
  return ExecutableDir() + "/accelopt";
}

}  // namespace accelopt::testing
