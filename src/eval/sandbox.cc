#include "eval/sandbox.h"

#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <optional>
#include <string_view>

#include "core/clock.h"
#include "eval/cgroup.h"

extern char** environ;

namespace accelopt::eval {
namespace {

int AllowedCores() {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) != 0) return 1;
  return std::max(1, CPU_COUNT(&set));
}

// What an isolated child keeps of the engine's environment: where programs and
// libraries are, the locale, and the settings of the threading and BLAS
// runtimes. Nothing else: the engine's environment holds API keys and paths
// to its own folders, which a kernel could print into its log.
bool InheritedWhenIsolated(std::string_view entry) {
  static constexpr std::string_view kNames[] = {"PATH=", "LANG=", "LANGUAGE=", "TZ=", "LD_LIBRARY_PATH="};
  static constexpr std::string_view kPrefixes[] = {"LC_", "OMP_", "GOMP_", "KMP_", "OPENBLAS_", "GOTO_", "MKL_"};
  for (std::string_view name : kNames)
    if (entry.substr(0, name.size()) == name) return true;
  for (std::string_view prefix : kPrefixes)
    if (entry.substr(0, prefix.size()) == prefix) return true;
  return false;
}

// Whether the engine's user namespace holds every uid a sandbox may take
// (kSandboxUidBase and the 65535 after it): the initial namespace does; a
// container's often maps only some thousands, and there a switch to an
// unmapped uid fails.
bool SandboxUidsMapped() {
  static const bool mapped = [] {
    std::ifstream in("/proc/self/uid_map");
    for (unsigned long inside, outside, count; in >> inside >> outside >> count;)
      if (inside <= kSandboxUidBase && inside + count >= kSandboxUidBase + 0x10000ul) return true;
    return false;
  }();
  return mapped;
}

// Writes a whole small file (async-signal-safe: open, write, close): a
// /proc map, a cgroup.procs.
bool WriteSmallFile(const char* path, std::string_view text) {
  int fd = open(path, O_WRONLY | O_CLOEXEC);
  if (fd < 0) return false;
  bool ok = write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  close(fd);
  return ok;
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
  bool isolate = false;   // own namespaces, where the machine allows them
  bool own_user = false;  // and a user of its own (the engine runs as root)
  bool user_namespace = false;  // or one of a user namespace of its own
  std::string uid_map, gid_map;  // that namespace's maps, prepared before fork
  std::vector<std::string> cgroup_procs;  // the cgroup.procs files to write "0" to, where a group was made
};

