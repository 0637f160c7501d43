#include "targets/cpu/calibrate.h"

#include "core/clock.h"
#include "core/hash.h"
#include "eval/device_lock.h"
#include "eval/machine_load.h"
#include "eval/streaming.h"

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
#include <functional>
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
struct FmaChains {
  Vec m, c, acc[kAccumulators];
  FmaChains() : m(Splat(g_one * 0.5f)), c(Splat(g_one * 0.25f)) {
    const float seed = g_one;
#pragma GCC unroll 16
    for (int j = 0; j < kAccumulators; ++j) acc[j] = Splat(seed + 0.01f * j);
  }
  void Step() {
#pragma GCC unroll 16
    for (int j = 0; j < kAccumulators; ++j) acc[j] = Fma(acc[j], m, c);
  }
};

float FmaKernel(long iters) {
  FmaChains chains;
  for (long i = 0; i < iters; ++i) chains.Step();
  return SumAll(chains.acc);
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

// The clock the arithmetic peaks run at. A chain of dependent register adds
// retires one per cycle on every x86 core we know of (register, not
// immediate, operands: some cores fold add-immediate chains in the renamer).
// Many cores lower their clock when
// every core executes wide FMAs (AVX-512 licence levels, power limits), so a
// clock measured on one idle-neighboured core with scalar adds overstates the
// theoretical peak. Here every core runs the add chain with
// independent FMAs beside it (half the FMA pipes' capacity, off the chain's
// critical path), and the slowest core of each run counts.
constexpr int kAddsPerStep = 100;  // must match the .rept count below

void LoadedAddChain(long steps) {
  std::uint64_t x = 0;
  std::uint64_t one = 1;
  FmaChains chains;
  for (long i = 0; i < steps; ++i) {
#if defined(__x86_64__)
    asm volatile(".rept 100\n\taddq %1, %0\n\t.endr" : "+r"(x) : "r"(one));
#else
    for (int k = 0; k < kAddsPerStep; ++k) {
      x += one;
      asm volatile("" : "+r"(x));  // keeps each add; the chain cannot collapse
    }
#endif
#pragma GCC unroll 4
    for (int r = 0; r < 48 / kAccumulators; ++r) chains.Step();
  }
  g_int_sink = x;
  g_float_sink = SumAll(chains.acc);
}

double MeasureLoadedClockGhz(int threads, const Schedule& schedule) {
  Schedule slices;
  slices.run_s = std::min(schedule.run_s, 0.002);
  slices.runs = std::max(schedule.runs, static_cast<int>(schedule.run_s * schedule.runs / slices.run_s));
  auto run = [&](long steps) {
#pragma omp parallel num_threads(threads)
    LoadedAddChain(steps);
  };
  const Timing t = TimeBest(run, LoadedAddChain, slices);
  return static_cast<double>(t.iters) * kAddsPerStep / t.best_seconds / 1e9;
}

// ---------------------------------------------------------------------------
// Memory bandwidth.

struct FreeDeleter {
  void operator()(float* p) const { std::free(p); }
};
using Buffer = std::unique_ptr<float[], FreeDeleter>;

Buffer AllocateFloats(long n) {
  const std::size_t bytes = (static_cast<std::size_t>(n) * sizeof(float) + 63) / 64 * 64;
  return Buffer(static_cast<float*>(std::aligned_alloc(64, bytes)));
}

// The bandwidth a kernel can reach in the evaluator's conditions: every pass
// starts with its arrays evicted from the caches (as every call's arguments
// are) and is timed alone. The figure is the best over four read/write mixes
// (a kernel with any of them must not beat the roofline) and over thread
// counts (on a shared host one thread can stream more than two that contend):
//   triad, plain stores: 12 bytes per element counted, the STREAM convention
//     (the write-allocate read of `a` is not counted);
//   triad and copy with non-temporal stores: no write-allocate read;
//   read: a sum over one array.
double MeasureBandwidthGbs(long bytes_per_array, int max_threads, int passes) {
  long n = std::max(bytes_per_array / static_cast<long>(sizeof(float)), 1L << 16);
  Buffer a, b, c;
  // Halve on allocation failure rather than give up; below 1 MiB there is
  // nothing meaningful to measure and the figure stays 0.
  for (;; n /= 2) {
    a = AllocateFloats(n);
    b = AllocateFloats(n);
    c = AllocateFloats(n);
    if (a && b && c) break;
    if (n < (1L << 18)) return 0;
  }
  float* __restrict pa = a.get();
  float* __restrict pb = b.get();
  float* __restrict pc = c.get();
#pragma omp parallel for schedule(static) num_threads(max_threads)
  for (long i = 0; i < n; ++i) {
    pa[i] = 0.0f;
    pb[i] = 1.0f;
    pc[i] = 2.0f;
  }
  const float s = g_one * 3.0f;
  const long vectors = n / kLanes;
  const double array_bytes = static_cast<double>(vectors * kLanes) * sizeof(float);
  struct Pattern {
    double bytes;  // counted per pass
    std::function<void(int)> pass;
  };
  std::vector<Pattern> patterns;
  patterns.push_back({3 * array_bytes, [&](int threads) {
#pragma omp parallel for schedule(static) num_threads(threads)
                        for (long i = 0; i < vectors * kLanes; ++i) pa[i] = pb[i] + s * pc[i];
                      }});
#if defined(__SSE2__)
  patterns.push_back({3 * array_bytes, [&](int threads) {
#pragma omp parallel num_threads(threads)
                        {
                          const Vec vs = Splat(s);
#pragma omp for schedule(static)
                          for (long v = 0; v < vectors; ++v)
                            StreamStore(pa + v * kLanes, Add(Load(pb + v * kLanes), Mul(vs, Load(pc + v * kLanes))));
                          _mm_sfence();
                        }
                      }});
  patterns.push_back({2 * array_bytes, [&](int threads) {
#pragma omp parallel num_threads(threads)
                        {
#pragma omp for schedule(static)
                          for (long v = 0; v < vectors; ++v) StreamStore(pa + v * kLanes, Load(pb + v * kLanes));
                          _mm_sfence();
                        }
                      }});
#endif
  patterns.push_back({array_bytes, [&](int threads) {
                        float total = 0;
#pragma omp parallel num_threads(threads) reduction(+ : total)
                        {
                          Vec acc[4] = {Splat(0), Splat(0), Splat(0), Splat(0)};
#pragma omp for schedule(static)
                          for (long v = 0; v < vectors / 4 * 4; v += 4)
                            for (int k = 0; k < 4; ++k) acc[k] = Add(acc[k], Load(pb + (v + k) * kLanes));
                          float lanes[kLanes];
                          Store(lanes, Add(Add(acc[0], acc[1]), Add(acc[2], acc[3])));
                          for (float x : lanes) total += x;
                        }
                        g_float_sink = total;
                      }});
  std::vector<int> thread_counts = {max_threads};
  if (max_threads > 2) thread_counts.push_back(max_threads / 2);
  if (max_threads > 1) thread_counts.push_back(1);
  double best = 0;
  for (const Pattern& pattern : patterns)
    for (int threads : thread_counts) {
      pattern.pass(threads);  // warm-up: the team exists, the pages are mapped
      for (int p = 0; p < std::max(1, passes); ++p) {
#pragma omp parallel for schedule(static) num_threads(max_threads)
        for (int part = 0; part < 3; ++part)
          eval::EvictFromCaches(part == 0 ? pa : part == 1 ? pb : pc, n * sizeof(float));
        const auto start = Clock::now();
        pattern.pass(threads);
        best = std::max(best, pattern.bytes / SecondsSince(start) / 1e9);
      }
    }
  g_float_sink = pa[n / 2];
  return best;
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

PipeAssumption AssumedPipes(const eval::CpuInfo& cpu, int simd_bits) {
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

// One round of every figure.
struct Round {
  double clock_ghz, bandwidth, peak_mm, peak_vec, sgemm;
};

Round MeasureRound(const CalibrationOptions& options, int threads) {
  // seconds_per_test is the whole test, cut into runs of at most 20 ms: on a
  // shared machine the best of many short runs is far more likely to include
  // one that nothing else interrupted.
  const int repeats = std::max(1, options.repeats);
  Schedule schedule;
  schedule.run_s = std::clamp(options.seconds_per_test / repeats, 1e-3, 0.02);
  schedule.runs = std::max(repeats, static_cast<int>(options.seconds_per_test / schedule.run_s));
  Round r{};
  // The clock under FMA load right before the FMA peak, so both see the same machine.
  r.clock_ghz = MeasureLoadedClockGhz(threads, schedule);
  r.peak_mm = MeasureAllCores(FmaKernel, 2.0 * kLanes * kAccumulators, threads, schedule);
  r.peak_vec = MeasureAllCores(AddMulKernel, 1.0 * kLanes * kAccumulators, threads, schedule);
  r.bandwidth = MeasureBandwidthGbs(options.stream_bytes, threads, repeats);
  // Last: OpenBLAS workers keep spinning for a while after a call.
  r.sgemm = MeasureSgemmGflops(options.sgemm_n, threads, repeats);
  return r;
}

MeasuredFigure Summarize(std::vector<double> rounds) {
  MeasuredFigure f;
  f.rounds = rounds;
  std::sort(rounds.begin(), rounds.end(), std::greater<>());
  if (rounds.empty()) return f;
  f.best = rounds[0];
  const double third = rounds[std::min<size_t>(2, rounds.size() - 1)];
  f.spread = f.best > 0 ? (f.best - third) / f.best : 0;
  return f;
}

// Whether the best two rounds agree within `within`.
bool Stable(const MeasuredFigure& f, double within) {
  if (f.rounds.size() < 2) return false;
  std::vector<double> sorted = f.rounds;
  std::sort(sorted.begin(), sorted.end(), std::greater<>());
  return sorted[0] > 0 && (sorted[0] - sorted[1]) / sorted[0] <= within;
}

struct Figures {
  MeasuredFigure clock, bandwidth, peak_mm, peak_vec, sgemm;
};

Figures SummarizeRounds(const std::vector<Round>& rounds) {
  auto pick = [&](double Round::*field) {
    std::vector<double> v;
    for (const Round& r : rounds) v.push_back(r.*field);
    return Summarize(v);
  };
  return {pick(&Round::clock_ghz), pick(&Round::bandwidth), pick(&Round::peak_mm), pick(&Round::peak_vec),
          pick(&Round::sgemm)};
}

// A profile from the figures so far. The theoretical peaks use the best
// loaded clock and the pipe counts assumed for this CPU family, or the FMA
// pipe count the user stated (some server SKUs have one 512-bit FMA pipe
// where their family has two). A count is never inferred from the measured
// peak: a core shared with another virtual machine halves the peak just the
// same, and inferring one pipe would save that measurement as the machine's.
HardwareProfile ProfileFrom(const eval::CpuInfo& cpu, const Figures& f, int rounds, const CalibrationOptions& options) {
  HardwareProfile h;
  h.machine = eval::MachineIdentityOf(cpu);
  h.measured_at = IsoUtcNow();
  h.rounds = rounds;
  h.clock_ghz = f.clock.best;
  h.bandwidth_gbs = f.bandwidth.best;
  h.peak_mm_gflops = f.peak_mm.best;
  h.peak_vec_gflops = f.peak_vec.best;
  h.blas_sgemm_gflops = f.sgemm.best;
  h.spreads = {{"clock", f.clock.spread},
               {"bandwidth", f.bandwidth.spread},
               {"peak_mm", f.peak_mm.spread},
               {"peak_vec", f.peak_vec.spread},
               {"sgemm", f.sgemm.spread}};
  PipeAssumption pipes = AssumedPipes(cpu, h.machine.simd_bits);
  if (options.fma_units > 0 && options.fma_units != pipes.fma_units) {
    pipes.vec_units = std::max(1, pipes.vec_units * options.fma_units / pipes.fma_units);
    pipes.fma_units = options.fma_units;
  }
  const int cores = h.machine.cores;
  h.fma_units = pipes.fma_units;
  h.fma_lanes = pipes.fma_lanes;
  h.theoretical_mm_gflops = cores * pipes.fma_units * pipes.fma_lanes * 2.0 * h.clock_ghz;
  h.theoretical_vec_gflops = cores * pipes.vec_units * pipes.fma_lanes * h.clock_ghz;
  return h;
}

std::string Percent(double x) {
  char text[32];
  std::snprintf(text, sizeof text, "%.0f%%", 100 * x);
  return text;
}

std::string Rate(double x, const char* unit) {
  char text[48];
  std::snprintf(text, sizeof text, "%.1f %s", x, unit);
  return text;
}

}  // namespace

std::vector<std::string> CheckProfile(const HardwareProfile& h, const CalibrationOptions& options) {
  std::vector<std::string> problems;
  if (h.other_load > options.max_other_load)
    problems.push_back("other processes used " + Percent(h.other_load) + " of the CPU while it was measured (at most " +
                       Percent(options.max_other_load) +
                       " allowed): the machine was busy. Stop what else runs (another accelopt, a build, a test "
                       "suite) and calibrate again.");
  if (h.theoretical_mm_gflops > 0 && h.peak_mm_gflops < options.min_peak_fraction * h.theoretical_mm_gflops)
    problems.push_back("the FMA peak measured " + Rate(h.peak_mm_gflops, "GFLOP/s") + ", " +
                       Percent(h.peak_mm_gflops / h.theoretical_mm_gflops) + " of the theoretical " +
                       Rate(h.theoretical_mm_gflops, "GFLOP/s") + " (at least " + Percent(options.min_peak_fraction) +
                       " expected): a busy machine, or two threads sharing a core. Calibrate on an idle machine, "
                       "or with one thread per physical core (taskset). If this CPU has fewer FMA pipes per core "
                       "than the " +
                       std::to_string(h.fma_units) + " assumed, say so: `accelopt calibrate --fma-units N`.");
  if (h.theoretical_mm_gflops > 0 && h.peak_mm_gflops > 1.10 * h.theoretical_mm_gflops)
    problems.push_back("the FMA peak measured " + Rate(h.peak_mm_gflops, "GFLOP/s") + ", above the theoretical " +
                       Rate(h.theoretical_mm_gflops, "GFLOP/s") + " for " + std::to_string(h.fma_units) +
                       " FMA pipe(s) per core: this CPU has more pipes than that (--fma-units).");
  if (h.blas_sgemm_gflops > h.peak_mm_gflops)
    problems.push_back("OpenBLAS sgemm measured " + Rate(h.blas_sgemm_gflops, "GFLOP/s") + ", above the FMA peak of " +
                       Rate(h.peak_mm_gflops, "GFLOP/s") +
                       ", which is impossible: the FMA test was disturbed. Calibrate again on an idle machine.");
  for (const auto& [name, spread] : h.spreads)
    if (name != "sgemm" && spread > 5 * options.stable_within)
      problems.push_back(name + " did not hold still: its best rounds differ by " + Percent(spread) + " over " +
                         std::to_string(h.rounds) + " rounds. Calibrate again when the machine is quiet.");
  return problems;
}

namespace {

double BusyShare(const eval::CpuSnapshot& before, const eval::CpuSnapshot& after) {
  return eval::LoadBetween(before, after).others;
}

}  // namespace

Result<Calibration> Calibrate(const CalibrationOptions& options) {
  std::unique_ptr<eval::DeviceLock> lock;
  if (options.device_lock) {
    auto acquired = eval::DeviceLock::Acquire("cpu", "calibrating", eval::PrintWaitToStderr("cpu"));
    if (!acquired) return acquired.error();
    lock = std::move(*acquired);
  }
  const eval::CpuInfo cpu = eval::ReadCpuInfo();
  const int threads = eval::AffinityCores();
  // Other processes' load over the rounds that decide the figures (the last min_rounds).
  std::vector<eval::CpuSnapshot> round_start;
  std::vector<Round> rounds;
  Calibration result;
  const int max_rounds = std::max(options.min_rounds, options.max_rounds);
  for (;;) {
    round_start.push_back(eval::TakeCpuSnapshot());
    rounds.push_back(MeasureRound(options, threads));
    const Figures figures = SummarizeRounds(rounds);
    result.notes.clear();
    result.profile = ProfileFrom(cpu, figures, static_cast<int>(rounds.size()), options);
    const size_t window = std::min(rounds.size(), static_cast<size_t>(std::max(1, options.min_rounds)));
    result.profile.other_load = BusyShare(round_start[rounds.size() - window], eval::TakeCpuSnapshot());
    if (static_cast<int>(rounds.size()) < options.min_rounds) continue;
    const bool stable =
        Stable(figures.clock, options.stable_within) && Stable(figures.bandwidth, 1.5 * options.stable_within) &&
        Stable(figures.peak_mm, options.stable_within) && Stable(figures.peak_vec, options.stable_within);
    result.problems = CheckProfile(result.profile, options);
    if ((stable && result.problems.empty()) || static_cast<int>(rounds.size()) >= max_rounds) {
      if (!stable && result.problems.empty())
        result.notes.push_back("the figures still moved after " + std::to_string(rounds.size()) +
                               " rounds; the spreads say by how much");
      break;
    }
  }
  return result;
}

}  // namespace accelopt::cpu
