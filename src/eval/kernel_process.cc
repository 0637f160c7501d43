#include "eval/kernel_process.h"

#include <fcntl.h>
#include <linux/futex.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <optional>
#include <thread>

#include "core/clock.h"

namespace accelopt::eval {
namespace {

// While a call runs, the monitor also looks this often at whether the process
// stopped without returning (a kernel that stops itself).
constexpr int kCallSliceMs = 100;
// CPU time a thread may use in a window beyond its command's duration: waking
// from the stop and stopping again, done by the system on its behalf.
constexpr double kThreadSlackSeconds = 50e-6;
// How long the watch for the return spins after a release before it sleeps.
constexpr double kSpinAfterReleaseSeconds = 100e-6;

// Each thread's CPU time (nanoseconds in /proc/PID/task/TID/schedstat, exact
// for threads that are not running). False when the system does not keep them.
bool ReadThreadCpu(pid_t pid, std::map<pid_t, double>& threads) {
  std::error_code ec;
  const std::string dir = "/proc/" + std::to_string(pid) + "/task";
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    std::ifstream in(entry.path() / "schedstat");
    unsigned long long nanoseconds = 0;
    if (!(in >> nanoseconds)) return false;
    threads[static_cast<pid_t>(std::stol(entry.path().filename().string()))] = nanoseconds * 1e-9;
  }
  return !ec && !threads.empty();
}

long Futex(std::atomic<uint32_t>* word, int op, uint32_t value, const timespec* timeout = nullptr) {
  return syscall(SYS_futex, reinterpret_cast<uint32_t*>(word), op, value, timeout, nullptr, 0);
}

void SleepSeconds(double seconds) {
  timespec ts{static_cast<time_t>(seconds), static_cast<long>((seconds - static_cast<time_t>(seconds)) * 1e9)};
  while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
  }
}

}  // namespace

ArgumentLayout ArgumentLayout::For(const std::vector<size_t>& input_bytes, const std::vector<size_t>& output_bytes) {
  ArgumentLayout layout;
  for (size_t bytes : input_bytes) {
    layout.inputs.push_back({layout.inputs_bytes, bytes});
    layout.inputs_bytes += protocol::WholePages(bytes);
  }
  for (size_t bytes : output_bytes) {
    layout.outputs.push_back({layout.outputs_bytes, bytes});
    layout.outputs_bytes += protocol::WholePages(bytes);
  }
  return layout;
}

// Watches for the end of the command it is armed with and notes when it was
// first seen, by whichever of two threads sees it first. The end is the
// process seen stopped (or gone) after `done` reached the command's number:
// the harness stops its whole process right after publishing `done`, and
// nothing of the kernel runs once it is stopped, while `done` itself is memory
// the kernel could write early. So a "done" forged mid-call only makes the
// watch look for the stop sooner; the call is timed until it really ends.
// The two threads:
//  - a spinner at idle priority (SCHED_IDLE), from the moment it is armed
//    (while the monitor prepares the call) until shortly after the release: a
//    short call's return is seen within a microsecond or so, on a core it keeps
//    awake, and it never takes a core from the kernel's threads. It stops
//    spinning then: through a long call, even at idle priority, spinning slowed
//    threaded kernels by 10-20% on a shared virtual machine;
//  - a sleeper at normal priority, woken by the harness's wake-up on `done`,
//    which preempts whatever the kernel left spinning (an OpenMP pool) where
//    an idle-priority thread would wait for the process to stop.
class KernelProcess::DoneWatcher {
 public:
  DoneWatcher(std::atomic<uint32_t>* done, pid_t pid)
      : done_(done), pid_(pid), event_(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) {
    spinner_ = std::thread([this] { Loop(/*spin=*/true); });
    sleeper_ = std::thread([this] { Loop(/*spin=*/false); });
  }
  ~DoneWatcher() {
    quit_ = true;
    armed_.fetch_add(1);
    Futex(&armed_, FUTEX_WAKE, 2);
    Futex(done_, FUTEX_WAKE, 2);
    spinner_.join();
    sleeper_.join();
    if (event_ >= 0) close(event_);
  }
  bool ok() const { return event_ >= 0; }
  /// Starts watching for `sequence`, spinning until told of its release.
  void Arm(uint32_t sequence) {
    spin_until_.store(0);
    target_.store(sequence);
    armed_.fetch_add(1);
    Futex(&armed_, FUTEX_WAKE, 2);
  }
  /// The command was released (steady-clock seconds): spin on for a while only.
  void Released(double at) { spin_until_.store(at + kSpinAfterReleaseSeconds); }
  /// Stops watching (the process is gone).
  void Cancel() {
    target_.store(0);
    Futex(done_, FUTEX_WAKE, 2);
  }
  int event_fd() const { return event_; }
  /// Clears the event; the steady-clock seconds at which `sequence` was seen,
  /// or nothing when the event was for no report of it (yet).
  std::optional<double> TakeSeenAt(uint32_t sequence) {
    uint64_t count;
    ssize_t ignored = read(event_, &count, sizeof count);
    (void)ignored;
    std::lock_guard lock(report_mutex_);
    if (reported_.load() != sequence) return std::nullopt;
    return seen_at_;
  }

