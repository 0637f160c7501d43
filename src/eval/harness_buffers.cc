#include "eval/harness_buffers.h"

#include <sys/mman.h>

#include "eval/protocol.h"

namespace accelopt::eval {

void* MapGuarded(int fd, uint64_t offset, uint64_t bytes, bool writable) {
  const size_t pages = protocol::WholePages(bytes);
  // Reserved, never backed: the guards cost nothing. Ordinary 4 KiB pages, as
  // kernels get them from malloc in a framework.
  const size_t total = kGuardBytes + pages + kGuardBytes;
  void* base = mmap(nullptr, total, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (base == MAP_FAILED) return nullptr;
  char* data = static_cast<char*>(base) + kGuardBytes;
  if (bytes == 0) return data;  // an empty argument: a pointer into the guard, never dereferenced
  int prot = writable ? PROT_READ | PROT_WRITE : PROT_READ;
  void* mapped = mmap(data, pages, prot, MAP_SHARED | MAP_FIXED, fd, static_cast<off_t>(offset));
  if (mapped == MAP_FAILED) {
    munmap(base, total);
    return nullptr;
  }
  return data;
}

}  // namespace accelopt::eval
