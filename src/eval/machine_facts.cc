#include "eval/machine_facts.h"

#include <cpuid.h>
#include <linux/perf_event.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

#include "core/command.h"
#include "core/text.h"

namespace accelopt::eval {
namespace {

std::string ReadFirstLine(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

bool Cpuid(unsigned leaf, unsigned subleaf, std::array<unsigned, 4>& r) {
  if (__get_cpuid_max(leaf & 0x80000000u, nullptr) < leaf) return false;
  __cpuid_count(leaf, subleaf, r[0], r[1], r[2], r[3]);
  return true;
}

// AMD's associativity code of leaf 0x80000006 (and 0x80000019), as ways.
std::string AmdL2Ways(unsigned code) {
  switch (code) {
    case 0: return "";
    case 1: return "direct-mapped";
    case 2: return "2-way";
    case 3: return "3-way";
    case 4: return "4-way";
    case 5: return "6-way";
    case 6: return "8-way";
    case 8: return "16-way";
    case 0xa: return "32-way";
    case 0xb: return "48-way";
    case 0xc: return "64-way";
    case 0xd: return "96-way";
    case 0xe: return "128-way";
    case 0xf: return "fully associative";
    default: return "";
  }
}

// AMD's L1 associativity is the number of ways itself; 0xff is fully associative.
std::string AmdL1Ways(unsigned ways) {
  if (ways == 0xff) return "fully associative";
  if (ways == 0) return "";
  return std::to_string(ways) + "-way";
}

void AddAmd(std::vector<TlbLevel>& out, const std::string& name, const std::string& pages, unsigned entries,
            const std::string& ways) {
  if (entries > 0) out.push_back({name, pages, static_cast<int>(entries), ways});
}

std::vector<TlbLevel> AmdTlbs() {
  std::vector<TlbLevel> out;
  std::array<unsigned, 4> r{};
  if (Cpuid(0x80000005, 0, r)) {
    // EAX: 2M/4M pages, EBX: 4K pages; data in the high half, instruction in the low.
    AddAmd(out, "L1 data", "4K", (r[1] >> 16) & 0xff, AmdL1Ways(r[1] >> 24));
    AddAmd(out, "L1 data", "2M/4M", (r[0] >> 16) & 0xff, AmdL1Ways(r[0] >> 24));
    AddAmd(out, "L1 instruction", "4K", r[1] & 0xff, AmdL1Ways((r[1] >> 8) & 0xff));
  }
  if (Cpuid(0x80000006, 0, r)) {
    AddAmd(out, "L2 data", "4K", (r[1] >> 16) & 0xfff, AmdL2Ways(r[1] >> 28));
    AddAmd(out, "L2 data", "2M/4M", (r[0] >> 16) & 0xfff, AmdL2Ways(r[0] >> 28));
    AddAmd(out, "L2 instruction", "4K", r[1] & 0xfff, AmdL2Ways((r[1] >> 12) & 0xf));
  }
  if (Cpuid(0x80000019, 0, r)) {
    AddAmd(out, "L1 data", "1G", (r[0] >> 16) & 0xfff, AmdL2Ways((r[0] >> 28) & 0xf));
    AddAmd(out, "L2 data", "1G", (r[1] >> 16) & 0xfff, AmdL2Ways((r[1] >> 28) & 0xf));
  }
  return out;
}

std::vector<TlbLevel> IntelTlbs() {
  std::vector<TlbLevel> out;
  std::array<unsigned, 4> r{};
  if (!Cpuid(0x18, 0, r)) return out;
  const unsigned last = r[0];
  for (unsigned sub = 0; sub <= last && sub < 64; ++sub) {
    Cpuid(0x18, sub, r);
    const unsigned type = r[3] & 0x1f;
    if (type == 0) continue;
    static const char* const kTypes[] = {"", "data", "instruction", "unified", "load", "store"};
    const unsigned level = (r[3] >> 5) & 0x7;
    std::string pages;
    for (auto [bit, size] : {std::pair<int, const char*>{0, "4K"}, {1, "2M"}, {2, "4M"}, {3, "1G"}})
      if (r[1] & (1u << bit)) pages += (pages.empty() ? "" : "/") + std::string(size);
    const unsigned ways = r[1] >> 16, sets = r[2];
    const bool full = (r[3] >> 8) & 1;
    TlbLevel t{"L" + std::to_string(level) + " " + (type < 6 ? kTypes[type] : "other"), pages,
               static_cast<int>(ways * sets), full ? "fully associative" : std::to_string(ways) + "-way"};
    if (t.entries > 0) out.push_back(t);
  }
  return out;
}

}  // namespace

std::string Microarchitecture(const std::string& vendor, int family, int model) {
  if (vendor == "AuthenticAMD") {
    if (family == 0x17) return model >= 0x30 ? "Zen 2" : "Zen / Zen+";
    if (family == 0x19) return (model >= 0x10 && model < 0x20) || (model >= 0x60 && model < 0x80) || model >= 0xa0
                                   ? "Zen 4"
                                   : "Zen 3";
    if (family == 0x1a) return "Zen 5";
    return "";
  }
  if (vendor == "GenuineIntel" && family == 6) {
    switch (model) {
      case 0x55: return "Skylake-SP / Cascade Lake";
      case 0x6a: case 0x6c: return "Ice Lake-SP";
      case 0x8f: return "Sapphire Rapids";
      case 0xcf: return "Emerald Rapids";
      case 0xad: case 0xae: return "Granite Rapids";
      case 0xaf: return "Sierra Forest";
      case 0x8c: case 0x8d: return "Tiger Lake";
      case 0x97: case 0x9a: return "Alder Lake";
      case 0xb7: case 0xba: case 0xbf: return "Raptor Lake";
      case 0x4e: case 0x5e: case 0x8e: case 0x9e: return "Skylake client";
      case 0x3f: return "Haswell-EP";
      case 0x4f: return "Broadwell-EP";
      default: return "";
    }
  }
  return "";
}

std::vector<TlbLevel> ReadTlbs() {
  std::array<unsigned, 4> r{};
  if (Cpuid(0, 0, r)) {
    char vendor[13] = {};
    std::memcpy(vendor, &r[1], 4);
    std::memcpy(vendor + 4, &r[3], 4);
    std::memcpy(vendor + 8, &r[2], 4);
    auto tlbs = std::string(vendor) == "GenuineIntel" ? IntelTlbs() : AmdTlbs();
    if (!tlbs.empty()) return tlbs;
  }
  // A hypervisor may hide the leaves; /proc/cpuinfo's summary is what is left.
  std::ifstream in("/proc/cpuinfo");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("TLB size", 0) != 0) continue;
    int entries = 0;
    if (sscanf(line.c_str() + line.find(':') + 1, "%d", &entries) == 1 && entries > 0)
      return {{"L2", "4K", entries, ""}};
  }
  return {};
}

