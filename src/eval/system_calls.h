#pragma once
/// The system calls a kernel's process may make, and what a refused one would
/// have done. The harness's filter allows the calls of AllowedCalls() and
/// traps every other (an allowlist: a call this table does not name, added to
/// the kernel or unknown to it today, is refused by construction). The engine
/// names a refused call in the profile with DescribeRefusedCall.

#include <span>
#include <string>

namespace accelopt::eval {

struct AllowedCall {
  /// Under which arguments the call passes; the harness's filter states each.
  enum When {
    kAlways,
    kThreadsOnly,       ///< clone: with CLONE_THREAD (a thread, never a process)
    kItselfOnly,        ///< tgkill: to its own process (raise, abort, the stop after each call)
    kReadingOnly,       ///< rt_sigaction, prlimit64: the new value null (read, never set)
    kReadOnlyOpen,      ///< open, openat: for reading, never creating or truncating; not at all once loaded
    kTerminalQuery,     ///< ioctl: TCGETS only (isatty, for stdio's buffering)
    kNoExecAfterLoad,   ///< mmap, mprotect: executable memory only while the library loads
    kNarrowingOnly,     ///< seccomp: adding a filter (which only narrows these rules); not at all once loaded
  };
  const char* name;  ///< resolved to this machine's number when the filter is built
  When when;
  unsigned arg = 0;  ///< the argument kReadingOnly and kReadOnlyOpen read (the new value, the flags)
};

/// What a kernel and its libraries (the C and C++ runtimes, the loader,
/// OpenMP, OpenBLAS) need: memory, threads and their synchronisation, clocks,
/// reading files while loading, writing to the descriptors it was given, and
/// questions about itself.
std::span<const AllowedCall> AllowedCalls();

/// "fork: create a process" for a call whose refusal matters often, the
/// call's name for any other ("shmget: not among the calls a kernel may make"),
/// "system call N" for a number this machine does not name.
std::string DescribeRefusedCall(long number);

}  // namespace accelopt::eval
