#pragma once
/// The system calls the harness's seccomp filters trap, with what each would
/// do for a kernel. One table serves the filters (the unconditional rules are
/// built from it) and the engine (which names a trapped call in the profile).

#include <span>
#include <string>

namespace accelopt::eval {

struct TrappedCall {
  enum When {
    kAlways,         ///< trapped from before the kernel's library is loaded
    kWithArguments,  ///< trapped only with some arguments (see the harness's rules)
    kAfterLoad,      ///< trapped once the library is loaded (files, executable memory)
  };
  long number;
  const char* name;
  const char* meaning;
  When when;
};

std::span<const TrappedCall> TrappedCalls();

/// "fork: create a process", or "system call N" for a call not in the table.
std::string DescribeTrappedCall(long number);

}  // namespace accelopt::eval
