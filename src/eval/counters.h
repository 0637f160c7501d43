#pragma once
/// Hardware counters of another process (the kernel's), read by the monitor
/// through perf_event_open: cycles, instructions and cache misses of all its
/// threads, counted only while enabled (around its timed calls); data-TLB load
/// misses too where the PMU offers that event.

#include <sys/types.h>

#include <string>

#include "core/profile.h"

namespace accelopt::eval {

class ProcessCounters {
 public:
  static constexpr int kEvents = 4;  ///< cycles, instructions, cache misses, dTLB load misses

  /// Attaches to `pid` (before it starts threads: those it starts later are
  /// counted too). When the machine or its settings refuse, unavailable() says why.
  explicit ProcessCounters(pid_t pid);
  ~ProcessCounters();
  ProcessCounters(const ProcessCounters&) = delete;
  ProcessCounters& operator=(const ProcessCounters&) = delete;

  const std::string& unavailable() const { return unavailable_; }
  void Enable();
  void Disable();
  /// Per call, over `calls` counted calls (scaled for multiplexing).
  CounterValues Read(long calls) const;

 private:
  int fds_[kEvents] = {-1, -1, -1, -1};
  std::string unavailable_;
};

}  // namespace accelopt::eval
