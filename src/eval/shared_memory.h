#pragma once
/// Anonymous shared memory (memfd) for handing arrays to and from a child
/// process without files: nothing lands in a folder the kernel could read.

#include <cstddef>
#include <string>

#include "core/result.h"

namespace accelopt::eval {

class SharedMemory {
 public:
  /// Creates `bytes` of zeroed shared memory, mapped read-write in this process.
  static Result<SharedMemory> Create(const std::string& name, size_t bytes);

  SharedMemory() = default;
  ~SharedMemory();
  SharedMemory(SharedMemory&& other) noexcept;
  SharedMemory& operator=(SharedMemory&& other) noexcept;
  SharedMemory(const SharedMemory&) = delete;
  SharedMemory& operator=(const SharedMemory&) = delete;

  void* data() const { return data_; }
  size_t size() const { return size_; }
  /// The descriptor to pass to a child (close-on-exec here; the sandbox dups it).
  int fd() const { return fd_; }

  /// Forbids every further write, by anyone holding the descriptor (kernel-enforced
  /// seals); remaps read-only here. For inputs, once they are drawn.
  Status Seal();

 private:
  int fd_ = -1;
  void* data_ = nullptr;
  size_t size_ = 0;
};

/// Maps `bytes` of a shared-memory descriptor (harness side). Null on failure.
void* MapShared(int fd, size_t bytes, bool writable);
void UnmapShared(void* data, size_t bytes);

}  // namespace accelopt::eval
