#pragma once
/// eval: the identity of the machine that measures. Every target keeps its
/// hardware profiles and its results per machine fingerprint; the host CPU's
/// identity is the cpu target's machine and the code target's.

#include <set>
#include <string>
#include <vector>

#include "core/result.h"

namespace accelopt::eval {

/// Identity of a machine: two machines with the same fingerprint share a profile.
struct MachineIdentity {
  std::string cpu_model;         ///< "model name" from /proc/cpuinfo
  int cores = 0;                 ///< CPUs this process may run on
  std::vector<std::string> isa;  ///< SIMD-relevant flags (sse4_2, avx2, fma, avx512f, ...)
  int simd_bits = 0;             ///< widest vector register the build uses: 128, 256 or 512
  std::string fingerprint;       ///< short stable hash of the fields above
};

/// The first processor block of /proc/cpuinfo, as read.
struct CpuInfo {
  std::string vendor;
  std::string model_name;
  int family = -1;
  int model = -1;
  std::set<std::string> flags;
};

/// Reads the first processor block of /proc/cpuinfo; fields it lacks stay empty.
CpuInfo ReadCpuInfo();

/// CPUs this process may run on (its affinity mask; at least 1).
int AffinityCores();

/// The identity of a machine with this CPU, as this build sees it (its SIMD width is part of the key).
MachineIdentity MachineIdentityOf(const CpuInfo& cpu);

/// Reads /proc/cpuinfo and the affinity mask. Never fails: unknown fields stay empty.
MachineIdentity DetectMachine();

/// The data and unified caches of the first CPU, in words for a kernel
/// engineer: "L1d 48 KiB per core, L2 2 MiB per core, L3 480 MiB shared by 2
/// cores" (from /sys; "" when the system does not say).
std::string DescribeCaches();

/// Bytes of memory the machine can still give (MemAvailable), or 0 when unknown.
double AvailableMemoryBytes();

/// An Error naming the first of `cpus` this process may not run on (`what`
/// names the setting: "--cpus"); Ok when all may be used.
Status CheckCoresAllowed(const std::vector<int>& cpus, const std::string& what);

}  // namespace accelopt::eval