ChildPlan Plan(const SandboxRequest& request) {
  ChildPlan plan;
  plan.argv_storage = request.argv;
  for (char** e = environ; *e; ++e)
    if (!request.isolate || InheritedWhenIsolated(*e)) plan.env_storage.emplace_back(*e);
  for (const auto& e : request.env) plan.env_storage.push_back(e);
  for (auto& s : plan.argv_storage) plan.argv.push_back(s.data());
  plan.argv.push_back(nullptr);
  for (auto& s : plan.env_storage) plan.env.push_back(s.data());
  plan.env.push_back(nullptr);

  plan.inherit = request.inherit_fds;
  plan.isolate = request.isolate;
  plan.own_user = request.isolate && geteuid() == 0 && SandboxUidsMapped();
  plan.user_namespace = request.isolate && !plan.own_user;
  plan.uid_map = std::to_string(kSandboxUidBase) + " " + std::to_string(geteuid()) + " 1\n";
  plan.gid_map = std::to_string(kSandboxUidBase) + " " + std::to_string(getegid()) + " 1\n";
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

// What happened before exec, sent over a close-on-exec pipe (nothing when all
// went well): a step that failed (the child did not start) or an isolation
// step the machine refused (the child went on without it).
struct StartMessage {
  enum Kind : int { kFailed, kRefused, kNoCgroup } kind;
  int step;  // index into kStartSteps or kIsolationSteps
  int error;
};
constexpr const char* kStartSteps[] = {"redirect stdio", "enter the working directory", "pin to the cores", "execute",
                                       "take a user of its own"};
constexpr const char* kIsolationSteps[] = {"namespaces of its own (PID, IPC, mount, network)", "a /proc of its own",
                                           "a user namespace of its own (mapping its user)"};

// The isolated child's processes, as the engine's PID namespace numbers them.
struct ChildPids {
  pid_t child = -1;
  pid_t init = 0;  // 0: no PID namespace of its own
};

void Send(int fd, StartMessage::Kind kind, int step) {
  StartMessage message{kind, step, errno};
  ssize_t ignored = write(fd, &message, sizeof message);
  (void)ignored;
}

[[noreturn]] void FailStart(int fd, int step) {
  Send(fd, StartMessage::kFailed, step);
  _exit(127);
}

// fork() without the C library's handlers, with clone's flags (async-signal-safe).
pid_t CloneProcess(unsigned long flags) { return static_cast<pid_t>(syscall(SYS_clone, flags | SIGCHLD, 0, 0, 0, 0)); }

// Child descriptors: 0 /dev/null, 1 stdout, 2 stderr, 3.. the inherited ones
// in order, then the start-failure pipe (closed by exec). `uid`: the user it
// becomes (0: stays the engine's); `own_proc`: mount a /proc of its PID namespace.
[[noreturn]] void ExecChild(const ChildPlan& plan, const std::string& workdir, int out_fd, int err_fd, int start_fd,
                            bool own_proc, uid_t uid) {
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
  // A /proc that shows only its own PID namespace: the engine's processes
  // (and a sibling kernel's) have no entry there, so no /proc/PID/mem to open.
  if (own_proc && (mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0 ||
                   mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, nullptr) != 0))
    Send(start_slot, StartMessage::kRefused, 1);
  if (uid == 0) {
    execve(plan.argv[0], plan.argv.data(), plan.env.data());
    FailStart(start_slot, 3);
  }
  // The program is opened before the user changes: it may sit in a folder
  // only the engine's user can enter.
  int program = open(plan.argv[0], O_RDONLY | O_CLOEXEC);
  if (program < 0) FailStart(start_slot, 3);
  // Every credential at once (capabilities go with root); a root that cannot drop them does not start.
  if (setgroups(0, nullptr) != 0 || setresgid(uid, uid, uid) != 0 || setresuid(uid, uid, uid) != 0)
    FailStart(start_slot, 4);
  prctl(PR_SET_PDEATHSIG, SIGKILL);  // cleared by the change of credentials
  syscall(SYS_execveat, program, "", plan.argv.data(), plan.env.data(), AT_EMPTY_PATH);
  FailStart(start_slot, 3);
}

// The engine's child when isolated: it leaves the engine's namespaces, starts
// an idle init for the new PID namespace and then the real child there, both
// as the engine's children (CLONE_PARENT), tells the engine their pids and
// exits. Where the machine refuses the namespaces it says so and becomes the
// child itself (ChildPids::init 0).
[[noreturn]] void StartIsolated(const ChildPlan& plan, const std::string& workdir, int out_fd, int err_fd, int start_fd,
                                int pids_fd) {
  // Each child its own user: the sibling in a comparison runs as another.
  const uid_t uid = plan.own_user ? kSandboxUidBase + (static_cast<unsigned>(getpid()) & 0xffffu) : 0;
  // Into its control group first: the init and the child (and all they start) are counted there.
  for (const std::string& procs : plan.cgroup_procs)
    if (!WriteSmallFile(procs.c_str(), "0")) {
      Send(start_fd, StartMessage::kNoCgroup, 0);
      break;
    }
  const int user = plan.user_namespace ? CLONE_NEWUSER : 0;
  if (unshare(CLONE_NEWPID | CLONE_NEWIPC | CLONE_NEWNS | CLONE_NEWNET | user) != 0) {
    Send(start_fd, StartMessage::kRefused, 0);
    ChildPids pids{getpid(), 0};
    if (write(pids_fd, &pids, sizeof pids) != sizeof pids) _exit(127);
    close(pids_fd);
    ExecChild(plan, workdir, out_fd, err_fd, start_fd, /*own_proc=*/false, uid);
  }
  // In a user namespace of its own it becomes kSandboxUidBase there (the
  // engine's user outside); it keeps the namespace's capabilities until it
  // executes (to mount its /proc), and loses them then, not being its root.
  // Its maps in /proc/self belong to root while it is not dumpable (an engine
  // that changed its user, or made itself so): this process is the engine's
  // own, and nothing of the kernel can see it from the new PID namespace.
  if (user) prctl(PR_SET_DUMPABLE, 1);
  if (user && !(WriteSmallFile("/proc/self/setgroups", "deny") && WriteSmallFile("/proc/self/uid_map", plan.uid_map) &&
                WriteSmallFile("/proc/self/gid_map", plan.gid_map)))
    Send(start_fd, StartMessage::kRefused, 2);
  ChildPids pids;
  pids.init = CloneProcess(CLONE_PARENT);
  if (pids.init == 0) {
    // PID 1 of the namespace: holds it open and idles; the engine kills it
    // after the child, which ends whatever else is left there.
    // Not dumpable: it is a copy of the engine's memory, and in a user
    // namespace the child's user outside is its own.
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    prctl(PR_SET_DUMPABLE, 0);
    syscall(SYS_close_range, 0, ~0U, 0);
    for (;;) pause();
  }
  if (pids.init < 0) FailStart(start_fd, 3);
  pids.child = CloneProcess(CLONE_PARENT);
  if (pids.child == 0) ExecChild(plan, workdir, out_fd, err_fd, start_fd, /*own_proc=*/true, uid);
  if (pids.child < 0) {
    kill(pids.init, SIGKILL);
    FailStart(start_fd, 3);
  }
  if (write(pids_fd, &pids, sizeof pids) != sizeof pids) _exit(127);
  _exit(0);
}

}  // namespace

