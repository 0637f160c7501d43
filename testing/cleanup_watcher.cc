#include "testing/cleanup_watcher.h"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace accelopt::testing {

Status CleanupWatcher::Start(const std::string& what, const std::string& script) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return Error{what + ": watcher pipe: " + strerror(errno)};
  const std::string waiting = "cat >/dev/null; " + script;
  const char* argv[] = {"/bin/sh", "-c", waiting.c_str(), nullptr};
  const pid_t pid = fork();
  if (pid < 0) {
    close(fds[0]);
    close(fds[1]);
    return Error{what + ": watcher: fork: " + strerror(errno)};
  }
  if (pid == 0) {
    setsid();
    dup2(fds[0], 0);
    int null = open("/dev/null", O_WRONLY);
    if (null >= 0) {
      dup2(null, 1);
      dup2(null, 2);
    }
    close_range(3, ~0U, 0);
    if (chdir("/") != 0) _exit(126);
    execv(argv[0], const_cast<char* const*>(argv));
    _exit(127);
  }
  close(fds[0]);
  pid_ = pid;
  fd_ = fds[1];
  return Ok{};
}

void CleanupWatcher::Finish() {
  if (fd_ < 0) return;
  close(fd_);
  fd_ = -1;
  waitpid(pid_, nullptr, 0);
}

}  // namespace accelopt::testing
