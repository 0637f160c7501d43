#include "targets/cpu/calibrate.h"

#include "core/clock.h"
#include "core/hash.h"

#include <cblas.h>
#include <omp.h>
#include <sched.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#if defined(__SSE2__)
#include <immintrin.h>
#endif

namespace accelopt::cpu {
namespace {

using Clock = std::chrono::steady_clock;

// Results of the kernels land here so the compiler must compute them.
volatile float g_float_sink = 0;
volatile std::uint64_t g_int_sink = 0;
// Kernel constants are read through volatiles so nothing can be folded at compile time.
volatile float g_one = 1.0f;
volatile float g_small = 1e-7f;

// ---------------------------------------------------------------------------
// Machine identity.

struct CpuInfo {
  std::string vendor;
  std::string model_name;
  int family = -1;
  int model = -1;
  std::set<std::string> flags;
};

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

// Reads the first processor block of /proc/cpuinfo; fields it lacks stay empty.
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

// The flags that decide which kernels can run fast, in a fixed order so the
// fingerprint does not depend on /proc/cpuinfo's ordering.
constexpr const char* kSimdFlags[] = {
    "sse4_2",      "avx",         "avx2",        "fma",      "f16c",       "avx_vnni",   "avx512f",
    "avx512dq",    "avx512cd",    "avx512bw",    "avx512vl", "avx512ifma", "avx512vbmi", "avx512_vbmi2",
    "avx512_vnni", "avx512_bf16", "avx512_fp16", "amx_tile", "amx_bf16",   "amx_int8",
};

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

// ---------------------------------------------------------------------------
// Timing.

// How a throughput test spends its time: `runs` timed calls of about `run_s` each.
struct Schedule {
  double run_s = 0.02;
  int runs = 5;
};

struct Timing {
  long iters = 0;
  double best_seconds = 0;
};

// Sizes the work so one `run(iters)` lasts about schedule.run_s, then returns
// the fastest of schedule.runs calls at that size. Sizing times `probe`, which
// must do the same work per thread as `run` but on the calling thread alone:
// a small parallel call can stall for milliseconds on a barrier while a
// thread is preempted, and sizing from such a stall would leave every run
// tiny and dominated by stalls. Each probe size takes the fastest of three
// calls for the same reason; the probe calls double as warm-up.
template <typename Run, typename Probe>
Timing TimeBest(Run run, Probe probe, const Schedule& schedule) {
  const double probe_s = std::min(0.005, schedule.run_s);
  long iters = 1;
  for (;;) {
    double t = INFINITY;
    for (int k = 0; k < 3; ++k) {
      const auto start = Clock::now();
      probe(iters);
      t = std::min(t, SecondsSince(start));
    }
    if (t >= probe_s || iters >= (1L << 40)) {
      const double scaled = static_cast<double>(iters) * schedule.run_s / std::max(t, 1e-9);
      iters = std::max(1L, std::lround(scaled));
      break;
    }
    iters *= 2;
  }
  Timing timing{iters, INFINITY};
  for (int r = 0; r < std::max(1, schedule.runs); ++r) {
    const auto start = Clock::now();
    run(iters);
    timing.best_seconds = std::min(timing.best_seconds, SecondsSince(start));
  }
  return timing;
}

// ---------------------------------------------------------------------------
// Clock: a chain of dependent register adds retires one per cycle on every
// x86 core we know of; register (not immediate) operands because some cores
// fold add-immediate chains in the renamer.

constexpr int kAddsPerStep = 100;  // must match the .rept count below

void AddChain(long steps) {
  std::uint64_t x = 0;
  std::uint64_t one = 1;
  for (long i = 0; i < steps; ++i) {
#if defined(__x86_64__)
    asm volatile(".rept 100\n\taddq %1, %0\n\t.endr" : "+r"(x) : "r"(one));
#else
    for (int k = 0; k < kAddsPerStep; ++k) {
      x += one;
      asm volatile("" : "+r"(x));  // keeps each add; the chain cannot collapse
    }
#endif
  }
  g_int_sink = x;
}

// Runs of 2 ms: short enough that some fall between two preemptions of this
// thread even on a busy machine, long enough that timer overhead is noise.
double MeasureClockGhz(const Schedule& schedule) {
  Schedule slices;
  slices.run_s = std::min(schedule.run_s, 0.002);
  slices.runs = std::max(schedule.runs, static_cast<int>(schedule.run_s * schedule.runs / slices.run_s));
  const Timing t = TimeBest(AddChain, AddChain, slices);
  return static_cast<double>(t.iters) * kAddsPerStep / t.best_seconds / 1e9;
}

// ---------------------------------------------------------------------------
// Arithmetic throughput kernels, widest SIMD the build has.

#if defined(__AVX512F__)
using Vec = __m512;
constexpr int kLanes = 16;
constexpr int kAccumulators = 16;  // 32 zmm registers: room for 16 chains + constants
inline Vec Splat(float x) { return _mm512_set1_ps(x); }
inline Vec Fma(Vec a, Vec b, Vec c) { return _mm512_fmadd_ps(a, b, c); }
inline Vec Add(Vec a, Vec b) { return _mm512_add_ps(a, b); }
inline Vec Mul(Vec a, Vec b) { return _mm512_mul_ps(a, b); }
inline void Store(float* out, Vec v) { _mm512_storeu_ps(out, v); }
inline Vec Load(const float* p) { return _mm512_load_ps(p); }
inline void StreamStore(float* out, Vec v) { _mm512_stream_ps(out, v); }
#elif defined(__AVX__)
using Vec = __m256;
constexpr int kLanes = 8;
constexpr int kAccumulators = 12;  // 16 ymm registers: 12 chains + 2 constants, no spills
inline Vec Splat(float x) { return _mm256_set1_ps(x); }
#if defined(__FMA__)
inline Vec Fma(Vec a, Vec b, Vec c) { return _mm256_fmadd_ps(a, b, c); }
#else
inline Vec Fma(Vec a, Vec b, Vec c) { return _mm256_add_ps(_mm256_mul_ps(a, b), c); }
#endif
inline Vec Add(Vec a, Vec b) { return _mm256_add_ps(a, b); }
inline Vec Mul(Vec a, Vec b) { return _mm256_mul_ps(a, b); }
inline void Store(float* out, Vec v) { _mm256_storeu_ps(out, v); }
inline Vec Load(const float* p) { return _mm256_load_ps(p); }
inline void StreamStore(float* out, Vec v) { _mm256_stream_ps(out, v); }
#elif defined(__SSE2__)
using Vec = __m128;
constexpr int kLanes = 4;
constexpr int kAccumulators = 12;
inline Vec Splat(float x) { return _mm_set1_ps(x); }
inline Vec Fma(Vec a, Vec b, Vec c) { return _mm_add_ps(_mm_mul_ps(a, b), c); }
inline Vec Add(Vec a, Vec b) { return _mm_add_ps(a, b); }
inline Vec Mul(Vec a, Vec b) { return _mm_mul_ps(a, b); }
inline void Store(float* out, Vec v) { _mm_storeu_ps(out, v); }
inline Vec Load(const float* p) { return _mm_load_ps(p); }
inline void StreamStore(float* out, Vec v) { _mm_stream_ps(out, v); }
#else
using Vec = float;
constexpr int kLanes = 1;
constexpr int kAccumulators = 12;
inline Vec Splat(float x) { return x; }
inline Vec Fma(Vec a, Vec b, Vec c) { return a * b + c; }
inline Vec Add(Vec a, Vec b) { return a + b; }
inline Vec Mul(Vec a, Vec b) { return a * b; }
inline void Store(float* out, Vec v) { *out = v; }
#endif

// Folds every lane of every chain into the result, so no lane's work is dead
// and the compiler cannot narrow the vectors.
float SumAll(const Vec (&acc)[kAccumulators]) {
  Vec total = acc[0];
  for (int j = 1; j < kAccumulators; ++j) total = Add(total, acc[j]);
  float lanes[kLanes];
  Store(lanes, total);
  float sum = 0;
  for (float x : lanes) sum += x;
  return sum;
}

// kAccumulators independent chains cover FMA latency (4-5 cycles) times two
// pipes with room to spare. Each chain starts at a different runtime value so
// the compiler cannot merge chains. a*m + c with m < 1 converges to a fixed
// point: no overflow, no denormals, however long it runs.
float FmaKernel(long iters) {
  const float seed = g_one;
  const Vec m = Splat(seed * 0.5f);
  const Vec c = Splat(seed * 0.25f);
  Vec acc[kAccumulators];
#pragma GCC unroll 16
  for (int j = 0; j < kAccumulators; ++j) acc[j] = Splat(seed + 0.01f * j);
  for (long i = 0; i < iters; ++i) {
#pragma GCC unroll 16
    for (int j = 0; j < kAccumulators; ++j) acc[j] = Fma(acc[j], m, c);
  }
  return SumAll(acc);
}

// Half the chains add, half multiply: the two kinds can issue side by side.
// Adding 1e-7 stays finite for any feasible run; multiplying by a runtime 1.0
// keeps the product exactly stable.
float AddMulKernel(long iters) {
  const float seed = g_one;
  const Vec m = Splat(seed);
  const Vec c = Splat(g_small);
  Vec acc[kAccumulators];
#pragma GCC unroll 16
  for (int j = 0; j < kAccumulators; ++j) acc[j] = Splat(seed + 0.01f * j);
  for (long i = 0; i < iters; ++i) {
#pragma GCC unroll 16
    for (int j = 0; j < kAccumulators / 2; ++j) acc[j] = Add(acc[j], c);
#pragma GCC unroll 16
    for (int j = kAccumulators / 2; j < kAccumulators; ++j) acc[j] = Mul(acc[j], m);
  }
  return SumAll(acc);
}

// Runs `kernel` on every core at once; returns GFLOP/s of the best repeat.
double MeasureAllCores(float (*kernel)(long), double flops_per_iter, int threads, const Schedule& schedule) {
  int team = threads;  // OMP_THREAD_LIMIT may grant fewer; count the threads that ran
  auto run = [&](long iters) {
    float sum = 0;
#pragma omp parallel num_threads(threads) reduction(+ : sum)
    {
      if (omp_get_thread_num() == 0) team = omp_get_num_threads();
      sum += kernel(iters);
    }
    g_float_sink = sum;
  };
  auto probe = [&](long iters) { g_float_sink = kernel(iters); };
  const Timing t = TimeBest(run, probe, schedule);
  return flops_per_iter * team * static_cast<double>(t.iters) / t.best_seconds / 1e9;
}

// ---------------------------------------------------------------------------
// Memory bandwidth.

long ParseCacheSize(const std::string& s) {
  char* end = nullptr;
  const long v = std::strtol(s.c_str(), &end, 10);
  if (end == s.c_str() || v <= 0) return 0;
  switch (*end) {
    case 'K':
      return v << 10;
    case 'M':
      return v << 20;
    case 'G':
      return v << 30;
    default:
      return v;
  }
}

std::string ReadFirstLine(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return Trim(line);
}

// Size of cpu0's highest-level data or unified cache; 32 MiB when sysfs says nothing.
long LastLevelCacheBytes() {
  namespace fs = std::filesystem;
  constexpr long kFallback = 32L << 20;
  std::error_code ec;
  fs::directory_iterator it("/sys/devices/system/cpu/cpu0/cache", ec);
  if (ec) return kFallback;
  int best_level = -1;
  long best_size = 0;
  for (const auto& entry : it) {
    if (entry.path().filename().string().rfind("index", 0) != 0) continue;
    if (ReadFirstLine(entry.path() / "type") == "Instruction") continue;
    const int level = ParseIntOr(ReadFirstLine(entry.path() / "level"), -1);
    const long size = ParseCacheSize(ReadFirstLine(entry.path() / "size"));
    if (size > 0 && level > best_level) {
      best_level = level;
      best_size = size;
    }
  }
  return best_size > 0 ? best_size : kFallback;
}

struct FreeDeleter {
  void operator()(float* p) const { std::free(p); }
};
using Buffer = std::unique_ptr<float[], FreeDeleter>;

Buffer AllocateFloats(long n) {
  const std::size_t bytes = (static_cast<std::size_t>(n) * sizeof(float) + 63) / 64 * 64;
  return Buffer(static_cast<float*>(std::aligned_alloc(64, bytes)));
}

// STREAM triad. Counted as 12 bytes per element (read b, read c, write a),
// the STREAM convention: the write-allocate read of `a` that plain stores cause
// is NOT counted, so the bus actually moves ~16 bytes per element. The loop is
// plain compiler code; GCC emits ordinary (not non-temporal) stores. The
// result is the best of that, a triad and a copy with non-temporal stores, and
// a pure read.
double MeasureBandwidthGbs(long bytes_per_array, int threads, const Schedule& schedule) {
  long n = bytes_per_array / static_cast<long>(sizeof(float));
  Buffer a, b, c;
  // Halve on allocation failure rather than give up; below 1 MiB there is
  // nothing meaningful to measure and the figure stays 0.
  for (n = std::max(n, 1L);; n /= 2) {
    a = AllocateFloats(n);
    b = AllocateFloats(n);
    c = AllocateFloats(n);
    if (a && b && c) break;
    if (n < (1L << 18)) return 0;
  }
  float* __restrict pa = a.get();
  float* __restrict pb = b.get();
  float* __restrict pc = c.get();
  // First touch from the thread that will stream the page, so pages land on its NUMA node.
#pragma omp parallel for schedule(static) num_threads(threads)
  for (long i = 0; i < n; ++i) {
    pa[i] = 0.0f;
    pb[i] = 1.0f;
    pc[i] = 2.0f;
  }
  const float s = g_one * 3.0f;
  // Same static schedule every pass, so each thread revisits its own chunk: no barrier needed.
  auto run = [&](long passes) {
#pragma omp parallel num_threads(threads)
    for (long p = 0; p < passes; ++p) {
#pragma omp for schedule(static) nowait
      for (long i = 0; i < n; ++i) pa[i] = pb[i] + s * pc[i];
    }
    g_float_sink = pa[n / 2];
  };
  // One pass over arrays this large lasts milliseconds, so sizing in parallel is safe.
  const Timing t = TimeBest(run, run, schedule);
  const double bytes = 3.0 * sizeof(float) * static_cast<double>(n) * static_cast<double>(t.iters);
  double plain = bytes / t.best_seconds / 1e9;
#if defined(__SSE2__)
  // The same triad with non-temporal stores: no write-allocate read, so the
  // counted 12 bytes per element are all the bus moves. A kernel that streams
  // its outputs this way reaches it, so it is the machine's real limit; with
  // plain stores alone, such kernels would score above 100%.
  const long vectors = n / kLanes;
  auto stream = [&](long passes) {
#pragma omp parallel num_threads(threads)
    for (long p = 0; p < passes; ++p) {
      const Vec vs = Splat(s);
#pragma omp for schedule(static) nowait
      for (long v = 0; v < vectors; ++v)
        StreamStore(pa + v * kLanes, Add(Load(pb + v * kLanes), Mul(vs, Load(pc + v * kLanes))));
      _mm_sfence();
    }
    g_float_sink = pa[n / 2];
  };
  const Timing nt = TimeBest(stream, stream, schedule);
  const double nt_bytes = 3.0 * sizeof(float) * static_cast<double>(vectors * kLanes) * static_cast<double>(nt.iters);
  // Other mixes of reads and writes: a copy with non-temporal stores (one read,
  // one write stream) and a pure read. Kernels with these mixes (an
  // elementwise map, a reduction) reach more than a triad does; the roofline
  // needs the most any kernel can get.
  auto copy = [&](long passes) {
#pragma omp parallel num_threads(threads)
    for (long p = 0; p < passes; ++p) {
#pragma omp for schedule(static) nowait
      for (long v = 0; v < vectors; ++v) StreamStore(pa + v * kLanes, Load(pb + v * kLanes));
      _mm_sfence();
    }
    g_float_sink = pa[n / 3];
  };
  const Timing cp = TimeBest(copy, copy, schedule);
  const double copy_bytes = 2.0 * sizeof(float) * static_cast<double>(vectors * kLanes) * static_cast<double>(cp.iters);
  auto read = [&](long passes) {
    float total = 0;
#pragma omp parallel num_threads(threads) reduction(+ : total)
    for (long p = 0; p < passes; ++p) {
      Vec acc[4] = {Splat(0), Splat(0), Splat(0), Splat(0)};
#pragma omp for schedule(static) nowait
      for (long v = 0; v < vectors / 4 * 4; v += 4)
        for (int k = 0; k < 4; ++k) acc[k] = Add(acc[k], Load(pb + (v + k) * kLanes));
      float lanes[kLanes];
      Store(lanes, Add(Add(acc[0], acc[1]), Add(acc[2], acc[3])));
      for (float x : lanes) total += x;
    }
    g_float_sink = total;
  };
  const Timing rd = TimeBest(read, read, schedule);
  const double read_bytes =
      sizeof(float) * static_cast<double>(vectors / 4 * 4 * kLanes) * static_cast<double>(rd.iters);
  return std::max({plain, nt_bytes / nt.best_seconds / 1e9, copy_bytes / cp.best_seconds / 1e9,
                   read_bytes / rd.best_seconds / 1e9});
#else
  return plain;
#endif
}

// ---------------------------------------------------------------------------
// OpenBLAS anchor.

double MeasureSgemmGflops(long n, int threads, int repeats) {
  if (n <= 0) return 0;
  const std::size_t count = static_cast<std::size_t>(n) * static_cast<std::size_t>(n);
  std::vector<float> a(count), b(count), c(count);
  for (std::size_t i = 0; i < count; ++i) {
    a[i] = static_cast<float>(i % 7) * 0.1f;
    b[i] = static_cast<float>(i % 5) * 0.1f;
  }
  const int previous_threads = openblas_get_num_threads();
  openblas_set_num_threads(threads);
  const int ni = static_cast<int>(n);
  auto run = [&] {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, ni, ni, ni, 1.0f, a.data(), ni, b.data(), ni, 0.0f, c.data(),
                ni);
  };
  run();  // warm-up: thread pool start, page faults on c
  double best = INFINITY;
  for (int r = 0; r < std::max(1, repeats); ++r) {
    const auto start = Clock::now();
    run();
    best = std::min(best, SecondsSince(start));
  }
  g_float_sink = c[count / 2];
  openblas_set_num_threads(previous_threads);
  return 2.0 * static_cast<double>(n) * static_cast<double>(n) * static_cast<double>(n) / best / 1e9;
}

// ---------------------------------------------------------------------------
// Theoretical peaks. These are ASSUMPTIONS about pipe counts, shown beside the
// measured figures for comparison only; nothing downstream divides by them.

struct PipeAssumption {
  int fma_units = 2;  // FMA pipes per core
  int fma_lanes = 8;  // float lanes per pipe
  int vec_units = 2;  // pipes per core that take a plain vector add or multiply
};

PipeAssumption AssumedPipes(const CpuInfo& cpu, int simd_bits) {
  const bool amd = cpu.vendor == "AuthenticAMD";
  const bool avx512 = cpu.flags.count("avx512f") > 0;
  PipeAssumption p;
  if (amd && cpu.family == 23 && cpu.model < 0x30) {
    p.fma_lanes = 4;  // Zen 1/Zen+: two 128-bit FMA pipes
  } else if (amd && (cpu.family == 23 || cpu.family == 25)) {
    p.fma_lanes = 8;  // Zen 2/3, and Zen 4 whose AVX-512 is double-pumped over 256-bit pipes
  } else if (amd && cpu.family >= 26 && avx512) {
    p.fma_lanes = 16;  // Zen 5 desktop/server: full 512-bit pipes (mobile parts have 256)
  } else if (cpu.vendor == "GenuineIntel" && avx512) {
    p.fma_lanes = 16;  // server cores; some SKUs have only one 512-bit FMA unit
  } else if (cpu.flags.count("avx2")) {
    p.fma_lanes = 8;
  } else {
    p.fma_lanes = std::max(1, simd_bits / 32);
  }
  // The kernels cannot use lanes the build did not compile for.
  p.fma_lanes = std::min(p.fma_lanes, std::max(1, simd_bits / 32));
  // Plain add/mul is assumed to issue on the FMA pipes, so the same count,
  // except on AMD Zen: two FADD pipes sit beside the two FMA/FMUL pipes and an
  // add/mul mix uses all four (measured on Zen 4: peak_vec = 2x the two-pipe figure).
  p.vec_units = amd && cpu.family >= 23 ? 4 : p.fma_units;
  return p;
}

std::string IsoUtcNow() {
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  char buf[32];
  std::strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &utc);
  return buf;
}

