#include "eval/device_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <thread>

#include "core/clock.h"

namespace accelopt::eval {
namespace {

// Opens (creating) a lock file every user may lock: created 0666 whatever the umask.
Result<int> OpenLockFile(const std::string& path) {
  const int fd = open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0666);
  if (fd < 0) return Error{"cannot open the device lock " + path + ": " + std::strerror(errno)};
  struct stat st {};
  if (fstat(fd, &st) == 0 && st.st_uid == geteuid() && (st.st_mode & 0666) != 0666) fchmod(fd, 0666);
  return fd;
}

std::string ReadHolder(int fd) {
  char text[512];
  const ssize_t n = pread(fd, text, sizeof text - 1, 0);
  if (n <= 0) return "another process";
  std::string holder(text, static_cast<size_t>(n));
  while (!holder.empty() && (holder.back() == '\n' || holder.back() == '\0')) holder.pop_back();
  return holder.empty() ? "another process" : holder;
}

// The holder's command line, shortened: which run a waiting user waits for.
std::string CommandLine() {
  FILE* f = std::fopen("/proc/self/cmdline", "r");
  if (!f) return "";
  char raw[256];
  const size_t n = std::fread(raw, 1, sizeof raw - 1, f);
  std::fclose(f);
  std::string line;
  for (size_t i = 0; i < n; ++i) line += raw[i] == '\0' ? ' ' : raw[i];
  while (!line.empty() && line.back() == ' ') line.pop_back();
  if (const size_t slash = line.rfind('/', line.find(' ')); slash != std::string::npos) line.erase(0, slash + 1);
  return line;
}

void WriteHolder(int fd, const std::string& purpose) {
  const std::time_t now = std::time(nullptr);
  std::tm local{};
  localtime_r(&now, &local);
  char since[16];
  std::strftime(since, sizeof since, "%H:%M:%S", &local);
  const std::string text =
      "pid " + std::to_string(getpid()) + " `" + CommandLine() + "` (" + purpose + ", since " + since + ")\n";
  if (ftruncate(fd, 0) == 0) (void)!pwrite(fd, text.data(), text.size(), 0);
}

// Blocks in flock(LOCK_EX), waking every `period` seconds to report the wait.
Status LockWaiting(int fd, const std::string& path, const std::function<void(double)>& still_waiting, double period) {
  const double start = NowSeconds();
  double next_notice = start + period;
  for (;;) {
    if (flock(fd, LOCK_EX | LOCK_NB) == 0) return Ok{};
    if (errno != EWOULDBLOCK && errno != EINTR) return Error{"cannot lock " + path + ": " + std::strerror(errno)};
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    if (NowSeconds() >= next_notice) {
      still_waiting(NowSeconds() - start);
      next_notice += period;
    }
  }
}

}  // namespace

std::string DeviceLockDir() {
  if (const char* env = std::getenv("ACCELOPT_LOCK_DIR"); env && *env) return env;
  if (access("/run/lock", W_OK | X_OK) == 0) return "/run/lock";
  return "/tmp";
}

Result<std::unique_ptr<DeviceLock>> DeviceLock::Acquire(const std::string& device, const std::string& purpose,
                                                        const OnWait& on_wait, double notice_every_s) {
  std::string name = "accelopt-" + device;
  for (char& c : name)
    if (c == '/' || c == ':') c = '-';
  const std::string base = DeviceLockDir() + "/" + name;
  auto queue = OpenLockFile(base + ".queue");
  if (!queue) return queue.error();
  auto lock = OpenLockFile(base + ".lock");
  if (!lock) {
    close(*queue);
    return lock.error();
  }
  const double start = NowSeconds();
  auto fail = [&](const Error& e) -> Result<std::unique_ptr<DeviceLock>> {
    close(*queue);
    close(*lock);
    return e;
  };
  // The turnstile first, always: a holder that releases and asks again at
  // once queues behind a process that was already waiting.
  bool told = false;
  auto report = [&](double waited) {
    if (on_wait) on_wait(ReadHolder(*lock), waited);
  };
  auto take = [&](int fd, const std::string& path) -> Status {
    if (flock(fd, LOCK_EX | LOCK_NB) == 0) return Ok{};
    if (!told) report(0), told = true;
    return LockWaiting(fd, path, report, notice_every_s);
  };
  if (auto s = take(*queue, base + ".queue"); !s) return fail(s.error());
  if (auto s = take(*lock, base + ".lock"); !s) return fail(s.error());
  flock(*queue, LOCK_UN);
  close(*queue);
  WriteHolder(*lock, purpose);
  return std::unique_ptr<DeviceLock>(new DeviceLock(*lock, NowSeconds() - start));
}

DeviceLock::~DeviceLock() {
  if (ftruncate(fd_, 0) != 0) {
    // The holder's line stays until the next holder overwrites it: harmless.
  }
  flock(fd_, LOCK_UN);
  close(fd_);
}

DeviceLock::OnWait PrintWaitToStderr(const std::string& device) {
  return [device](const std::string& holder, double waited_s) {
    if (waited_s <= 0)
      std::fprintf(stderr, "waiting for the %s device, held by %s\n", device.c_str(), holder.c_str());
    else
      std::fprintf(stderr, "still waiting for the %s device (%.0f s), held by %s\n", device.c_str(), waited_s,
                   holder.c_str());
  };
}

}  // namespace accelopt::eval
