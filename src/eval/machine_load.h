#pragma once
/// What else used the machine while something was measured: CPU time from
/// /proc/stat (all CPUs: busy, and stolen by the hypervisor) against the CPU
/// time of the processes doing the measuring (this process and, optionally,
/// one child). Resolution: the kernel's clock tick (10 ms per CPU at 100 Hz),
/// so it sees disturbances of a few percent over half a second, not single
/// interruptions.

#include <sys/types.h>

#include <functional>
#include <vector>

namespace accelopt::eval {

/// CPU time counters at one moment, in clock ticks.
struct CpuSnapshot {
  double busy = 0;   ///< all CPUs: user, nice, system, irq, softirq, steal
  double steal = 0;  ///< all CPUs: time the hypervisor gave to others
  double total = 0;  ///< all CPUs: busy + idle + iowait
  double ours = 0;   ///< this process and the child given, user + system
};

/// Reads the counters now; `child` (0: none) is counted as ours.
CpuSnapshot TakeCpuSnapshot(pid_t child = 0);
/// The same, with several children counted as ours (the two kernels of a comparison).
CpuSnapshot TakeCpuSnapshot(const std::vector<pid_t>& children);

/// Shares of all CPU time between two snapshots (0..1).
struct MachineLoad {
  double others = 0;  ///< used by other processes (busy minus ours), steal included
  double steal = 0;   ///< stolen by the hypervisor
};

MachineLoad LoadBetween(const CpuSnapshot& before, const CpuSnapshot& after);

/// Waiting for the machine to be quiet before a disturbed measurement is taken again.
struct QuietWait {
  double share = 0.10;        ///< quiet: others use at most this share of the CPU
  double max_seconds = 5;     ///< give up after this long
  double window_seconds = 0.5;  ///< the load is read over windows this long (ticks are coarse)
  /// Told after each busy window: others' share in it and the seconds left (a countdown); may be empty.
  std::function<void(double others, double seconds_left)> on_busy;
};

/// Watches the machine in windows until one is quiet (true) or the time is
/// up (false). `children` are processes of ours whose CPU time does not count
/// as others'. Blocks; used between a disturbed series and its repetition.
bool WaitForQuiet(const QuietWait& wait, const std::vector<pid_t>& children = {});

}  // namespace accelopt::eval