Result<std::unique_ptr<SandboxedProcess>> SandboxedProcess::Start(const SandboxRequest& request) {
  if (request.argv.empty()) return Error{"sandbox: empty command"};
  if (request.inherit_fds.size() > kMaxInherited) return Error{"sandbox: too many inherited descriptors"};
  ChildPlan plan = Plan(request);
  std::unique_ptr<SandboxCgroup> cgroup;
  std::string limits_note;
  if (request.isolate) {
    CgroupLimits limits;
    limits.memory_bytes = request.limits.address_space_bytes;
    limits.max_tasks = request.limits.max_processes > 0 ? request.limits.max_processes : kSandboxDefaultTasks;
    limits.cpus = request.cpus;
    if (auto made = SandboxCgroup::Create(limits)) {
      cgroup = std::move(*made);
      plan.cgroup_procs = cgroup->procs_files();
      limits_note = cgroup->description();
    } else {
      limits_note = "per process (rlimits): " + made.error().message;
    }
  }
  std::array<int, 2> pipes[4];  // stdout, stderr, start messages, the isolated child's pids
  for (auto& p : pipes)
    if (pipe2(p.data(), O_CLOEXEC) != 0) return Error{std::string("sandbox: pipe: ") + std::strerror(errno)};
  auto close_all = [&] {
    for (auto& p : pipes)
      for (int& fd : p)
        if (fd >= 0) close(fd), fd = -1;
  };

  std::unique_ptr<SandboxedProcess> child(new SandboxedProcess());
  child->start_ = NowSeconds();
  child->deadline_ = child->start_ + request.limits.wall_seconds;
  child->capture_bytes_ = request.limits.capture_bytes;
  pid_t pid = fork();
  if (pid < 0) {
    close_all();
    return Error{std::string("sandbox: fork: ") + std::strerror(errno)};
  }
  if (pid == 0) {
    if (plan.isolate) StartIsolated(plan, request.workdir, pipes[0][1], pipes[1][1], pipes[2][1], pipes[3][1]);
    ExecChild(plan, request.workdir, pipes[0][1], pipes[1][1], pipes[2][1], false, 0);
  }
  for (auto& p : pipes) close(p[1]), p[1] = -1;
  if (plan.isolate) {
    ChildPids pids;
    ssize_t got;
    while ((got = read(pipes[3][0], &pids, sizeof pids)) < 0 && errno == EINTR) {
    }
    if (got != static_cast<ssize_t>(sizeof pids) || pids.child <= 0) {
      kill(pid, SIGKILL);
      waitpid(pid, nullptr, 0);
      close_all();
      return Error{"cannot start " + request.argv[0] + ": the isolated child was not started"};
    }
    if (pids.init > 0) {
      int status = 0;
      while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {  // the intermediate, which exits at once
      }
      child->init_ = pids.init;
    }
    pid = pids.child;
  }
  setpgid(pid, pid);  // also in the parent, so a kill right away reaches the group
  child->pid_ = pid;
  child->streams_[0] = {pipes[0][0], &child->outcome_.out, &child->outcome_.out_truncated};
  child->streams_[1] = {pipes[1][0], &child->outcome_.err, &child->outcome_.err_truncated};
  pipes[0][0] = pipes[1][0] = -1;
  for (auto& s : child->streams_) fcntl(s.fd, F_SETFL, O_NONBLOCK);
  std::optional<StartMessage> failed;
  std::string refused;
  for (;;) {
    StartMessage message{};
    ssize_t got;
    while ((got = read(pipes[2][0], &message, sizeof message)) < 0 && errno == EINTR) {
    }
    if (got != static_cast<ssize_t>(sizeof message)) break;  // exec closed it
    if (message.kind == StartMessage::kFailed) {
      failed = message;
      break;
    }
    if (message.kind == StartMessage::kNoCgroup) {
      limits_note = "per process (rlimits): could not enter its control group: " + std::string(std::strerror(message.error));
      cgroup.reset();
      continue;
    }
    refused +=
        std::string(refused.empty() ? "" : "; ") + kIsolationSteps[message.step] + ": " + std::strerror(message.error);
  }
  close_all();
  if (plan.isolate) {
    child->isolation_.namespaces = child->init_ > 0 && refused.find(kIsolationSteps[1]) == std::string::npos;
    const bool mapped = refused.find(kIsolationSteps[2]) == std::string::npos;
    child->isolation_.own_user = plan.own_user || (plan.user_namespace && child->isolation_.namespaces && mapped);
    child->isolation_.user_namespace = plan.user_namespace && child->isolation_.own_user;
    if (!child->isolation_.own_user && refused.empty())
      refused = "a user of its own: the machine refused a user namespace";
    child->isolation_.refused = refused;
    child->isolation_.limits = limits_note;
    child->cgroup_ = std::move(cgroup);
  }
  if (failed) {
    child->Wait();
    return Error{"cannot start " + request.argv[0] + ": " + kStartSteps[failed->step] +
                 " failed: " + std::strerror(failed->error)};
  }
  child->pidfd_ = static_cast<int>(syscall(SYS_pidfd_open, pid, 0));
  return child;
}

