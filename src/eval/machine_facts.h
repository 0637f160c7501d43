#pragma once
/// eval: what a kernel engineer asks about a machine before tuning for it,
/// beyond its cores, SIMD width and caches (machine.h): the CPU's
/// microarchitecture, its TLBs, the page size and huge pages, the compiler
/// that builds the kernels, and whether hardware counters can be read here.
/// Each fact says plainly when the system does not tell it.

#include <string>
#include <vector>

#include "eval/machine.h"

namespace accelopt::eval {

/// The microarchitecture a vendor, family and model name ("Zen 3",
/// "Sapphire Rapids"); "" when this table does not know it.
std::string Microarchitecture(const std::string& vendor, int family, int model);

/// One level of TLB, as the CPU reports it (cpuid).
struct TlbLevel {
  std::string name;   ///< "L1 data", "L2 unified", ...
  std::string pages;  ///< "4K", "2M/4M", "1G", or several joined by '+'
  int entries = 0;
  std::string ways;   ///< "8-way", "fully associative", "" when not said
};

/// The TLBs of this CPU from cpuid (AMD leaves 0x80000005/6 and 0x80000019,
/// Intel leaf 0x18), else /proc/cpuinfo's "TLB size"; empty when neither tells.
std::vector<TlbLevel> ReadTlbs();
/// "L1 data 64 entries (4K, fully associative); L2 unified 2048 entries (4K, 8-way)".
std::string DescribeTlbs(const std::vector<TlbLevel>& tlbs);

/// The page size, the transparent huge page mode and the huge page size:
/// "4 KiB pages; transparent huge pages: madvise (2 MiB)".
std::string DescribePages();

/// Whether this process can read hardware counters (perf_event_open of
/// cycles, instructions, cache and TLB misses), and if not, why: "hardware
/// counters: readable (cycles, instructions, LLC misses, dTLB misses)" or
/// "hardware counters: not offered here (perf_event_open: No such file or
/// directory; a VM without a virtual PMU)".
std::string DescribeCounters();

/// The first line of `compiler --version` ("g++ (Debian 12.2.0-14) 12.2.0"),
/// or "" when it cannot be run.
std::string CompilerVersion(const std::string& compiler);

/// All of the above for the agents, one clause each, joined by "; ":
/// "CPU: AMD EPYC (Zen 3, family 25 model 1); TLBs: ...; 4 KiB pages; ...;
/// compiler: ...; hardware counters: ...".
std::string DescribeMachineFacts(const CpuInfo& cpu, const std::string& compiler);

}  // namespace accelopt::eval