MachineIdentity IdentityFrom(const CpuInfo& cpu) {
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
  id.fingerprint = Hex64(Fnv1a64(key));
  return id;
}

}  // namespace

MachineIdentity DetectMachine() { return IdentityFrom(ReadCpuInfo()); }

namespace {

// CPU time, in clock ticks: all CPUs busy (from /proc/stat) and this process (/proc/self/stat).
struct CpuTicks {
  double busy = 0, total = 0, self = 0;
};

CpuTicks ReadCpuTicks() {
  CpuTicks t;
  std::ifstream stat("/proc/stat");
  std::string cpu;
  double user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0, steal = 0;
  if (stat >> cpu >> user >> nice >> system >> idle >> iowait >> irq >> softirq >> steal) {
    t.busy = user + nice + system + irq + softirq + steal;
    t.total = t.busy + idle + iowait;
  }
  std::ifstream self("/proc/self/stat");
  std::string line;
  std::getline(self, line);
  // Fields after the command name (which may contain spaces): utime is the 14th, stime the 15th.
  std::istringstream rest(line.substr(line.rfind(')') + 2));
  std::string field;
  for (int i = 3; i <= 15 && rest >> field; ++i)
    if (i == 14 || i == 15) t.self += std::atof(field.c_str());
  return t;
}

}  // namespace