 private:
  void Loop(bool spin) {
    sched_param param{};
    // Idle priority applies to this thread only; refused, the spinner only sleeps too.
    const bool spinning = spin && sched_setscheduler(0, SCHED_IDLE, &param) == 0;
    for (uint32_t handled = 0;;) {
      uint32_t armed;
      while ((armed = armed_.load()) == handled) Futex(&armed_, FUTEX_WAIT, handled);
      handled = armed;
      if (quit_) return;
      const uint32_t target = target_.load();
      if (target == 0 || !Watch(target, spinning)) continue;
      const double seen = NowSeconds();
      if (Report(target, seen)) {
        uint64_t one = 1;
        ssize_t ignored = write(event_, &one, sizeof one);
        (void)ignored;
      }
    }
  }
  // The first to see the armed command end reports it, once. A thread that
  // saw an earlier command end and was kept off its core since (the spinner
  // runs at idle priority, so on a loaded machine it can wait for several
  // commands) reports nothing: its sight would stand for a later command's.
  bool Report(uint32_t target, double seen) {
    std::lock_guard lock(report_mutex_);
    if (target_.load() != target || reported_.load() == target) return false;
    reported_ = target;
    seen_at_ = seen;
    return true;
  }

  // True once done == target and the process is seen stopped (or gone); false when cancelled.
  bool Watch(uint32_t target, bool spinning) {
    const timespec slice{0, 10'000'000};
    for (unsigned spins = 0;; ++spins) {
      uint32_t seen = done_->load(std::memory_order_acquire);
      if (seen == target) return AwaitStop(target, spinning);
      if (target_.load(std::memory_order_relaxed) != target || quit_ || reported_.load() == target) return false;
      if (!spinning) {
        Futex(done_, FUTEX_WAIT, seen, &slice);
        continue;
      }
      const double until = spin_until_.load(std::memory_order_relaxed);
      if (until != 0 && (spins & 63) == 0 && NowSeconds() >= until) return false;  // the sleeper takes over
      __builtin_ia32_pause();
    }
  }

  // Looks (without consuming it: the monitor's main thread does) for the
  // stop that follows `done`, a few microseconds later. The sleeper, at
  // normal priority, yields between looks: woken by the harness's wake-up on
  // `done`, it can take the very core whose thread has yet to stop the
  // process, and spinning there would hold that thread off for a whole time
  // slice (milliseconds) while the call's clock runs. Seen side by side: a
  // two-thread kernel timed 1.5-4x its lone time after a one-thread one.
  bool AwaitStop(uint32_t target, bool spinning) {
    for (;;) {
      siginfo_t info{};
      if (waitid(P_PID, pid_, &info, WSTOPPED | WEXITED | WNOHANG | WNOWAIT) != 0 || info.si_pid == pid_) return true;
      if (target_.load(std::memory_order_relaxed) != target || quit_ || reported_.load() == target) return false;
      if (spinning)
        __builtin_ia32_pause();
      else
        sched_yield();
    }
  }