SandboxedProcess::~SandboxedProcess() {
  if (!reaped_ && pid_ > 0) {
    Kill(false);
    Wait();
  }
  EndNamespace();
  EndCgroup();
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

// The init of the child's PID namespace: killed, it takes everything left
// there with it (and the namespaces, System V IPC included, end).
void SandboxedProcess::EndNamespace() {
  if (init_ <= 0) return;
  kill(init_, SIGKILL);
  while (waitpid(init_, nullptr, 0) < 0 && errno == EINTR) {
  }
  init_ = -1;
}

// Removed once every process in it is gone (after EndNamespace).
void SandboxedProcess::EndCgroup() { cgroup_.reset(); }

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
  EndNamespace();
  EndCgroup();
  outcome_.wall_seconds = NowSeconds() - start_;
  DrainOutput();
  outcome_.cpu_seconds =
      usage.ru_utime.tv_sec + usage.ru_utime.tv_usec * 1e-6 + usage.ru_stime.tv_sec + usage.ru_stime.tv_usec * 1e-6;
  outcome_.max_rss_kb = usage.ru_maxrss;
  if (WIFEXITED(status)) outcome_.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) outcome_.term_signal = WTERMSIG(status);
  return outcome_;
}

const SandboxIsolation& ProbeIsolation() {
  static const SandboxIsolation probed = [] {
    SandboxRequest request;
    request.argv = {"/bin/true"};
    request.isolate = true;
    request.limits.wall_seconds = 10;
    SandboxIsolation isolation;
    auto child = SandboxedProcess::Start(request);
    if (!child) {
      isolation.refused = child.error().message;
      return isolation;
    }
    isolation = (*child)->isolation();
    (*child)->Wait();
    return isolation;
  }();
  return probed;
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
