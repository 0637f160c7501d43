#pragma once
/// Kernel arguments fenced by inaccessible guard regions (harness side).
///
/// Layout: [1 MiB guard][the argument's pages][1 MiB guard]. The pages are a
/// window on the monitor's shared memory, so what the kernel writes is what the
/// monitor reads, with no copy in between. A write up to 1 MiB before the start
/// or past the end faults; a write into the slack after the end of the last
/// page lands in memory the monitor fills with a canary and checks.

#include <cstddef>
#include <cstdint>

namespace accelopt::eval {

/// Inaccessible bytes on each side of an argument.
inline constexpr size_t kGuardBytes = size_t{1} << 20;

/// Maps `bytes` (rounded up to whole pages) at `offset` of the shared memory
/// `fd` between two guard regions, readable, and writable when asked. Null on
/// failure. The mapping lives as long as the process.
void* MapGuarded(int fd, uint64_t offset, uint64_t bytes, bool writable);

}  // namespace accelopt::eval