  std::atomic<uint32_t>* done_;
  const pid_t pid_;
  int event_;
  std::atomic<uint32_t> armed_{0}, target_{0}, reported_{0};
  std::atomic<bool> quit_{false};
  std::mutex report_mutex_;  // reported_ and seen_at_ change together
  double seen_at_ = 0;
  std::atomic<double> spin_until_{0};  // 0: not released yet
  std::thread spinner_, sleeper_;
};

KernelProcess::KernelProcess(KernelProcessOptions options) : options_(std::move(options)) {}

KernelProcess::~KernelProcess() {
  if (process_ && !failure_ && !finished_) Finish();
}

protocol::ControlBlock& KernelProcess::control() const {
  return *static_cast<protocol::ControlBlock*>(control_.data());
}

char* KernelProcess::input(size_t i) const {
  return static_cast<char*>(inputs_.data()) + options_.layout.inputs[i].offset;
}

char* KernelProcess::output(size_t i) const {
  return static_cast<char*>(outputs_.data()) + options_.layout.outputs[i].offset;
}

namespace {

// The library as sealed anonymous memory: readable by the harness whatever
// user it runs as and whatever the folder's or the file's permissions, and
// unchangeable by anyone once handed over.
Result<int> SealedCopy(const std::string& path) {
  const int in = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (in < 0) return Error{"cannot open the kernel's library " + path + ": " + std::strerror(errno)};
  // Executable, said so where the kernel knows the flag (6.3 on); older ones refuse it.
  constexpr unsigned kExec = 0x10;  // MFD_EXEC
  int out = memfd_create("accelopt-library", MFD_CLOEXEC | MFD_ALLOW_SEALING | kExec);
  if (out < 0 && errno == EINVAL) out = memfd_create("accelopt-library", MFD_CLOEXEC | MFD_ALLOW_SEALING);
  if (out < 0) {
    close(in);
    return Error{std::string("memfd_create for the kernel's library: ") + std::strerror(errno)};
  }
  char buffer[1 << 16];
  for (;;) {
    const ssize_t n = read(in, buffer, sizeof buffer);
    if (n == 0) break;
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 || write(out, buffer, static_cast<size_t>(n)) != n) {
      const std::string why = std::strerror(errno);
      close(in);
      close(out);
      return Error{"cannot copy the kernel's library " + path + ": " + why};
    }
  }
  close(in);
  if (fcntl(out, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL) != 0) {
    const std::string why = std::strerror(errno);
    close(out);
    return Error{"cannot seal the copy of the kernel's library: " + why};
  }
  return out;
}

}  // namespace

