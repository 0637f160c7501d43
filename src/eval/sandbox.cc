#include "eval/sandbox.h"

#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <chrono>
#include <cstring>

#include "core/clock.h"

extern char** environ;

namespace accelopt::eval {
namespace {

int AllowedCores() {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) != 0) return 1;
  return std::max(1, CPU_COUNT(&set));
}

// Everything the child needs, prepared before fork: after fork only
// async-signal-safe calls are allowed.
struct ChildPlan {
  std::vector<std::string> argv_storage, env_storage;
  std::vector<char*> argv, env;
  std::vector<std::pair<int, rlimit>> limits;
  cpu_set_t cpus;
  bool pin = false;
  std::vector<int> inherit;
};

ChildPlan Plan(const SandboxRequest& request) {
  ChildPlan plan;
  plan.argv_storage = request.argv;
  for (char** e = environ; *e; ++e) plan.env_storage.emplace_back(*e);
  for (const auto& e : request.env) plan.env_storage.push_back(e);
  for (auto& s : plan.argv_storage) plan.argv.push_back(s.data());
  plan.argv.push_back(nullptr);
  for (auto& s : plan.env_storage) plan.env.push_back(s.data());
  plan.env.push_back(nullptr);

  plan.inherit = request.inherit_fds;
  CPU_ZERO(&plan.cpus);
  for (int cpu : request.cpus) CPU_SET(cpu, &plan.cpus), plan.pin = true;
  const SandboxLimits& l = request.limits;
  auto lim = [](rlim_t v) { return rlimit{v, v}; };
  double cpu = l.cpu_seconds > 0 ? l.cpu_seconds : l.wall_seconds * AllowedCores() + 1;
  // Soft CPU limit raises SIGXCPU (reported); the hard limit a second later kills.
  plan.limits.push_back({RLIMIT_CPU, {static_cast<rlim_t>(cpu), static_cast<rlim_t>(cpu) + 1}});
  if (l.address_space_bytes > 0) plan.limits.push_back({RLIMIT_AS, lim(l.address_space_bytes)});
  plan.limits.push_back({RLIMIT_FSIZE, lim(l.file_size_bytes)});
  plan.limits.push_back({RLIMIT_CORE, lim(0)});
  if (l.max_processes > 0) plan.limits.push_back({RLIMIT_NPROC, lim(l.max_processes)});
  return plan;
}

constexpr size_t kMaxInherited = 8;

// Why a child could not start, sent over a close-on-exec pipe (empty on success).
struct StartFailure {
  int step;  // index into kStartSteps
  int error;
};
constexpr const char* kStartSteps[] = {"redirect stdio", "enter the working directory", "pin to the cores", "execute"};

[[noreturn]] void FailStart(int fd, int step) {
  StartFailure failure{step, errno};
  ssize_t ignored = write(fd, &failure, sizeof failure);
  (void)ignored;
  _exit(127);
}

// Child descriptors: 0 /dev/null, 1 stdout, 2 stderr, 3.. the inherited ones
// in order, then the start-failure pipe (closed by exec).
[[noreturn]] void ExecChild(const ChildPlan& plan, const std::string& workdir, int out_fd, int err_fd, int start_fd) {
  setpgid(0, 0);
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  // First lift every descriptor above the target range, so no dup2 below clobbers a source.
  constexpr int kLift = 256;
  int start = fcntl(start_fd, F_DUPFD_CLOEXEC, kLift);
  if (start < 0) _exit(127);
  int sources[2 + kMaxInherited];
  int count = 0;
  for (int fd : {out_fd, err_fd}) sources[count++] = fcntl(fd, F_DUPFD, kLift);
  for (int fd : plan.inherit) sources[count++] = fcntl(fd, F_DUPFD, kLift);
  int devnull = open("/dev/null", O_RDONLY);
  if (devnull < 0 || dup2(devnull, 0) < 0) FailStart(start, 0);
  for (int i = 0; i < count; ++i)
    if (sources[i] < 0 || dup2(sources[i], i + 1) < 0) FailStart(start, 0);
  int start_slot = count + 1;
  if (dup2(start, start_slot) < 0) FailStart(start, 0);
  fcntl(start_slot, F_SETFD, FD_CLOEXEC);
  syscall(SYS_close_range, start_slot + 1, ~0U, 0);
  if (!workdir.empty() && chdir(workdir.c_str()) != 0) FailStart(start_slot, 1);
  for (const auto& [resource, value] : plan.limits) setrlimit(resource, &value);
  if (plan.pin && sched_setaffinity(0, sizeof plan.cpus, &plan.cpus) != 0) FailStart(start_slot, 2);
  execve(plan.argv[0], plan.argv.data(), plan.env.data());
  FailStart(start_slot, 3);
}

}  // namespace

