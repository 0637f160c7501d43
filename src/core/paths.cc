#include "core/paths.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "core/dist.h"

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

std::string FindProgram(const std::string& name) {
  if (name.empty()) return "";
  if (name.find('/') != std::string::npos) return access(name.c_str(), X_OK) == 0 ? name : "";
  const char* path = std::getenv("PATH");
  std::string dirs = path ? path : "/usr/local/bin:/usr/bin:/bin";
  for (size_t start = 0; start <= dirs.size();) {
    size_t end = dirs.find(':', start);
    if (end == std::string::npos) end = dirs.size();
    const std::string dir = end > start ? dirs.substr(start, end - start) : ".";
    const std::string candidate = dir + "/" + name;
    std::error_code ec;
    if (fs::is_regular_file(candidate, ec) && access(candidate.c_str(), X_OK) == 0) return candidate;
    start = end + 1;
  }
  return "";
}

namespace {

std::string DistRootFor(const std::string& executable_dir) {
  std::error_code ec;
  const fs::path root = fs::path(executable_dir).parent_path();
  return fs::is_regular_file(root / kDistMarker, ec) ? root.string() : std::string();
}

}  // namespace

std::string DistRoot() { return DistRootFor(ExecutableDir()); }

std::string ProjectDataPathFor(const std::string& executable_dir, const std::string& relative) {
  std::error_code ec;
  if (const std::string root = DistRootFor(executable_dir); !root.empty()) {
    auto shipped = fs::path(root) / relative;
    if (fs::exists(shipped, ec)) return shipped.string();
  }
  if (fs::exists(relative, ec)) return fs::absolute(relative).string();
  auto beside = fs::path(executable_dir).parent_path() / relative;
  if (fs::exists(beside, ec)) return beside.string();
  return relative;
}

std::string ProjectDataPath(const std::string& relative) { return ProjectDataPathFor(ExecutableDir(), relative); }

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

Status CheckWritableDir(const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return Error{"cannot create folder " + dir + ": " + ec.message()};
  std::string probe = dir + "/.write-test-" + std::to_string(getpid());
  int fd = open(probe.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) return Error{"cannot write in folder " + dir + ": " + std::strerror(errno)};
  close(fd);
  unlink(probe.c_str());
  return Ok{};
}

}  // namespace accelopt
