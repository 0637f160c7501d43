#pragma once
/// Kernel argument buffers fenced by inaccessible guard pages (harness side).
///
/// Layout: [1 MiB guard][data ... canary up to the page end][1 MiB guard].
/// A write up to 1 MiB before the start or past the end faults; a write into
/// the slack after the end changes the canary, which IntactCanary() reports.

#include <cstddef>

namespace accelopt::eval {

class GuardedBuffer {
 public:
  GuardedBuffer() = default;
  /// Maps the buffer; data() is null if the mapping failed.
  explicit GuardedBuffer(size_t bytes);
  ~GuardedBuffer();
  GuardedBuffer(GuardedBuffer&& other) noexcept;
  GuardedBuffer& operator=(GuardedBuffer&& other) noexcept;
  GuardedBuffer(const GuardedBuffer&) = delete;
  GuardedBuffer& operator=(const GuardedBuffer&) = delete;

  void* data() const { return data_; }
  size_t bytes() const { return bytes_; }
  /// True while nothing wrote past bytes() inside the last data page.
  bool IntactCanary() const;
  /// Restores the canary (after a reported overwrite, before the next call).
  void ResetCanary();

 private:
  unsigned char* base_ = nullptr;  // start of the whole mapping
  size_t mapped_ = 0;
  unsigned char* data_ = nullptr;
  size_t bytes_ = 0;
  size_t slack_ = 0;  // canary bytes after the data in the last page
};

}  // namespace accelopt::eval