Result<std::unique_ptr<KernelProcess>> KernelProcess::Start(KernelProcessOptions options) {
  if (options.layout.inputs.size() + options.layout.outputs.size() > static_cast<size_t>(protocol::kMaxArguments))
    return Error{"a kernel takes at most " + std::to_string(protocol::kMaxArguments) + " arguments"};
  std::unique_ptr<KernelProcess> k(new KernelProcess(std::move(options)));
  const ArgumentLayout& layout = k->options_.layout;
  auto inputs = SharedMemory::Create("accelopt-inputs", layout.inputs_bytes);
  if (!inputs) return inputs.error();
  auto outputs = SharedMemory::Create("accelopt-outputs", layout.outputs_bytes);
  if (!outputs) return outputs.error();
  auto control = SharedMemory::Create("accelopt-control", protocol::kControlBytes);
  if (!control) return control.error();
  k->inputs_ = std::move(*inputs);
  k->outputs_ = std::move(*outputs);
  k->control_ = std::move(*control);

  auto* block = new (k->control_.data()) protocol::ControlBlock();
  protocol::Spec& spec = block->spec;
  spec.inputs = static_cast<uint32_t>(layout.inputs.size());
  spec.outputs = static_cast<uint32_t>(layout.outputs.size());
  std::copy(layout.inputs.begin(), layout.inputs.end(), spec.input);
  std::copy(layout.outputs.begin(), layout.outputs.end(), spec.output);
  spec.seccomp = k->options_.seccomp ? 1 : 0;

  // Sizes sealed: nothing the kernel does can make the monitor's mappings
  // fault. The inputs reach the child through a read-only descriptor and are
  // sealed against writes by anyone but this process's own mapping.
  for (auto* memory : {&k->outputs_, &k->control_})
    if (auto s = memory->SealSize(); !s) return s.error();
  if (auto s = k->inputs_.SealSize(/*read_only_elsewhere=*/true); !s) return s.error();
  auto read_only = k->inputs_.ReadOnlyDescriptor();
  if (!read_only) return read_only.error();

  SandboxRequest request = k->options_.sandbox;
  request.inherit_fds = {*read_only, k->outputs_.fd(), k->control_.fd()};
  int library = -1;
  if (!k->options_.library.empty()) {
    auto copy = SealedCopy(k->options_.library);
    if (!copy) {
      close(*read_only);
      return copy.error();
    }
    library = *copy;
    request.inherit_fds.push_back(library);
  }
  auto process = SandboxedProcess::Start(request);
  close(*read_only);
  if (library >= 0) close(library);
  if (!process) return process.error();
  k->process_ = std::move(*process);
  k->isolation_ = k->process_->isolation();
  if (clock_getcpuclockid(k->process_->pid(), &k->cpu_clock_) != 0)
    return Error{std::string("cannot read the CPU time of the kernel's process: ") + std::strerror(errno)};
  k->watcher_ = std::make_unique<DoneWatcher>(&block->done, k->process_->pid());
  if (!k->watcher_->ok()) return Error{std::string("eventfd: ") + std::strerror(errno)};

  // Ready: the harness stops itself once its arguments are mapped and its filter installed.
  k->Arm(1);  // spinning (at idle priority) before the first command is released
  auto ready = k->WaitForStop("the harness did not get ready");
  if (!ready) return ready.error();
  if (!*ready) return k;          // failed during setup (failed() says how)
  k->mapped_at_ = block->layout;  // no kernel code has run yet: as the harness wrote it
  // Ready: the spinner parks until the first command is prepared (Prepare) or released.
  k->watcher_->Released(NowSeconds());
  k->armed_for_ = 0;

  return k;
}

Result<bool> KernelProcess::Load(const std::string& library, const std::string& symbol) {
  protocol::Spec& spec = control().spec;
  if (library.size() >= sizeof spec.library || symbol.size() >= sizeof spec.symbol)
    return Error{"library path or symbol too long for the harness: " + library};
  // The library handed over as a descriptor is loaded through it (the harness
  // may not be allowed into the folder it was built in).
  const std::string path = !options_.library.empty() && library == options_.library
                               ? "/proc/self/fd/" + std::to_string(protocol::kLibraryFd)
                               : library;
  std::snprintf(spec.library, sizeof spec.library, "%s", path.c_str());
  std::snprintf(spec.symbol, sizeof spec.symbol, "%s", symbol.c_str());
  auto run = Run(protocol::Command::kLoad);
  if (!run) return run.error();
  return run->has_value();
}

Result<std::optional<CommandTiming>> KernelProcess::Call() { return Run(protocol::Command::kCall); }

Result<std::optional<CommandTiming>> KernelProcess::Noop() { return Run(protocol::Command::kNoop); }

Result<double> KernelProcess::ProcessCpuSeconds() const {
  timespec ts{};
  if (clock_gettime(cpu_clock_, &ts) != 0)
    return Error{std::string("cannot read the CPU time of the kernel's process: ") + std::strerror(errno)};
  return static_cast<double>(ts.tv_sec) + ts.tv_nsec * 1e-9;
}

