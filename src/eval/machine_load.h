#pragma once
/// What else used the machine while something was measured: CPU time from
/// /proc/stat (all CPUs: busy, and stolen by the hypervisor) against the CPU
/// time of the processes doing the measuring (this process and, optionally,
/// one child). Resolution: the kernel's clock tick (10 ms per CPU at 100 Hz),
/// so it sees disturbances of a few percent over half a second, not single
/// interruptions.

#include <sys/types.h>

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

/// Shares of all CPU time between two snapshots (0..1).
struct MachineLoad {
  double others = 0;  ///< used by other processes (busy minus ours), steal included
  double steal = 0;   ///< stolen by the hypervisor
};

MachineLoad LoadBetween(const CpuSnapshot& before, const CpuSnapshot& after);

}  // namespace accelopt::eval
