#pragma once
/// core: the evaluator's verdict on one candidate (DESIGN.md section 5), with
/// its measurements: one type for the targets that make it, the search that
/// decides with it and the store that keeps it.

#include <map>
#include <optional>
#include <string>

#include "core/json_io.h"

namespace accelopt {

enum class Verdict {
  kOk,
  kCompileError,
  kRuntimeError,
  kTimeout,
  kResourceLimit,
  kWrongAnswer,
  kSuspect,    ///< correct, but faster than the hardware allows: not trusted
  kForbidden,  ///< uses what kernels may not (library calls, timer interposition, ...)
};

/// "ok", "compile_error", "runtime_error", "timeout", "resource_limit", "wrong_answer", "suspect", "forbidden".
const char* VerdictName(Verdict verdict);
/// The verdict of that name; nothing for a name that is not one.
std::optional<Verdict> VerdictFromName(const std::string& name);

/// Latency statistics over a series of timed calls (eval::Summarize).
struct LatencyStats {
  double median_s = 0, min_s = 0, max_s = 0, mean_s = 0;
  double spread = 0;  ///< interquartile range / median
  int calls = 0;      ///< calls in the kept series
  int series = 0;     ///< series measured (the most stable one is kept)
};

/// The speedup of B over A from paired calls, with a confidence interval for
/// it (eval::PairedComparison), and the conditions it was measured under.
struct PairedSpeedup {
  double speedup = 0;  ///< median of a_i / b_i: above 1, B is faster
  double ci_low = 0, ci_high = 0;
  int pairs = 0;
  /// The probability that [ci_low, ci_high] holds the true median, as the
  /// order statistics chosen for `pairs` give it: at least 0.95 from 6 pairs,
  /// 0.9375 for 5, less below. 0: unknown (recorded before it was kept).
  double coverage = 0;
  /// Share of the machine's CPU time other processes used while the kept pairs ran (0..1).
  double other_load = 0;
  /// Series of pairs measured again because others took more than the allowed share.
  int disturbed_series = 0;
  /// No quiet series came: the kept pairs ran disturbed. Pairing cancels a
  /// load's drift, not a load that slows one kernel more than the other (a
  /// busy core hurts a two-thread kernel, not a one-thread one), so such a
  /// speedup is shown, never decides the beam or makes a lesson.
  bool disturbed = false;
};

Json ToJson(const PairedSpeedup& s);
/// Reads back what ToJson wrote: a record without "coverage" reads as 0
/// (unknown), one from before the load was kept as quiet. Errors name the field.
Result<PairedSpeedup> PairedSpeedupFromJson(const Json& j);
/// "1.76x (95.2% interval 1.70-1.82, 40 pairs)", with ", measured disturbed:
/// others used 63% of the CPU" when so.
std::string PairedSpeedupText(const PairedSpeedup& s);
/// "93.75% interval", or "interval" when the coverage is unknown (0).
std::string IntervalName(double coverage);

/// How a candidate's outputs compared with the reference's (eval::CompareOutputs).
struct ErrorStats {
  double rel_l2 = 0;     ///< ||out - ref|| / ||ref|| (||out - ref|| when ||ref|| = 0)
  double max_abs = 0;    ///< largest |out - ref| over finite values
  size_t nan_count = 0;  ///< NaN in the output (an unwritten element stays NaN)
  size_t inf_count = 0;
  size_t elements = 0;
  // The per-element check (present when a float32 evaluation of the reference was compared too).
  bool bounded = false;    ///< the per-element check ran
  size_t over_bound = 0;   ///< elements outside their bound
  double worst_ratio = 0;  ///< largest |out - ref| / bound (above 1: outside)
  size_t worst_index = 0;  ///< the element with the worst ratio (within its output)
  double worst_error = 0;  ///< |out - ref| there
  double worst_bound = 0;  ///< its bound
  bool finite() const { return nan_count == 0 && inf_count == 0; }
};

/// Hardware counters per timed call; absent when the kernel does not allow them.
struct CounterValues {
  bool available = false;
  std::string unavailable_reason;
  double cycles = 0, instructions = 0, cache_misses = 0;
  /// Data-TLB load misses; negative where the PMU does not offer that event
  /// (the others can still be counted there).
  double dtlb_load_misses = -1;
};

/// The counts per call as one line, "4e+06 cycles, 6e+06 instructions (1.50 per
/// cycle), 1.5e+04 cache misses, 300 dTLB load misses"; only for available counters.
std::string CountsText(const CounterValues& c);

/// The hardware rates a profile was scored against: with its latency, enough
/// to recompute its percentage of peak.
struct ScoredAgainst {
  double bandwidth_gbs = 0, peak_mm_gflops = 0, peak_vec_gflops = 0;
  std::string fingerprint;  ///< the machine's
  std::string measured_at;  ///< when its profile was calibrated (ISO-8601 UTC)
};

/// A code task's figure as its benchmark reports it, over its runs. The
/// profile's latency then holds the figure's cost (lower is better: the figure
/// itself, or its reciprocal when higher is better), which is what the search compares.
struct MetricFigures {
  std::string name, unit;
  bool higher_is_better = false;
  double median = 0, best = 0, worst = 0;
  int runs = 0;
};

/// The target a measurement was taken on when nothing names one (profiles,
/// runs and lessons recorded before there were targets), and the one an
/// evaluation runs on when the user names none (targets::kDefaultTarget).
inline constexpr const char kDefaultTarget[] = "cpu";

struct Profile {
  std::string task, shape, target;  ///< target: the name of the target that measured it
  Verdict status = Verdict::kOk;
  std::string message;               ///< one line: why the status is what it is
  std::string compile_log;           ///< compiler diagnostics (truncated)
  std::string vectorization_report;  ///< compiler vectorization remarks (truncated)
  std::string not_vectorized;        ///< the kernel's loops the compiler did not vectorize, and why
  std::string hot_loop;              ///< the built kernel's hottest loop in assembly (eval::HotLoop)
  std::string register_report;       ///< a GPU compiler's registers, spills and shared memory per function
  std::string run_log;               ///< the child's stdout and stderr (truncated)
  /// Where a code task's benchmark spends its time (its top entries under
  /// cProfile, for Python), or why no profile was taken; "" for kernels.
  std::string time_profile;
  std::string phase;                 ///< where a failing child was (e.g. "correctness call, seed 1")
  std::string work_dir;              ///< the evaluation's folder, when kept for debugging
  double compile_seconds = 0;
  bool compile_cached = false;
  int seeds = 0;
  int checked_calls = 0;             ///< timed calls whose outputs were compared with the reference too
  std::optional<ErrorStats> errors;  ///< present once outputs were compared
  double tolerance = 0;
  std::optional<LatencyStats> latency;
  CounterValues counters;
  // Roofline scoring; filled when the status is ok.
  std::string bound;            ///< "memory", "mm" or "vec"
  double roofline_seconds = 0;  ///< T
  /// T's components: bytes / bandwidth, matmul flops / FMA peak, other flops / vector peak.
  double roofline_memory_seconds = 0, roofline_mm_seconds = 0, roofline_vec_seconds = 0;
  double percent_of_peak = 0;  ///< 100 x T / median latency
  double achieved_gbs = 0;     ///< min_bytes / median latency
  double achieved_gflops = 0;  ///< (flops_mm + flops_vec) / median latency
  // Accounting for the engine benchmark.
  double wall_seconds = 0;                      ///< whole evaluation
  double kernel_seconds = 0;                    ///< time inside kernel calls (correctness, warm-up, timed)
  std::map<std::string, double> phase_seconds;  ///< where the rest went (reference, child, flush, compare)
  /// The monitor's handshake with the kernel's process: the fastest of the
  /// empty calls timed before the kernel was loaded. Every latency includes it.
  double handshake_seconds = 0;
  /// True where each latency is already less the handshake (the cuda
  /// target, whose handshake includes a GPU context switch); else included.
  bool handshake_subtracted = false;
  /// CPU time the kernel's threads used outside its call windows (after a
  /// call returned, before its process stopped), over the whole evaluation.
  double outside_cpu_seconds = 0;
  /// Timed series measured again because other processes (or the hypervisor)
  /// took more than the allowed share of the machine while they ran.
  int disturbed_series = 0;
  /// Share of the machine's CPU time other processes used during the kept series (0..1).
  double other_load = 0;
  /// Every series was disturbed (more than the target's allowed share): the
  /// latency is shown, marked so, and never decides.
  bool disturbed = false;
  /// Under what conditions every timed call ran, in words (inputs, caches, threads).
  std::string conditions;
  /// A memory checker's run over the correctness calls (the cuda target's
  /// compute-sanitizer memcheck, on request): that it ran and what it found,
  /// its report when it found errors. "" when none ran.
  std::string sanitizer;
  std::optional<ScoredAgainst> scored_against;  ///< present when scored
  std::optional<MetricFigures> metric;          ///< a code task's figure, when measured

  Json ToJson() const;
};

/// The median cost as a reader wants it: the metric with its unit for a code
/// task's profile ("12.4 ns"), else the latency ("1.24 ms"); "-" when there is none.
std::string MeasureText(const Profile& profile);
/// `cost` in the units of `profile`'s measure (a cost of the same task).
std::string CostText(const Profile& profile, double cost);

/// Reads back what Profile::ToJson wrote. Errors name the missing field.
Result<Profile> ProfileFromJson(const Json& j);

}  // namespace accelopt
