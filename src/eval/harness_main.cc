// accelopt-harness: the kernel process of an evaluation (eval/protocol.h).
//
// Usage: accelopt-harness   (fd 3: inputs, fd 4: outputs, fd 5: control memory)
//
// Maps the arguments between inaccessible guard regions (the inputs read-only),
// installs the system-call filter, then runs the monitor's commands one at a
// time and stops its own process after each one, so that nothing of it runs
// between calls. It holds no clock reading, no seed, no reference output and
// no record of which calls are checked: the monitor keeps all of that in its
// own process, where the kernel cannot reach it. What this process reports
// (a fatal signal, a trapped system call, a load error) only explains a failure
// the monitor has already seen.

#include <dlfcn.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <seccomp.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <cstdint>
#include <utility>

#include "eval/harness_buffers.h"
#include "eval/protocol.h"
#include "eval/system_calls.h"

namespace protocol = accelopt::eval::protocol;

namespace {

protocol::ControlBlock* g_control = nullptr;
std::atomic<bool> g_alloc_failed{false};

// ---------------------------------------------------------------- reporting

void Report(protocol::ReportKind kind, const char* message) {
  if (!g_control) return;
  protocol::Report& r = g_control->report;
  r.kind = kind;
  std::snprintf(r.message, sizeof r.message, "%s", message);
}

// Async-signal-safe: plain stores into the control memory, then the signal's
// default action (SA_RESETHAND restored it on entry).
void OnFatalSignal(int sig, siginfo_t* info, void*) {
  if (g_control) {
    protocol::Report& r = g_control->report;
    r.kind = sig == SIGSYS ? protocol::ReportKind::kForbiddenCall : protocol::ReportKind::kFatalSignal;
    r.signal = sig;
    r.syscall = sig == SIGSYS ? info->si_syscall : -1;
    r.fault_address = reinterpret_cast<uint64_t>(info->si_addr);
    r.alloc_failed = g_alloc_failed.load() ? 1 : 0;
  }
  // A trapped call would otherwise return ENOSYS and let the kernel go on.
  if (sig == SIGSYS) _exit(71);
  raise(sig);  // blocked until this handler returns, then fatal
}

// The C library installs handlers of its own (cancellation, setxid) when a
// process creates its first thread. One thread, started and joined here,
// before the filter, lets it do so; the kernel's threads then need no handler.
bool StartThreadsOnce() {
  pthread_t thread;
  if (pthread_create(
          &thread, nullptr, [](void*) -> void* { return nullptr; }, nullptr) != 0)
    return false;
  return pthread_join(thread, nullptr) == 0;
}

bool InstallSignalHandlers() {
  static char alt_stack[1 << 16];
  stack_t ss{};
  ss.ss_sp = alt_stack;
  ss.ss_size = sizeof alt_stack;
  if (sigaltstack(&ss, nullptr) != 0) return false;
  struct sigaction sa {};
  sa.sa_sigaction = OnFatalSignal;
  // SA_RESETHAND: the default action comes back without another sigaction,
  // which the filter refuses once it is installed.
  sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_RESETHAND;
  sigemptyset(&sa.sa_mask);
  for (int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGSYS, SIGXCPU, SIGXFSZ, SIGTRAP})
    if (sigaction(sig, &sa, nullptr) != 0) return false;
  return true;
}

// ------------------------------------------------------------ process rules

// Two filters, both trapping (SIGSYS -> "forbidden"). The first, an allowlist
// (eval/system_calls.h), goes in before the kernel's library is loaded, since
// its constructors run then: every call it does not name is refused, however
// new or obscure. Some pass only with some arguments: clone with CLONE_THREAD
// (a thread; clone3 answers ENOSYS so that the C library falls back to clone,
// whose flags a filter can inspect), tgkill to this process, rt_sigaction and
// prlimit64 reading only, open and openat for reading only, ioctl for the
// terminal query only. The second, once the library is loaded, closes files
// altogether (a kernel computes on its arguments only) and refuses executable
// memory (patching code, the harness's included).
using SeccompRules = int (*)(scmp_filter_ctx);

bool LoadFilter(uint32_t default_action, SeccompRules rules) {
  scmp_filter_ctx ctx = seccomp_init(default_action);
  if (!ctx) return false;
  // The first filter set no_new_privs, and prctl is not among the allowed calls.
  int rc = default_action == SCMP_ACT_ALLOW ? seccomp_attr_set(ctx, SCMP_FLTATR_CTL_NNP, 0) : 0;
  rc |= rules(ctx);
  if (rc == 0) rc = seccomp_load(ctx);
  seccomp_release(ctx);
  return rc == 0;
}