// True once the process has stopped (the stop is consumed). False when it
// ended, or the wall limit ran out first (then it is killed: failure_ says
// how, with `late` as the detail); with `poll_once`, also when it is simply
// not stopped yet (failure_ not set).
Result<bool> KernelProcess::WaitForStop(const std::string& late, bool poll_once, bool consume) {
  const pid_t pid = process_->pid();
  for (double pause = 2e-6;; pause = std::min(pause * 2, 1e-3)) {
    // Looked at without consuming it; a stop is then consumed (unless only
    // looked at), an end left for the reaper.
    siginfo_t info{};
    if (waitid(P_PID, pid, &info, WSTOPPED | WEXITED | WNOHANG | WNOWAIT) != 0)
      return Error{std::string("waitid on the kernel's process: ") + std::strerror(errno)};
    if (info.si_pid == pid && info.si_code == CLD_STOPPED) {
      if (consume && waitid(P_PID, pid, &info, WSTOPPED | WNOHANG) != 0)
        return Error{std::string("waitid on the kernel's process: ") + std::strerror(errno)};
      return true;
    }
    if (info.si_pid == pid) {  // exited, killed or dumped
      Fail(ProcessFailure::Kind::kEnded, "");
      return false;
    }
    if (NowSeconds() >= process_->deadline()) {
      Fail(ProcessFailure::Kind::kTimedOut, late);
      return false;
    }
    if (poll_once) return false;
    process_->DrainOutput();
    SleepSeconds(pause);
  }
}

void KernelProcess::Prepare() {
  if (watcher_ && !failure_ && !finished_) Arm(sequence_ + 1);
}

void KernelProcess::Arm(uint32_t sequence) {
  if (armed_for_ == sequence) return;
  watcher_->Arm(sequence);
  armed_for_ = sequence;
}

void KernelProcess::Fail(ProcessFailure::Kind kind, std::string detail) {
  if (failure_) return;
  if (watcher_) watcher_->Cancel();
  armed_for_ = 0;
  process_->Kill(kind == ProcessFailure::Kind::kTimedOut);
  ProcessFailure failure;
  failure.kind = kind;
  failure.detail = std::move(detail);
  failure.outcome = process_->Wait();
  failure.report = control().report;  // a copy: the process is gone, nothing writes it any more
  failure.report.message[sizeof failure.report.message - 1] = '\0';
  failure_ = std::move(failure);
}