std::string DescribeTlbs(const std::vector<TlbLevel>& tlbs) {
  std::string out;
  for (const auto& t : tlbs) {
    out += (out.empty() ? "" : "; ") + t.name + " " + std::to_string(t.entries) + " entries (" + t.pages + " pages" +
           (t.ways.empty() ? "" : ", " + t.ways) + ")";
  }
  return out;
}

std::string DescribePages() {
  const long page = sysconf(_SC_PAGESIZE);
  std::string out = page > 0 ? std::to_string(page / 1024) + " KiB pages" : "page size unknown";
  // "always [madvise] never": the bracketed word is the mode.
  const std::string thp = ReadFirstLine("/sys/kernel/mm/transparent_hugepage/enabled");
  const size_t open = thp.find('['), close = thp.find(']');
  std::string mode = (open != std::string::npos && close > open) ? thp.substr(open + 1, close - open - 1) : "";
  std::string huge;
  std::ifstream meminfo("/proc/meminfo");
  for (std::string line; std::getline(meminfo, line);) {
    long kb = 0;
    if (sscanf(line.c_str(), "Hugepagesize: %ld kB", &kb) == 1 && kb > 0)
      huge = kb >= 1024 * 1024 ? std::to_string(kb / (1024 * 1024)) + " GiB" : std::to_string(kb / 1024) + " MiB";
  }
  if (mode.empty())
    out += "; transparent huge pages: not said by this system";
  else
    out += "; transparent huge pages: " + mode +
           (mode == "madvise" ? " (a kernel gets them for a buffer only by madvise(MADV_HUGEPAGE))" : "");
  if (!huge.empty()) out += "; huge page size " + huge;
  return out;
}