HardwareProfile Calibrate(const CalibrationOptions& options) {
  const CpuTicks before = ReadCpuTicks();
  HardwareProfile h = MeasureProfile(options);
  const CpuTicks after = ReadCpuTicks();
  const double total = after.total - before.total;
  if (total > 0) h.other_load = std::clamp((after.busy - before.busy - (after.self - before.self)) / total, 0.0, 1.0);
  return h;
}

HardwareProfile MeasureProfile(const CalibrationOptions& options) {
  const CpuInfo cpu = ReadCpuInfo();
  HardwareProfile h;
  h.machine = IdentityFrom(cpu);
  h.measured_at = IsoUtcNow();
  const int threads = h.machine.cores;
  const int repeats = std::max(1, options.repeats);
  // seconds_per_test is the whole test. It is cut into runs of at most 20 ms,
  // and at least `repeats` of them: on a shared machine the best of many short
  // runs is far more likely to include one that nothing else interrupted.
  Schedule schedule;
  schedule.run_s = std::clamp(options.seconds_per_test / repeats, 1e-3, 0.02);
  schedule.runs = std::max(repeats, static_cast<int>(options.seconds_per_test / schedule.run_s));

  // First, while no OpenMP or OpenBLAS worker is spinning: one core busy, the rest idle.
  h.clock_ghz = MeasureClockGhz(schedule);

  const long stream_bytes =
      options.stream_bytes > 0 ? options.stream_bytes : std::max(8 * LastLevelCacheBytes(), 64L << 20);
  // Memory bandwidth is shared with whatever else runs on the host and swings
  // far more than the core's arithmetic: give its best-of a longer window.
  Schedule stream_schedule = schedule;
  stream_schedule.runs *= 3;
  h.bandwidth_gbs = MeasureBandwidthGbs(stream_bytes, threads, stream_schedule);

  h.peak_mm_gflops = MeasureAllCores(FmaKernel, 2.0 * kLanes * kAccumulators, threads, schedule);
  h.peak_vec_gflops = MeasureAllCores(AddMulKernel, 1.0 * kLanes * kAccumulators, threads, schedule);
  // Last: OpenBLAS workers keep spinning for a while after a call.
  h.blas_sgemm_gflops = MeasureSgemmGflops(options.sgemm_n, threads, repeats);

  const PipeAssumption pipes = AssumedPipes(cpu, h.machine.simd_bits);
  h.fma_units = pipes.fma_units;
  h.fma_lanes = pipes.fma_lanes;
  h.theoretical_mm_gflops = threads * pipes.fma_units * pipes.fma_lanes * 2.0 * h.clock_ghz;
  h.theoretical_vec_gflops = threads * pipes.vec_units * pipes.fma_lanes * h.clock_ghz;
  return h;
}

}  // namespace accelopt::cpu
