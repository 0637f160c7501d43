#include "eval/cgroup.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <set>
#include <sstream>
#include <thread>

namespace accelopt::eval {
namespace {

constexpr const char* kRoot = "/sys/fs/cgroup";

bool Exists(const std::string& path) {
  struct stat st {};
  return stat(path.c_str(), &st) == 0;
}

std::string ReadLine(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

Status WriteValue(const std::string& path, const std::string& value) {
  int fd = open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) return Error{"cannot open " + path + ": " + std::strerror(errno)};
  ssize_t n = write(fd, value.data(), value.size());
  int err = errno;
  close(fd);
  if (n != static_cast<ssize_t>(value.size()))
    return Error{"cannot write '" + value + "' to " + path + ": " + std::strerror(err)};
  return Ok{};
}

// The engine's group in each hierarchy, from /proc/self/cgroup ("0::/x" for
// the unified one, "4:memory:/x" for a v1 controller).
std::string OwnGroup(const std::string& controller) {
  std::ifstream in("/proc/self/cgroup");
  for (std::string line; std::getline(in, line);) {
    size_t a = line.find(':'), b = line.find(':', a + 1);
    if (a == std::string::npos || b == std::string::npos) continue;
    std::stringstream names(line.substr(a + 1, b - a - 1));
    for (std::string name; std::getline(names, name, ',');)
      if (name == controller) return line.substr(b + 1);
    if (controller.empty() && b == a + 1) return line.substr(b + 1);
  }
  return "";
}

std::string CpuList(const std::vector<int>& cpus) {
  std::string out;
  for (int cpu : cpus) out += (out.empty() ? "" : ",") + std::to_string(cpu);
  return out;
}

bool Lists(const std::string& words, const std::string& word) {
  std::stringstream in(words);
  for (std::string w; in >> w;)
    if (w == word) return true;
  return false;
}

std::string UniqueName() {
  static std::atomic<unsigned> counter{0};
  return "accelopt-" + std::to_string(getpid()) + "-" + std::to_string(counter++);
}

void RemoveFolder(const std::string& folder) {
  // The last processes of a killed namespace may take a moment to leave.
  for (int attempt = 0; attempt < 400; ++attempt) {
    if (rmdir(folder.c_str()) == 0 || errno == ENOENT) return;
    if (errno != EBUSY) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

}  // namespace

// Groups an engine that was killed left behind (its pid no longer runs): an
// empty group is removed, one that still holds processes is left alone.
void RemoveStaleCgroups(const std::string& parent) {
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(parent, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind("accelopt-", 0) != 0) continue;
    const long pid = std::strtol(name.c_str() + 9, nullptr, 10);
    if (pid > 0 && pid != getpid() && kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH)
      rmdir(entry.path().c_str());
  }
}

Result<std::unique_ptr<SandboxCgroup>> SandboxCgroup::Create(const CgroupLimits& limits) {
  std::unique_ptr<SandboxCgroup> group(new SandboxCgroup());
  const std::string name = UniqueName();
  std::string summary;
  if (limits.memory_bytes > 0) summary += "memory " + std::to_string(limits.memory_bytes >> 20) + " MiB";
  if (limits.max_tasks > 0) summary += (summary.empty() ? "" : ", ") + std::to_string(limits.max_tasks) + " tasks";
  auto make = [&](const std::string& parent) -> Result<std::string> {
    if (!Exists(parent)) return Error{"the engine's group " + parent + " is not mounted here"};
    {
      static std::mutex mu;
      static std::set<std::string> swept;  // once per engine and parent
      std::lock_guard lock(mu);
      if (swept.insert(parent).second) RemoveStaleCgroups(parent);
    }
    std::string folder = parent + "/" + name;
    if (mkdir(folder.c_str(), 0755) != 0)
      return Error{"cannot make " + folder + ": " + std::strerror(errno)};
    group->folders_.push_back(folder);
    group->procs_files_.push_back(folder + "/cgroup.procs");
    return folder;
  };

  const std::string unified = std::string(kRoot) + OwnGroup("");
  if (Exists(std::string(kRoot) + "/cgroup.controllers") && !OwnGroup("").empty()) {
    auto folder = make(unified == std::string(kRoot) + "/" ? kRoot : unified);
    if (!folder) return folder.error();
    std::string controllers = ReadLine(*folder + "/cgroup.controllers");
    if (!Lists(controllers, "memory") || !Lists(controllers, "pids")) {
      // The engine's group must hand the controllers down to its children.
      (void)WriteValue(unified + "/cgroup.subtree_control", "+memory +pids +cpuset");
      controllers = ReadLine(*folder + "/cgroup.controllers");
      if (!Lists(controllers, "memory") || !Lists(controllers, "pids"))
        return Error{"cgroup v2: the engine's group " + unified +
                     " does not give its children the memory and pids controllers (it holds processes itself, "
                     "or they are not delegated to this user)"};
    }
    if (limits.memory_bytes > 0) {
      if (auto s = WriteValue(*folder + "/memory.max", std::to_string(limits.memory_bytes)); !s) return s.error();
      (void)WriteValue(*folder + "/memory.swap.max", "0");
    }
    if (limits.max_tasks > 0)
      if (auto s = WriteValue(*folder + "/pids.max", std::to_string(limits.max_tasks)); !s) return s.error();
    if (!limits.cpus.empty() && Lists(controllers, "cpuset") &&
        WriteValue(*folder + "/cpuset.cpus", CpuList(limits.cpus)))
      summary += ", cores " + CpuList(limits.cpus);
    group->description_ = "cgroup v2 " + name + ": " + summary;
    return group;
  }

  // cgroup v1: one group per controller, under the engine's group in that hierarchy.
  auto make_v1 = [&](const std::string& controller) -> Result<std::string> {
    const std::string own = OwnGroup(controller);
    if (own.empty()) return Error{"cgroup v1: no " + controller + " controller is mounted"};
    return make(std::string(kRoot) + "/" + controller + (own == "/" ? "" : own));
  };
  auto memory = make_v1("memory");
  if (!memory) return memory.error();
  auto pids = make_v1("pids");
  if (!pids) return pids.error();
  if (limits.memory_bytes > 0) {
    if (auto s = WriteValue(*memory + "/memory.limit_in_bytes", std::to_string(limits.memory_bytes)); !s)
      return s.error();
    (void)WriteValue(*memory + "/memory.memsw.limit_in_bytes", std::to_string(limits.memory_bytes));
  }
  if (limits.max_tasks > 0)
    if (auto s = WriteValue(*pids + "/pids.max", std::to_string(limits.max_tasks)); !s) return s.error();
  if (const std::string own = OwnGroup("cpuset"); !limits.cpus.empty() && !own.empty()) {
    const std::string parent = std::string(kRoot) + "/cpuset" + (own == "/" ? "" : own);
    if (auto folder = make(parent)) {
      // A v1 cpuset takes no process before it has cores and memory nodes.
      if (WriteValue(*folder + "/cpuset.mems", ReadLine(parent + "/cpuset.mems")) &&
          WriteValue(*folder + "/cpuset.cpus", CpuList(limits.cpus)))
        summary += ", cores " + CpuList(limits.cpus);
      else
        return Error{"cgroup v1: cannot give " + *folder + " the cores " + CpuList(limits.cpus)};
    }
  }
  group->description_ = "cgroup v1 " + name + ": " + summary;
  return group;
}

SandboxCgroup::~SandboxCgroup() {
  for (const auto& folder : folders_) RemoveFolder(folder);
}

}  // namespace accelopt::eval
