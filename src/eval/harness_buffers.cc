#include "eval/harness_buffers.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <utility>

namespace accelopt::eval {
namespace {

constexpr unsigned char kCanary = 0xA5;
// Inaccessible address space on each side: reserved, never backed, so it costs
// nothing, and a write up to 1 MiB off either end faults instead of landing in
// a neighbouring buffer.
constexpr size_t kGuardBytes = 1 << 20;

size_t PageSize() { return static_cast<size_t>(sysconf(_SC_PAGESIZE)); }

}  // namespace

GuardedBuffer::GuardedBuffer(size_t bytes) {
  size_t page = PageSize();
  size_t data_pages = (bytes + page - 1) / page;
  if (data_pages == 0) data_pages = 1;
  // Ordinary 4 KiB pages, as kernels get them from malloc in a framework. (2 MiB
  // transparent huge pages were tried: run-to-run spread did not improve, and
  // power-of-two strides then hit one cache set every time, halving the speed
  // of naive kernels such as rmsnorm_matmul's.)
  size_t align = page;
  mapped_ = kGuardBytes + align + data_pages * page + kGuardBytes;
  void* base = mmap(nullptr, mapped_, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (base == MAP_FAILED) {
    mapped_ = 0;
    return;
  }
  base_ = static_cast<unsigned char*>(base);
  uintptr_t first = reinterpret_cast<uintptr_t>(base_) + kGuardBytes;
  data_ = reinterpret_cast<unsigned char*>((first + align - 1) / align * align);
  if (mprotect(data_, data_pages * page, PROT_READ | PROT_WRITE) != 0) {
    munmap(base_, mapped_);
    base_ = data_ = nullptr;
    mapped_ = 0;
    return;
  }
  bytes_ = bytes;
  slack_ = data_pages * page - bytes;
  ResetCanary();
}

GuardedBuffer::~GuardedBuffer() {
  if (base_) munmap(base_, mapped_);
}

GuardedBuffer::GuardedBuffer(GuardedBuffer&& other) noexcept { *this = std::move(other); }

GuardedBuffer& GuardedBuffer::operator=(GuardedBuffer&& other) noexcept {
  if (this != &other) {
    if (base_) munmap(base_, mapped_);
    base_ = std::exchange(other.base_, nullptr);
    mapped_ = std::exchange(other.mapped_, 0);
    data_ = std::exchange(other.data_, nullptr);
    bytes_ = std::exchange(other.bytes_, 0);
    slack_ = std::exchange(other.slack_, 0);
  }
  return *this;
}

bool GuardedBuffer::IntactCanary() const {
  for (size_t i = 0; i < slack_; ++i)
    if (data_[bytes_ + i] != kCanary) return false;
  return true;
}

void GuardedBuffer::ResetCanary() {
  if (data_) std::memset(data_ + bytes_, kCanary, slack_);
}

}  // namespace accelopt::eval
