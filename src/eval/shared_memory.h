#pragma once
/// Anonymous shared memory (memfd) for handing arrays to and from a child
/// process without files: nothing lands in a folder the kernel could read.
/// Seals (kernel-enforced) fix its size, and can keep everyone but this
/// process's own mapping from writing it.

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

  /// Fixes the size for good (no shrinking, no growing, no further seals), so
  /// that no holder of the descriptor can make a mapping of it fault. With
  /// `read_only_elsewhere`, also forbids writes through any new mapping or
  /// write(): this process keeps writing through its own mapping, everyone
  /// else can only read.
  Status SealSize(bool read_only_elsewhere = false);

  /// A new read-only descriptor of the same memory (close-on-exec), for a
  /// child that must not be able to write it whatever the seals allow.
  Result<int> ReadOnlyDescriptor() const;

 private:
  int fd_ = -1;
  void* data_ = nullptr;
  size_t size_ = 0;
};

}  // namespace accelopt::eval
