#pragma once
/// The protocol between the monitor (the engine) and the kernel process
/// (accelopt-harness), shared by both sides (DESIGN.md section 5).
///
/// The two processes share one page of control memory (fd 5 of the harness)
/// and two memories of arguments: the inputs (fd 3; the harness can map them
/// read-only only) and the outputs (fd 4). The monitor writes a command and its
/// sequence number, releases the stopped kernel process (SIGCONT) and waits for
/// `done` to reach that number; the harness runs the command, publishes
/// `done` and stops its whole process (SIGSTOP to itself) before it could run
/// anything else. Between commands the kernel process does not run at all.
///
/// Nothing here is secret and nothing here decides a verdict: the kernel can
/// write this memory too, so the monitor keeps its own copy of the spec, times
/// each command with its own clock, and treats every field it reads back as
/// untrusted (a report only explains a failure the monitor saw for itself).

#include <unistd.h>

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace accelopt::eval::protocol {

inline constexpr uint32_t kMagic = 0x61636370;  // "accp"
inline constexpr uint32_t kVersion = 2;
inline constexpr int kMaxArguments = 24;
inline constexpr size_t kControlBytes = 8192;

/// Descriptors of the harness, after stdin, stdout and stderr.
inline constexpr int kInputsFd = 3;
inline constexpr int kOutputsFd = 4;
inline constexpr int kControlFd = 5;
/// The kernel's library, copied by the monitor into sealed memory
/// (KernelProcessOptions::library): the harness loads it as /proc/self/fd/6,
/// and may run as a user that cannot enter the folder it was built in.
inline constexpr int kLibraryFd = 6;

/// What the monitor asks for. The harness runs one command per release.
enum class Command : uint32_t {
  kNone = 0,
  kNoop = 1,  ///< the handshake alone (measures its cost; the kernel is not loaded yet)
  kLoad = 2,  ///< load the library, find the symbol, tighten the system-call filter
  kCall = 3,  ///< one call of the kernel on the arguments as they are
  kExit = 4,  ///< end the process without running destructors
};

/// What the harness says about itself when something failed (diagnostics only).
enum class ReportKind : uint32_t {
  kNone = 0,
  kSetupFailed = 1,    ///< the harness could not map its memory or install its rules
  kLoadFailed = 2,     ///< dlopen or dlsym failed (message)
  kFatalSignal = 3,    ///< a signal is about to end the process (signal, fault_address)
  kForbiddenCall = 4,  ///< a trapped system call (syscall)
};

/// The bytes an argument of `bytes` takes in its memory: whole pages, at
/// least one. Each argument starts on a page; the slack after its end, up to
/// the next page, is where the monitor keeps a canary.
inline size_t WholePages(size_t bytes) {
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  return bytes == 0 ? page : (bytes + page - 1) / page * page;
}

/// Where one argument lives in its memory (page-aligned offsets).
struct ArgumentSlot {
  uint64_t offset = 0;
  uint64_t bytes = 0;
};

/// Written by the monitor before the harness starts; the monitor never reads it back.
struct Spec {
  uint32_t inputs = 0, outputs = 0;
  ArgumentSlot input[kMaxArguments];
  ArgumentSlot output[kMaxArguments];
  uint32_t seccomp = 1;     ///< install the system-call filters
  char library[1024] = {};  ///< filled by the monitor before kLoad
  char symbol[128] = {};
};

/// Filled by the harness when something fails; read by the monitor only after
/// the process ended or stopped without finishing its command.
struct Report {
  ReportKind kind = ReportKind::kNone;
  int32_t signal = 0;
  int64_t syscall = -1;
  uint64_t fault_address = 0;
  uint32_t alloc_failed = 0;  ///< an allocation had failed before the signal
  char message[512] = {};
};

/// Where the harness mapped each argument, written once before the kernel is
/// loaded (so the monitor can read it as the harness wrote it), to name the
/// argument a fault hit.
struct Layout {
  uint64_t input[kMaxArguments] = {};
  uint64_t output[kMaxArguments] = {};
  uint64_t guard_bytes = 0;  ///< inaccessible bytes before and after each argument
};

struct alignas(64) ControlBlock {
  uint32_t magic = kMagic;
  uint32_t version = kVersion;
  Spec spec;
  Layout layout;
  /// The command to run and its sequence number (written by the monitor, then released).
  alignas(64) std::atomic<uint32_t> request{0};
  Command command = Command::kNone;
  /// The sequence number of the last command the harness finished.
  alignas(64) std::atomic<uint32_t> done{0};
  alignas(64) Report report;
};
static_assert(sizeof(ControlBlock) <= kControlBytes, "the control block must fit its memory");
static_assert(std::atomic<uint32_t>::is_always_lock_free, "shared atomics must be lock-free");

}  // namespace accelopt::eval::protocol
