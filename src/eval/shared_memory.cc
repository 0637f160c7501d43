#include "eval/shared_memory.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

namespace accelopt::eval {
namespace {

void* MapShared(int fd, size_t bytes, bool writable) {
  void* p = mmap(nullptr, bytes, writable ? PROT_READ | PROT_WRITE : PROT_READ, MAP_SHARED, fd, 0);
  return p == MAP_FAILED ? nullptr : p;
}

void UnmapShared(void* data, size_t bytes) {
  if (data && bytes > 0) munmap(data, bytes);
}

}  // namespace

Result<SharedMemory> SharedMemory::Create(const std::string& name, size_t bytes) {
  SharedMemory m;
  m.fd_ = memfd_create(name.c_str(), MFD_CLOEXEC | MFD_ALLOW_SEALING);
  if (m.fd_ < 0) return Error{"memfd_create(" + name + "): " + std::strerror(errno)};
  m.size_ = bytes;
  if (ftruncate(m.fd_, static_cast<off_t>(bytes)) != 0)
    return Error{"cannot size shared memory " + name + " to " + std::to_string(bytes) +
                 " bytes: " + std::strerror(errno)};
  if (bytes > 0) {
    m.data_ = MapShared(m.fd_, bytes, true);
    if (!m.data_) return Error{"cannot map shared memory " + name + ": " + std::strerror(errno)};
    // Other threads fork (compiler, reference): a child holding a copy of this
    // writable mapping until it execs would make Seal() fail with EBUSY.
    madvise(m.data_, bytes, MADV_DONTFORK);
  }
  return m;
}

SharedMemory::~SharedMemory() {
  UnmapShared(data_, size_);
  if (fd_ >= 0) close(fd_);
}

SharedMemory::SharedMemory(SharedMemory&& other) noexcept { *this = std::move(other); }

SharedMemory& SharedMemory::operator=(SharedMemory&& other) noexcept {
  if (this != &other) {
    UnmapShared(data_, size_);
    if (fd_ >= 0) close(fd_);
    fd_ = std::exchange(other.fd_, -1);
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
  }
  return *this;
}

#ifndef F_SEAL_FUTURE_WRITE
#define F_SEAL_FUTURE_WRITE 0x0010  // Linux 5.1
#endif

Status SharedMemory::SealSize(bool read_only_elsewhere) {
  int seals = F_SEAL_SHRINK | F_SEAL_GROW;
  if (read_only_elsewhere) seals |= F_SEAL_FUTURE_WRITE;
  if (fcntl(fd_, F_ADD_SEALS, seals) != 0)
    return Error{std::string("cannot seal the size of shared memory: ") + std::strerror(errno)};
  if (fcntl(fd_, F_ADD_SEALS, F_SEAL_SEAL) != 0)
    return Error{std::string("cannot seal shared memory: ") + std::strerror(errno)};
  return Ok{};
}

Result<int> SharedMemory::ReadOnlyDescriptor() const {
  std::string path = "/proc/self/fd/" + std::to_string(fd_);
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Error{"cannot reopen shared memory read-only (" + path + "): " + std::strerror(errno)};
  return fd;
}

}  // namespace accelopt::eval