// Adds the rule for one allowed call; a call this architecture does not have
// (open on arm64) is skipped.
int Allow(scmp_filter_ctx ctx, const accelopt::eval::AllowedCall& call) {
  using W = accelopt::eval::AllowedCall::When;
  const int nr = seccomp_syscall_resolve_name(call.name);
  if (nr == __NR_SCMP_ERROR || nr < 0) return 0;
  switch (call.when) {
    case W::kAlways:
    case W::kNoExecAfterLoad:  // the second filter refuses PROT_EXEC
      return seccomp_rule_add(ctx, SCMP_ACT_ALLOW, nr, 0);
    case W::kThreadsOnly:
      return seccomp_rule_add(ctx, SCMP_ACT_ALLOW, nr, 1, SCMP_A0(SCMP_CMP_MASKED_EQ, CLONE_THREAD, CLONE_THREAD));
    case W::kItselfOnly:
      return seccomp_rule_add(ctx, SCMP_ACT_ALLOW, nr, 1, SCMP_A0(SCMP_CMP_EQ, static_cast<scmp_datum_t>(getpid())));
    case W::kReadingOnly:  // the new value null
      return seccomp_rule_add(ctx, SCMP_ACT_ALLOW, nr, 1, SCMP_CMP(call.arg, SCMP_CMP_EQ, 0));
    case W::kReadOnlyOpen:  // the flags: for reading, never creating or truncating
      return seccomp_rule_add(ctx, SCMP_ACT_ALLOW, nr, 1,
                              SCMP_CMP(call.arg, SCMP_CMP_MASKED_EQ, O_ACCMODE | O_CREAT | O_TRUNC, O_RDONLY));
    case W::kTerminalQuery:
      return seccomp_rule_add(ctx, SCMP_ACT_ALLOW, nr, 1, SCMP_A1(SCMP_CMP_EQ, TCGETS));
    case W::kNarrowingOnly:  // the second filter refuses it altogether
      return seccomp_rule_add(ctx, SCMP_ACT_ALLOW, nr, 1, SCMP_A0(SCMP_CMP_EQ, SECCOMP_SET_MODE_FILTER));
  }
  return -EINVAL;
}

int ProcessRules(scmp_filter_ctx ctx) {
  int rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3), 0);
  for (const auto& call : accelopt::eval::AllowedCalls()) rc |= Allow(ctx, call);
  return rc;
}

// After loading: executable memory, files and changes to the filter are over.
int LoadedRules(scmp_filter_ctx ctx) {
  int rc = seccomp_rule_add(ctx, SCMP_ACT_TRAP, SCMP_SYS(seccomp), 0);
  for (int call : {SCMP_SYS(open), SCMP_SYS(openat)}) rc |= seccomp_rule_add(ctx, SCMP_ACT_TRAP, call, 0);
  // The protection is argument 2 of mmap, mprotect and pkey_mprotect.
  for (int call : {SCMP_SYS(mmap), SCMP_SYS(mprotect), SCMP_SYS(pkey_mprotect)})
    rc |= seccomp_rule_add(ctx, SCMP_ACT_TRAP, call, 1, SCMP_A2(SCMP_CMP_MASKED_EQ, PROT_EXEC, PROT_EXEC));
  return rc;
}

// ------------------------------------------------------------------ calling

using AnyFn = void (*)();

template <size_t... I>
void CallWith(AnyFn fn, void* const* args, std::index_sequence<I...>) {
  using Typed = void (*)(decltype((void)I, static_cast<void*>(nullptr))...);
  reinterpret_cast<Typed>(fn)(args[I]...);
}

template <size_t N = 0>
void Call(AnyFn fn, void* const* args, size_t count) {
  if constexpr (N > protocol::kMaxArguments) {
    (void)fn, (void)args, (void)count;
  } else {
    if (count == N) return CallWith(fn, args, std::make_index_sequence<N>{});
    Call<N + 1>(fn, args, count);
  }
}

// ------------------------------------------------------------------- setup

// Maps every argument as a window on the monitor's memories and records where,
// then closes the descriptors: the kernel gets pointers, never the memories.
bool MapArguments(const protocol::Spec& spec, void** args, protocol::Layout& layout) {
  if (spec.inputs + spec.outputs > static_cast<uint32_t>(protocol::kMaxArguments)) return false;
  size_t n = 0;
  for (uint32_t i = 0; i < spec.inputs; ++i, ++n) {
    args[n] = accelopt::eval::MapGuarded(protocol::kInputsFd, spec.input[i].offset, spec.input[i].bytes, false);
    if (!args[n]) return false;
    layout.input[i] = reinterpret_cast<uint64_t>(args[n]);
  }
  for (uint32_t i = 0; i < spec.outputs; ++i, ++n) {
    args[n] = accelopt::eval::MapGuarded(protocol::kOutputsFd, spec.output[i].offset, spec.output[i].bytes, true);
    if (!args[n]) return false;
    layout.output[i] = reinterpret_cast<uint64_t>(args[n]);
  }
  layout.guard_bytes = accelopt::eval::kGuardBytes;
  close(protocol::kInputsFd);
  close(protocol::kOutputsFd);
  return true;
}

