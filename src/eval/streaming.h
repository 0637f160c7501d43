#pragma once
/// Memory passes for the monitor's preparation of each call, written with
/// non-temporal stores: the data goes to memory without passing through the
/// caches (the call must find its arguments there, not in a cache), and no
/// line is read before it is overwritten. Plain stores at unaligned ends.

#include <cstddef>
#include <cstdint>

namespace accelopt::eval {

/// Copies `bytes` from `src` to `dst` (not overlapping).
void StreamCopy(void* dst, const void* src, size_t bytes);

/// Fills `count` 32-bit or 64-bit elements with `pattern` (bit for bit).
void StreamFill32(void* dst, uint32_t pattern, size_t count);
void StreamFill64(void* dst, uint64_t pattern, size_t count);

/// Evicts every cache line of [p, p + bytes) from every cache level
/// (clflushopt where the CPU has it, else clflush). The roofline assumes
/// operands come from memory: what is evicted here must come from there.
void EvictFromCaches(const void* p, size_t bytes);

/// Orders the streaming stores before what follows (the release of the kernel).
void StreamFence();

}  // namespace accelopt::eval
