#include "core/scratch.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <mutex>
#include <random>
#include <set>

namespace accelopt {
namespace fs = std::filesystem;
namespace {

constexpr const char* kOwnerFile = ".owner";
constexpr const char* kKeptFile = ".kept";  // asked to be kept: never swept

std::mutex& LiveMutex() {
  static std::mutex mu;
  return mu;
}
std::set<fs::path>& Live() {  // folders to remove on interruption
  static std::set<fs::path> live;
  return live;
}

// The pid a folder's name begins with; 0 when it has none.
pid_t PidInName(const std::string& name) {
  pid_t pid = 0;
  for (char c : name) {
    if (c < '0' || c > '9') break;
    pid = pid * 10 + (c - '0');
    if (pid > 1 << 22) return 0;
  }
  return pid;
}

bool WriteMarker(const fs::path& path) {
  int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0) return false;
  close(fd);
  return true;
}

bool OwnerIsGone(const fs::path& dir) {
  std::error_code ec;
  if (fs::exists(dir / kKeptFile, ec)) return false;
  int fd = open((dir / kOwnerFile).c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    // No lock file (yet, or from an older version): decide by the pid in the name.
    pid_t pid = PidInName(dir.filename().string());
    return pid > 0 && kill(pid, 0) != 0 && errno == ESRCH;
  }
  bool gone = flock(fd, LOCK_EX | LOCK_NB) == 0;
  close(fd);
  return gone;
}

}  // namespace

Result<std::unique_ptr<ScratchDir>> ScratchDir::Create(const fs::path& parent, const std::string& label, bool keep) {
  static std::atomic<int> counter{0};
  std::random_device entropy;
  fs::path dir = parent / (std::to_string(getpid()) + "." + std::to_string(counter++) + "." +
                           std::to_string(entropy() % 100000) + "-" + label);
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return Error{"cannot create scratch folder " + dir.string() + ": " + ec.message()};
  // Locked before it takes its name, so no sweeper ever finds it unlocked.
  const fs::path pending = dir / ".owner.pending";
  int fd = open(pending.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0 || flock(fd, LOCK_EX) != 0 || rename(pending.c_str(), (dir / kOwnerFile).c_str()) != 0 ||
      (keep && !WriteMarker(dir / kKeptFile))) {
    std::string why = std::strerror(errno);
    if (fd >= 0) close(fd);
    fs::remove_all(dir, ec);
    return Error{"cannot set up scratch folder " + dir.string() + ": " + why};
  }
  if (!keep) {
    std::lock_guard lock(LiveMutex());
    Live().insert(dir);
  }
  return std::unique_ptr<ScratchDir>(new ScratchDir(dir, fd, keep));
}

ScratchDir::ScratchDir(fs::path path, int lock_fd, bool keep)
    : path_(std::move(path)), lock_fd_(lock_fd), keep_(keep) {}

ScratchDir::~ScratchDir() {
  std::error_code ec;
  if (!keep_) {
    fs::remove_all(path_, ec);
    std::lock_guard lock(LiveMutex());
    Live().erase(path_);
  }
  close(lock_fd_);
}

void RemoveLiveScratchDirs() {
  std::lock_guard lock(LiveMutex());
  std::error_code ec;
  for (const auto& dir : Live()) fs::remove_all(dir, ec);
  Live().clear();
}

int SweepStaleScratchDirs(const fs::path& parent) {
  std::error_code ec;
  int removed = 0;
  for (fs::directory_iterator it(parent, ec), end; !ec && it != end; it.increment(ec)) {
    if (!it->is_directory(ec) || !OwnerIsGone(it->path())) continue;
    if (fs::remove_all(it->path(), ec) > 0 && !ec) ++removed;
  }
  return removed;
}

Result<fs::path> PublishBuild(const fs::path& dir, const fs::path& cached, const std::string& file) {
  std::error_code ec;
  fs::create_directories(cached.parent_path(), ec);
  fs::rename(dir, cached, ec);
  if (ec && !fs::exists(cached / file)) return Error{"cannot store build in " + cached.string() + ": " + ec.message()};
  if (ec) fs::remove_all(dir, ec);
  return cached;
}

}  // namespace accelopt
