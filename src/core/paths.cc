#include "core/paths.h"

#include <cstdlib>
#include <filesystem>

namespace accelopt {
namespace fs = std::filesystem;

namespace {

std::string EnvOr(const char* name, const std::string& fallback) {
  const char* value = std::getenv(name);
  return value && *value ? std::string(value) : fallback;
}

std::string Home() { return EnvOr("HOME", "/tmp"); }

}  // namespace

std::string ExecutableDir() {
  std::error_code ec;
  auto exe = fs::read_symlink("/proc/self/exe", ec);
  return ec ? std::string(".") : exe.parent_path().string();
}

std::string HarnessPath() {
  return EnvOr("ACCELOPT_HARNESS", (fs::path(ExecutableDir()) / "accelopt-harness").string());
}

std::string ProjectDataPath(const std::string& relative) {
  std::error_code ec;
  if (fs::exists(relative, ec)) return fs::absolute(relative).string();
  auto beside = fs::path(ExecutableDir()).parent_path() / relative;
  if (fs::exists(beside, ec)) return beside.string();
  return relative;
}

std::string DefaultSuiteDir() {
  if (const char* env = std::getenv("ACCELOPT_SUITE"); env && *env) return env;
  return ProjectDataPath("suite");
}

std::string DataDir() {
  if (const char* env = std::getenv("ACCELOPT_HOME"); env && *env) return env;
  return EnvOr("XDG_DATA_HOME", Home() + "/.local/share") + "/accelopt";
}

std::string CacheDir() {
  if (const char* env = std::getenv("ACCELOPT_CACHE"); env && *env) return env;
  return EnvOr("XDG_CACHE_HOME", Home() + "/.cache") + "/accelopt";
}

}  // namespace accelopt
