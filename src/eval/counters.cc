#include "eval/counters.h"

#include <linux/perf_event.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>

namespace accelopt::eval {
namespace {

struct Event {
  uint32_t type;
  uint64_t config;
};

// The last is the data-TLB load misses: a PMU may lack that event and still count the others.
constexpr Event kCounted[ProcessCounters::kEvents] = {
    {PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES},
    {PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS},
    {PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_MISSES},
    {PERF_TYPE_HW_CACHE,
     PERF_COUNT_HW_CACHE_DTLB | (PERF_COUNT_HW_CACHE_OP_READ << 8) | (PERF_COUNT_HW_CACHE_RESULT_MISS << 16)},
};
constexpr int kDtlb = ProcessCounters::kEvents - 1;

}  // namespace

ProcessCounters::ProcessCounters(pid_t pid) {
  for (int i = 0; i < kEvents; ++i) {
    perf_event_attr attr{};
    attr.size = sizeof attr;
    attr.type = kCounted[i].type;
    attr.config = kCounted[i].config;
    attr.disabled = 1;
    attr.inherit = 1;  // threads created later (the OpenMP pool) count too
    attr.exclude_kernel = 1;
    attr.exclude_hv = 1;
    attr.read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
    fds_[i] = static_cast<int>(syscall(SYS_perf_event_open, &attr, pid, -1, -1, PERF_FLAG_FD_CLOEXEC));
    if (fds_[i] < 0 && i != kDtlb && unavailable_.empty())
      unavailable_ = std::string("perf_event_open: ") + std::strerror(errno);
  }
}

ProcessCounters::~ProcessCounters() {
  for (int fd : fds_)
    if (fd >= 0) close(fd);
}

void ProcessCounters::Enable() {
  for (int fd : fds_)
    if (fd >= 0) ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
}

void ProcessCounters::Disable() {
  for (int fd : fds_)
    if (fd >= 0) ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
}

CounterValues ProcessCounters::Read(long calls) const {
  CounterValues out;
  if (!unavailable_.empty()) {
    out.unavailable_reason = unavailable_;
    return out;
  }
  double per_call[kEvents] = {0, 0, 0, -1};
  for (int i = 0; i < kEvents; ++i) {
    if (i == kDtlb && fds_[i] < 0) continue;  // not offered: stays negative
    uint64_t values[3] = {0, 0, 0};
    if (read(fds_[i], values, sizeof values) != sizeof values) {
      out.unavailable_reason = "cannot read the counters";
      return out;
    }
    // Scaled for multiplexing (time running < time enabled).
    double scaled = values[2] ? double(values[0]) * double(values[1]) / double(values[2]) : 0;
    per_call[i] = scaled / std::max<long>(calls, 1);
  }
  out.available = true;
  out.cycles = per_call[0];
  out.instructions = per_call[1];
  out.cache_misses = per_call[2];
  out.dtlb_load_misses = per_call[kDtlb];
  return out;
}

}  // namespace accelopt::eval