// Stops the whole process (every thread) until the monitor releases it.
void StopProcess() { syscall(SYS_tgkill, getpid(), gettid(), SIGSTOP); }

// Waits for the next command; the monitor writes it before releasing the process.
uint32_t NextRequest(uint32_t served) {
  uint32_t request;
  while ((request = g_control->request.load(std::memory_order_acquire)) == served)
    syscall(SYS_futex, &g_control->request, FUTEX_WAIT, served, nullptr, nullptr, 0);
  return request;
}

}  // namespace

// Failed allocations are remembered so that a crash that follows one is
// reported as resource exhaustion rather than a plain runtime error.
extern "C" {
void* __libc_malloc(size_t);
void* __libc_calloc(size_t, size_t);
void* __libc_realloc(void*, size_t);
void* __libc_memalign(size_t, size_t);

void* malloc(size_t n) {
  void* p = __libc_malloc(n);
  if (!p && n) g_alloc_failed = true;
  return p;
}
void* calloc(size_t n, size_t m) {
  void* p = __libc_calloc(n, m);
  if (!p && n && m) g_alloc_failed = true;
  return p;
}
void* realloc(void* old, size_t n) {
  void* p = __libc_realloc(old, n);
  if (!p && n) g_alloc_failed = true;
  return p;
}
void* aligned_alloc(size_t alignment, size_t n) {
  void* p = __libc_memalign(alignment, n);
  if (!p && n) g_alloc_failed = true;
  return p;
}
void* memalign(size_t alignment, size_t n) { return aligned_alloc(alignment, n); }
int posix_memalign(void** out, size_t alignment, size_t n) {
  void* p = aligned_alloc(alignment, n);
  if (!p && n) return ENOMEM;
  *out = p;
  return 0;
}
}

int main(int argc, char**) {
  if (argc != 1) {
    std::fprintf(stderr, "usage: accelopt-harness (started by the engine: fds 3, 4 and 5 are its memories)\n");
    return 2;
  }
  void* control = mmap(nullptr, protocol::kControlBytes, PROT_READ | PROT_WRITE, MAP_SHARED, protocol::kControlFd, 0);
  if (control == MAP_FAILED) return 3;
  close(protocol::kControlFd);
  g_control = static_cast<protocol::ControlBlock*>(control);
  if (g_control->magic != protocol::kMagic || g_control->version != protocol::kVersion) return 3;
  const protocol::Spec spec = g_control->spec;  // the harness's own copy

  void* args[protocol::kMaxArguments] = {};
  if (!InstallSignalHandlers() || !StartThreadsOnce())
    return Report(protocol::ReportKind::kSetupFailed, "cannot install signal handlers"), 5;
  if (!MapArguments(spec, args, g_control->layout))
    return Report(protocol::ReportKind::kSetupFailed, "cannot map the kernel's arguments"), 5;
  if (spec.seccomp && !LoadFilter(SCMP_ACT_TRAP, ProcessRules))
    return Report(protocol::ReportKind::kSetupFailed, "cannot install the system-call filter"), 6;

  AnyFn fn = nullptr;
  const size_t count = spec.inputs + spec.outputs;
  for (uint32_t served = 0;;) {
    StopProcess();  // ready: the monitor releases the process with the next command
    served = NextRequest(served);
    switch (g_control->command) {
      case protocol::Command::kNoop:
        break;
      case protocol::Command::kLoad: {
        char library[sizeof spec.library], symbol[sizeof spec.symbol];
        std::snprintf(library, sizeof library, "%s", g_control->spec.library);
        std::snprintf(symbol, sizeof symbol, "%s", g_control->spec.symbol);
        void* lib = dlopen(library, RTLD_NOW | RTLD_LOCAL);
        fn = lib ? reinterpret_cast<AnyFn>(dlsym(lib, symbol)) : nullptr;
        if (!fn) {
          const char* why = dlerror();
          char message[600];
          std::snprintf(message, sizeof message, "%s", why ? why : "symbol not found");
          Report(protocol::ReportKind::kLoadFailed, message);
          _exit(4);
        }
        if (spec.seccomp && !LoadFilter(SCMP_ACT_ALLOW, LoadedRules))
          return Report(protocol::ReportKind::kSetupFailed, "cannot tighten the system-call filter"), 6;
        break;
      }
      case protocol::Command::kCall:
        if (fn) Call(fn, args, count);
        break;
      case protocol::Command::kExit:
        _exit(0);  // no destructors: nothing of the kernel runs after its last call
      case protocol::Command::kNone:
        _exit(7);
    }
    g_control->done.store(served, std::memory_order_release);
    syscall(SYS_futex, &g_control->done, FUTEX_WAKE, 2, nullptr, nullptr, 0);  // the monitor's watch, asleep
  }
}
