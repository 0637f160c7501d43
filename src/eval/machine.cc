#include "eval/machine.h"

#include <omp.h>
#include <sched.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include <fmt/core.h>

#include "core/hash.h"

namespace accelopt::eval {
namespace {

std::string Trim(const std::string& s) {
  const auto first = s.find_first_not_of(" \t");
  if (first == std::string::npos) return "";
  const auto last = s.find_last_not_of(" \t\r\n");
  return s.substr(first, last - first + 1);
}

int ParseIntOr(const std::string& s, int fallback) {
  char* end = nullptr;
  const long v = std::strtol(s.c_str(), &end, 0);
  return end == s.c_str() ? fallback : static_cast<int>(v);
}

// The flags that decide which kernels can run fast, in a fixed order so the
// fingerprint does not depend on /proc/cpuinfo's ordering.
constexpr const char* kSimdFlags[] = {
    "sse4_2",      "avx",         "avx2",        "fma",      "f16c",       "avx_vnni",   "avx512f",
    "avx512dq",    "avx512cd",    "avx512bw",    "avx512vl", "avx512ifma", "avx512vbmi", "avx512_vbmi2",
    "avx512_vnni", "avx512_bf16", "avx512_fp16", "amx_tile", "amx_bf16",   "amx_int8",
};

// Compiled with -march=native (CMakeLists.txt), as the calibration kernels are.
int CompiledSimdBits() {
#if defined(__AVX512F__)
  return 512;
#elif defined(__AVX__)
  return 256;
#elif defined(__SSE2__)
  return 128;
#else
  return 32;  // scalar build: one float per "register"
#endif
}

}  // namespace

CpuInfo ReadCpuInfo() {
  CpuInfo info;
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  bool seen_field = false;
  while (std::getline(in, line)) {
    const auto colon = line.find(':');
    if (colon == std::string::npos) {
      if (seen_field) break;  // blank line ends the first block
      continue;
    }
    seen_field = true;
    const std::string key = Trim(line.substr(0, colon));
    const std::string value = Trim(line.substr(colon + 1));
    if (key == "vendor_id") {
      info.vendor = value;
    } else if (key == "model name") {
      info.model_name = value;
    } else if (key == "cpu family") {
      info.family = ParseIntOr(value, -1);
    } else if (key == "model") {
      info.model = ParseIntOr(value, -1);
    } else if (key == "flags") {
      std::istringstream words(value);
      for (std::string w; words >> w;) info.flags.insert(w);
    }
  }
  return info;
}

int AffinityCores() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) == 0) {
    const int n = CPU_COUNT(&set);
    if (n > 0) return n;
  }
  return std::max(1, omp_get_num_procs());
}

MachineIdentity MachineIdentityOf(const CpuInfo& cpu) {
  MachineIdentity id;
  id.cpu_model = cpu.model_name;
  id.cores = AffinityCores();
  for (const char* flag : kSimdFlags) {
    if (cpu.flags.count(flag)) id.isa.emplace_back(flag);
  }
  id.simd_bits = CompiledSimdBits();
  // simd_bits is part of the key: the same CPU built for a narrower ISA has other peaks.
  std::string key = id.cpu_model;
  key.append("\n").append(std::to_string(id.cores)).append("\n");
  for (const auto& flag : id.isa) key.append(flag).append(",");
  key.append("\n").append(std::to_string(id.simd_bits));
  // FNV, not a content hash: the key is the engine's own reading of the CPU
  // (no input chooses it), and saved hardware profiles are found by it.
  id.fingerprint = Hex64(Fnv1a64(key));
  return id;
}

MachineIdentity DetectMachine() { return MachineIdentityOf(ReadCpuInfo()); }

std::string DescribeCaches() {
  std::string out;
  const std::string base = "/sys/devices/system/cpu/cpu0/cache/index";
  for (int i = 0; i < 8; ++i) {
    auto read = [&](const char* field) {
      std::ifstream in(base + std::to_string(i) + "/" + field);
      std::string value;
      std::getline(in, value);
      return value;
    };
    std::string level = read("level"), type = read("type"), size = read("size"), shared = read("shared_cpu_list");
    if (level.empty()) break;
    if (type == "Instruction" || size.empty()) continue;
    // "2048K" -> "2 MiB"; sizes in /sys are in KiB with a K suffix.
    long kib = std::atol(size.c_str());
    std::string amount =
        kib >= 1024 && kib % 1024 == 0 ? std::to_string(kib / 1024) + " MiB" : std::to_string(kib) + " KiB";
    // How many CPUs share it: "0-1" or "0,2" lists.
    int sharing = 0;
    std::istringstream parts(shared);
    for (std::string part; std::getline(parts, part, ',');) {
      size_t dash = part.find('-');
      sharing += dash == std::string::npos ? 1 : std::atoi(part.c_str() + dash + 1) - std::atoi(part.c_str()) + 1;
    }
    out += (out.empty() ? "" : ", ") + ("L" + level + (type == "Data" ? "d " : " ")) + amount +
           (sharing <= 1 ? " per core" : " shared by " + std::to_string(sharing) + " CPUs");
  }
  return out;
}

double AvailableMemoryBytes() {
  std::ifstream meminfo("/proc/meminfo");
  std::string key;
  double kib = 0;
  std::string unit;
  while (meminfo >> key >> kib >> unit)
    if (key == "MemAvailable:") return kib * 1024;
  return 0;
}

Status CheckCoresAllowed(const std::vector<int>& cpus, const std::string& what) {
  cpu_set_t allowed;
  if (sched_getaffinity(0, sizeof allowed, &allowed) == 0)
    for (int c : cpus)
      if (c < 0 || c >= CPU_SETSIZE || !CPU_ISSET(c, &allowed))
        return Error{fmt::format("{}: core {} is not available to this process ({} cores allowed)", what, c,
                                 CPU_COUNT(&allowed))};
  return Ok{};
}

}  // namespace accelopt::eval