std::string DescribeCounters() {
  struct Counter {
    const char* name;
    uint32_t type;
    uint64_t config;
  };
  const Counter counters[] = {
      {"cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES},
      {"instructions", PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS},
      {"LLC misses", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_MISSES},
      {"dTLB load misses", PERF_TYPE_HW_CACHE,
       PERF_COUNT_HW_CACHE_DTLB | (PERF_COUNT_HW_CACHE_OP_READ << 8) | (PERF_COUNT_HW_CACHE_RESULT_MISS << 16)},
  };
  std::string readable, first_error;
  for (const Counter& c : counters) {
    perf_event_attr attr{};
    attr.size = sizeof attr;
    attr.type = c.type;
    attr.config = c.config;
    attr.disabled = 1;
    attr.exclude_kernel = 1;
    attr.exclude_hv = 1;
    const long fd = syscall(SYS_perf_event_open, &attr, 0, -1, -1, 0);
    if (fd >= 0) {
      close(static_cast<int>(fd));
      readable += (readable.empty() ? "" : ", ") + std::string(c.name);
    } else if (first_error.empty()) {
      first_error = std::string(c.name) + ": " + std::strerror(errno);
      if (errno == ENOENT || errno == EOPNOTSUPP) first_error += ", as in a VM without a virtual PMU";
      if (errno == EACCES || errno == EPERM)
        first_error += " (kernel.perf_event_paranoid is " + ReadFirstLine("/proc/sys/kernel/perf_event_paranoid") + ")";
    }
  }
  if (readable.empty()) return "hardware counters: not offered here (perf_event_open of " + first_error + ")";
  return "hardware counters: readable (" + readable + ")" +
         (first_error.empty() ? "" : "; not readable: " + first_error);
}

std::string CompilerVersion(const std::string& compiler) {
  if (compiler.empty()) return "";
  auto ran = RunCommand({compiler, "--version"});
  if (!ran || ran->exit_code != 0) return "";
  return TrimRight(FirstLine(ran->out));
}

std::string DescribeMachineFacts(const CpuInfo& cpu, const std::string& compiler) {
  std::vector<std::string> parts;
  std::string model = cpu.model_name.empty() ? "model not said" : cpu.model_name;
  const std::string uarch = Microarchitecture(cpu.vendor, cpu.family, cpu.model);
  std::string id = cpu.family >= 0 ? "family " + std::to_string(cpu.family) + " model " + std::to_string(cpu.model) : "";
  parts.push_back("CPU: " + model + " (" + (uarch.empty() ? "" : uarch + ", ") + (id.empty() ? "family not said" : id) +
                  ")");
  const std::string tlbs = DescribeTlbs(ReadTlbs());
  parts.push_back("TLBs: " + (tlbs.empty() ? std::string("not said by this CPU") : tlbs));
  parts.push_back(DescribePages());
  if (const std::string version = CompilerVersion(compiler); !version.empty()) parts.push_back("compiler: " + version);
  parts.push_back(DescribeCounters());
  std::string out;
  for (const auto& p : parts) out += (out.empty() ? "" : "; ") + p;
  return out;
}

}  // namespace accelopt::eval
