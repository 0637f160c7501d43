#include "targets/external/served_process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <pthread.h>

#include <cerrno>
#include <cstring>

#include "core/clock.h"

extern char** environ;

namespace accelopt::external {
namespace {

constexpr size_t kStderrKept = 4096;

void CloseFd(int& fd) {
  if (fd >= 0) close(fd);
  fd = -1;
}

// write(2) to a pipe whose reader may be gone: EPIPE, without the SIGPIPE
// that would end the engine (blocked for this thread, a pending one consumed).
ssize_t WriteNoSigpipe(int fd, const char* data, size_t size) {
  sigset_t pipe_only, old;
  sigemptyset(&pipe_only);
  sigaddset(&pipe_only, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &pipe_only, &old);
  const ssize_t n = write(fd, data, size);
  const int saved = errno;
  if (n < 0 && saved == EPIPE) {
    const timespec zero{0, 0};
    while (sigtimedwait(&pipe_only, nullptr, &zero) == SIGPIPE) {
    }
  }
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  errno = saved;
  return n;
}

}  // namespace

Result<std::unique_ptr<ServedProcess>> ServedProcess::Start(const std::vector<std::string>& argv,
                                                            const std::string& workdir) {
  if (argv.empty()) return Error{"no evaluator program"};
  int in[2], out[2], err[2];
  if (pipe2(in, O_CLOEXEC) != 0) return Error{std::string("pipe: ") + std::strerror(errno)};
  if (pipe2(out, O_CLOEXEC) != 0) {
    close(in[0]), close(in[1]);
    return Error{std::string("pipe: ") + std::strerror(errno)};
  }
  if (pipe2(err, O_CLOEXEC) != 0) {
    close(in[0]), close(in[1]), close(out[0]), close(out[1]);
    return Error{std::string("pipe: ") + std::strerror(errno)};
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, in[0], 0);
  posix_spawn_file_actions_adddup2(&actions, out[1], 1);
  posix_spawn_file_actions_adddup2(&actions, err[1], 2);
  posix_spawn_file_actions_addchdir_np(&actions, workdir.c_str());
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETPGROUP);  // its own group, killed as one
  posix_spawnattr_setpgroup(&attributes, 0);
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = -1;
  const int spawned = posix_spawn(&pid, argv[0].c_str(), &actions, &attributes, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attributes);
  close(in[0]), close(out[1]), close(err[1]);
  if (spawned != 0) {
    close(in[1]), close(out[0]), close(err[0]);
    return Error{"cannot start " + argv[0] + ": " + std::strerror(spawned)};
  }
  // Read as they become readable: a descendant holding a pipe open must not block the engine.
  fcntl(out[0], F_SETFL, fcntl(out[0], F_GETFL) | O_NONBLOCK);
  fcntl(err[0], F_SETFL, fcntl(err[0], F_GETFL) | O_NONBLOCK);
  std::unique_ptr<ServedProcess> p(new ServedProcess());
  p->pid_ = pid;
  p->in_ = in[1];
  p->out_ = out[0];
  p->err_ = err[0];
  return p;
}

ServedProcess::~ServedProcess() {
  if (in_ >= 0 && pid_ > 0) {
    CloseFd(in_);  // end of input: a well-behaved evaluator exits
    for (int i = 0; i < 50; ++i) {
      if (waitpid(pid_, nullptr, WNOHANG) == pid_) {
        pid_ = -1;
        break;
      }
      usleep(2000);
    }
  }
  Kill();
}

void ServedProcess::Kill() {
  if (pid_ > 0) {
    kill(-pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
    pid_ = -1;
  }
  CloseFd(in_);
  CloseFd(out_);
  CloseFd(err_);
}

std::string ServedProcess::StderrTail() const { return stderr_.empty() ? "" : ":\n" + stderr_; }

Result<std::string> ServedProcess::Exchange(const std::string& line, double timeout_seconds) {
  if (pid_ <= 0) return Error{"the evaluator is not running"};
  const std::string message = line + "\n";
  for (size_t sent = 0; sent < message.size();) {
    const ssize_t n = WriteNoSigpipe(in_, message.data() + sent, message.size() - sent);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const std::string why = std::string("cannot write to the evaluator: ") + std::strerror(errno);
      Kill();
      return Error{why + StderrTail()};
    }
    sent += static_cast<size_t>(n);
  }
  const double deadline = NowSeconds() + timeout_seconds;
  for (;;) {
    if (size_t end = pending_.find('\n'); end != std::string::npos) {
      std::string answer = pending_.substr(0, end);
      pending_.erase(0, end + 1);
      return answer;
    }
    const double left = deadline - NowSeconds();
    if (left <= 0) {
      Kill();
      return Error{"did not answer within " + std::to_string(static_cast<int>(timeout_seconds)) + " s" + StderrTail()};
    }
    pollfd fds[2] = {{out_, POLLIN, 0}, {err_, POLLIN, 0}};
    const int ready = poll(fds, err_ >= 0 ? 2 : 1, static_cast<int>(left * 1000) + 1);
    if (ready < 0 && errno != EINTR) {
      Kill();
      return Error{std::string("poll on the evaluator: ") + std::strerror(errno)};
    }
    char buffer[65536];
    if (err_ >= 0 && (fds[1].revents & (POLLIN | POLLHUP))) {
      const ssize_t n = read(err_, buffer, sizeof buffer);
      if (n > 0) {
        stderr_.append(buffer, static_cast<size_t>(n));
        if (stderr_.size() > kStderrKept) stderr_.erase(0, stderr_.size() - kStderrKept);
      } else if (n == 0) {
        CloseFd(err_);
      }
    }
    if (fds[0].revents & (POLLIN | POLLHUP)) {
      const ssize_t n = read(out_, buffer, sizeof buffer);
      if (n > 0) {
        pending_.append(buffer, static_cast<size_t>(n));
      } else if (n == 0) {
        int status = 0;
        waitpid(pid_, &status, 0);
        pid_ = -1;
        // Gone: what it wrote to stderr last is all there.
        for (ssize_t e; err_ >= 0 && (e = read(err_, buffer, sizeof buffer)) > 0;) stderr_.append(buffer, e);
        if (stderr_.size() > kStderrKept) stderr_.erase(0, stderr_.size() - kStderrKept);
        Kill();
        const std::string how = WIFEXITED(status)     ? "exited with code " + std::to_string(WEXITSTATUS(status))
                                : WIFSIGNALED(status) ? "was killed by signal " + std::to_string(WTERMSIG(status))
                                                      : "ended";
        return Error{how + " before answering" + StderrTail()};
      }
    }
  }
}

}  // namespace accelopt::external