Result<std::unique_ptr<SandboxedProcess>> SandboxedProcess::Start(const SandboxRequest& request) {
  if (request.argv.empty()) return Error{"sandbox: empty command"};
  if (request.inherit_fds.size() > kMaxInherited) return Error{"sandbox: too many inherited descriptors"};
  ChildPlan plan = Plan(request);
  std::array<int, 2> pipes[3];  // stdout, stderr, start failure
  for (auto& p : pipes)
    if (pipe2(p.data(), O_CLOEXEC) != 0) return Error{std::string("sandbox: pipe: ") + std::strerror(errno)};

  std::unique_ptr<SandboxedProcess> child(new SandboxedProcess());
  child->start_ = NowSeconds();
  child->deadline_ = child->start_ + request.limits.wall_seconds;
  child->capture_bytes_ = request.limits.capture_bytes;
  pid_t pid = fork();
  if (pid < 0) {
    for (auto& p : pipes) close(p[0]), close(p[1]);
    return Error{std::string("sandbox: fork: ") + std::strerror(errno)};
  }
  if (pid == 0) ExecChild(plan, request.workdir, pipes[0][1], pipes[1][1], pipes[2][1]);
  setpgid(pid, pid);  // also in the parent, so a kill right away reaches the group
  child->pid_ = pid;
  for (auto& p : pipes) close(p[1]);
  child->streams_[0] = {pipes[0][0], &child->outcome_.out, &child->outcome_.out_truncated};
  child->streams_[1] = {pipes[1][0], &child->outcome_.err, &child->outcome_.err_truncated};
  for (auto& s : child->streams_) fcntl(s.fd, F_SETFL, O_NONBLOCK);
  StartFailure failure{};
  ssize_t got;
  while ((got = read(pipes[2][0], &failure, sizeof failure)) < 0 && errno == EINTR) {
  }
  close(pipes[2][0]);
  if (got == static_cast<ssize_t>(sizeof failure)) {
    child->Wait();
    return Error{"cannot start " + request.argv[0] + ": " + kStartSteps[failure.step] +
                 " failed: " + std::strerror(failure.error)};
  }
  child->pidfd_ = static_cast<int>(syscall(SYS_pidfd_open, pid, 0));
  return child;
}

SandboxedProcess::~SandboxedProcess() {
  if (!reaped_ && pid_ > 0) {
    Kill(false);
    Wait();
  }
  for (auto& s : streams_)
    if (s.fd >= 0) close(s.fd);
  if (pidfd_ >= 0) close(pidfd_);
}

std::vector<int> SandboxedProcess::OutputFds() const {
  std::vector<int> fds;
  for (const auto& s : streams_)
    if (s.fd >= 0) fds.push_back(s.fd);
  return fds;
}

// Reads what is available (bounded, so a flood cannot starve the deadline
// check); closes a stream at its end.
void SandboxedProcess::DrainOutput() {
  char buf[65536];
  for (auto& s : streams_) {
    for (int round = 0; s.fd >= 0 && round < 64; ++round) {
      ssize_t n = read(s.fd, buf, sizeof buf);
      if (n > 0) {
        size_t keep = std::min(static_cast<size_t>(n), capture_bytes_ - std::min(capture_bytes_, s.text->size()));
        s.text->append(buf, keep);
        if (keep < static_cast<size_t>(n)) *s.truncated = true;
        continue;
      }
      if (n < 0 && (errno == EAGAIN || errno == EINTR)) break;
      close(s.fd);  // end of stream, or an error reading it
      s.fd = -1;
    }
  }
}

void SandboxedProcess::Kill(bool timed_out) {
  if (reaped_) return;
  if (timed_out) outcome_.timed_out = true;
  kill(-pid_, SIGKILL);
  kill(pid_, SIGKILL);  // also when it left its group
}

SandboxOutcome SandboxedProcess::Wait() {
  if (reaped_) return outcome_;
  for (bool exited = false; !exited;) {
    std::vector<pollfd> fds;
    for (int fd : OutputFds()) fds.push_back({fd, POLLIN, 0});
    if (pidfd_ >= 0) fds.push_back({pidfd_, POLLIN, 0});
    double left = deadline_ - NowSeconds();
    if (left <= 0 && !outcome_.timed_out) Kill(true);
    // Without a pidfd, or once killed, look at the child regularly.
    int timeout_ms = pidfd_ >= 0 && left > 0 ? static_cast<int>(left * 1000) + 1 : 50;
    if (pidfd_ < 0) timeout_ms = std::min(timeout_ms, 50);
    if (poll(fds.data(), fds.size(), timeout_ms) < 0 && errno != EINTR) break;
    DrainOutput();
    siginfo_t info{};
    exited = waitid(P_PID, pid_, &info, WEXITED | WNOHANG | WNOWAIT) == 0 && info.si_pid == pid_;
  }
  int status = 0;
  rusage usage{};
  while (wait4(pid_, &status, 0, &usage) < 0 && errno == EINTR) {
  }
  reaped_ = true;
  kill(-pid_, SIGKILL);  // stragglers the child may have left in its group
  outcome_.wall_seconds = NowSeconds() - start_;
  DrainOutput();
  outcome_.cpu_seconds =
      usage.ru_utime.tv_sec + usage.ru_utime.tv_usec * 1e-6 + usage.ru_stime.tv_sec + usage.ru_stime.tv_usec * 1e-6;
  outcome_.max_rss_kb = usage.ru_maxrss;
  if (WIFEXITED(status)) outcome_.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) outcome_.term_signal = WTERMSIG(status);
  return outcome_;
}

Result<SandboxOutcome> RunSandboxed(const SandboxRequest& request) {
  auto child = SandboxedProcess::Start(request);
  if (!child) return child.error();
  return (*child)->Wait();
}

std::string TruncateLog(std::string text, size_t cap) {
  if (text.size() > cap) text = text.substr(0, cap) + "\n[... truncated]\n";
  return text;
}

std::string SignalName(int sig) {
  const char* abbrev = sigabbrev_np(sig);
  const char* text = sigdescr_np(sig);
  std::string name = abbrev ? std::string("SIG") + abbrev : "signal " + std::to_string(sig);
  return text ? name + " (" + text + ")" : name;
}

}  // namespace accelopt::eval