Result<std::optional<CommandTiming>> KernelProcess::Run(protocol::Command command) {
  if (failure_ || finished_) return std::optional<CommandTiming>{};
  protocol::ControlBlock& c = control();
  // Stopped, the process cannot change it: `done` names the last command, or the kernel wrote it.
  if (c.done.load(std::memory_order_acquire) != sequence_) {
    Fail(ProcessFailure::Kind::kTamperedControl,
         "the kernel wrote the control memory it shares with the monitor (a command reported done before it ran)");
    return std::optional<CommandTiming>{};
  }
  const uint32_t sequence = ++sequence_;
  const pid_t pid = process_->pid();
  if (auto s = SettleCpu(); !s) return s.error();
  c.command = command;
  c.request.store(sequence, std::memory_order_release);
  Futex(&c.request, FUTEX_WAKE, 1);
  Arm(sequence);
  const double released = NowSeconds();
  watcher_->Released(released);
  if (kill(pid, SIGCONT) != 0)
    return Error{std::string("cannot release the kernel's process: ") + std::strerror(errno)};

  std::optional<double> returned;
  for (;;) {
    std::vector<pollfd> fds = {{watcher_->event_fd(), POLLIN, 0}};
    if (process_->pidfd() >= 0) fds.push_back({process_->pidfd(), POLLIN, 0});
    for (int fd : process_->OutputFds()) fds.push_back({fd, POLLIN, 0});
    const double left = process_->deadline() - NowSeconds();
    if (left <= 0) {
      Fail(ProcessFailure::Kind::kTimedOut, "");
      return std::optional<CommandTiming>{};
    }
    int slice = std::min(kCallSliceMs, static_cast<int>(left * 1000) + 1);
    if (poll(fds.data(), fds.size(), slice) < 0 && errno != EINTR)
      return Error{std::string("poll on the kernel's process: ") + std::strerror(errno)};
    if ((fds[0].revents & POLLIN) && (returned = watcher_->TakeSeenAt(sequence))) break;
    process_->DrainOutput();
    // Looked at only: the watcher must still see the stop for itself.
    auto state = WaitForStop("", /*poll_once=*/true, /*consume=*/false);
    if (!state) return state.error();
    if (failure_) return std::optional<CommandTiming>{};
    if (*state) {
      const uint32_t done = c.done.load(std::memory_order_acquire);
      if (done == sequence) continue;  // returned and stopped; the watcher's event is on its way
      if (done == sequence - 1)
        Fail(ProcessFailure::Kind::kStoppedItself, "the kernel's process stopped itself during the call");
      else
        Fail(ProcessFailure::Kind::kTamperedControl,
             "the kernel wrote the control memory it shares with the monitor (the call's number was changed)");
      return std::optional<CommandTiming>{};
    }
  }
  // Returned and stopped (or gone): the watcher saw both. The stop is consumed here.
  auto state = WaitForStop("its process did not stop after the call returned");
  if (!state) return state.error();
  if (!*state) return std::optional<CommandTiming>{};
  CommandTiming timing;
  // Seen after the release, by construction: a sight from before it would be another command's.
  if (*returned < released)
    return Error{"the watch over the kernel's process reported a return before the release (monitor fault)"};
  timing.seconds = *returned - released;
  last_seconds_ = timing.seconds;
  return std::optional<CommandTiming>{timing};
}

// A window runs from one release to the next: the process ran only during
// its command (and the moments before it stopped), and by the next release,
// after the monitor prepared the next call, every thread has long left its
// core, so the readings are exact. (Read right after the stop is reported,
// they can lack the last thread's final slice: the parent hears of a stop
// before that thread is switched out.) No thread can have worked longer than
// the command lasted: CPU time of a thread beyond the command's duration (and
// a little slack for waking and stopping) was used outside it. Threads that
// ended within the window are bounded together by what `cores` threads could
// use. Without per-thread times (no schedstat), the whole process is bounded so.
Status KernelProcess::SettleCpu() {
  auto total = ProcessCpuSeconds();
  if (!total) return total.error();
  std::map<pid_t, double> threads;
  const bool per_thread = ReadThreadCpu(process_->pid(), threads);
  if (cpu_at_release_ >= 0) {
    const double window = *total - cpu_at_release_, slack = kThreadSlackSeconds + 0.01 * last_seconds_;
    double outside = 0;
    if (per_thread) {
      double live = 0;
      for (const auto& [tid, seconds] : threads) {
        auto before = thread_cpu_.find(tid);
        const double used = seconds - (before == thread_cpu_.end() ? 0.0 : before->second);
        live += used;
        outside += std::max(0.0, used - last_seconds_ - slack);
      }
      outside += std::max(0.0, window - live - options_.cores * last_seconds_);  // threads that ended
    } else {
      outside = std::max(0.0, window - options_.cores * last_seconds_);
    }
    outside_cpu_seconds_ += outside;
  }
  cpu_at_release_ = *total;
  thread_cpu_ = std::move(threads);
  last_seconds_ = 0;
  return Ok{};
}

SandboxOutcome KernelProcess::Finish() {
  if (failure_) return failure_->outcome;
  if (finished_) return *finished_;
  SettleCpu();  // the process is stopped: a failure to read leaves the total as it is
  control().command = protocol::Command::kExit;
  control().request.store(++sequence_, std::memory_order_release);
  Futex(&control().request, FUTEX_WAKE, 1);
  watcher_->Cancel();
  armed_for_ = 0;
  kill(process_->pid(), SIGCONT);
  finished_ = process_->Wait();
  return *finished_;
}

}  // namespace accelopt::eval
