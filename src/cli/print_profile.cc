#include "cli/print_profile.h"

#include <fmt/core.h>

#include "cli/common.h"

namespace accelopt::cli {

void PrintProfile(const Profile& p, bool verbose) {
  fmt::print("task         {} (shape {}, target {})\n", p.task, p.shape, p.target);
  fmt::print("status       {}{}\n", VerdictName(p.status), p.message.empty() ? "" : ": " + p.message);
  fmt::print("{}      {}\n", p.metric ? "build  " : "compile",
             p.compile_cached ? "cached" : FormatSeconds(p.compile_seconds));
  if (p.errors)
    fmt::print(
        "error        relative L2 {:.3g} (tolerance {:.1g}), max abs {:.3g}, {} NaN, {} Inf over {} seeds and {} "
        "checked timed calls\n",
        p.errors->rel_l2, p.tolerance, p.errors->max_abs, p.errors->nan_count, p.errors->inf_count, p.seeds,
        p.checked_calls);
  if (p.errors && p.errors->bounded)
    fmt::print("elements     worst at {:.3g}x its float32 rounding bound, {} beyond it\n", p.errors->worst_ratio,
               p.errors->over_bound);
  if (p.latency && p.metric) {
    const MetricFigures& m = *p.metric;
    const std::string unit = m.unit.empty() ? "" : " " + m.unit;
    fmt::print(
        "metric       {} ({} is better): median {:.4g}{}  best {:.4g}{}  worst {:.4g}{}  spread {:.2f}%  ({} runs)\n",
        m.name, m.higher_is_better ? "higher" : "lower", m.median, unit, m.best, unit, m.worst, unit,
        100 * p.latency->spread, m.runs);
  } else if (p.latency)
    fmt::print("latency      median {}  min {}  max {}  spread {:.2f}%  ({} calls, {} series{})\n",
               FormatSeconds(p.latency->median_s), FormatSeconds(p.latency->min_s), FormatSeconds(p.latency->max_s),
               100 * p.latency->spread, p.latency->calls, p.latency->series,
               p.handshake_seconds > 0 ? "; handshake " + FormatSeconds(p.handshake_seconds) +
                                            (p.handshake_subtracted ? " subtracted" : " included")
                                      : "");
  // What the engine's own monitor measured around the calls (the cpu target); an external evaluator reports none of it.
  const bool monitored = p.handshake_seconds > 0;
  if (monitored && (p.latency || p.outside_cpu_seconds > 0))
    fmt::print("outside      {} of CPU time used outside its calls\n", FormatSeconds(p.outside_cpu_seconds));
  if ((monitored || p.metric) && p.latency)
    fmt::print(
        "machine      other processes used {:.0f}% of the CPU during the kept {}; {} {} disturbed and "
        "measured again\n",
        100 * p.other_load, p.metric ? "runs" : "series", p.disturbed_series, p.metric ? "runs" : "series");
  if (p.latency && !p.conditions.empty()) fmt::print("conditions   {}\n", p.conditions);
  if (!p.sanitizer.empty()) fmt::print("sanitizer    {}\n", p.sanitizer);
  if (p.status == Verdict::kOk && p.roofline_seconds > 0)
    fmt::print("score        {:.2f}% of peak ({}-bound, T = {}), {:.2f} GB/s, {:.2f} GFLOP/s\n", p.percent_of_peak,
               p.bound, FormatSeconds(p.roofline_seconds), p.achieved_gbs, p.achieved_gflops);
  if (p.status == Verdict::kOk && p.roofline_seconds > 0)
    fmt::print("roofline     memory {}, matmul (FMA) {}, other vector {}\n", FormatSeconds(p.roofline_memory_seconds),
               FormatSeconds(p.roofline_mm_seconds), FormatSeconds(p.roofline_vec_seconds));
  if (p.scored_against)
    fmt::print("scored at    {:.1f} GB/s, {:.1f} GFLOP/s FMA, {:.1f} GFLOP/s vector (machine {}, calibrated {})\n",
               p.scored_against->bandwidth_gbs, p.scored_against->peak_mm_gflops, p.scored_against->peak_vec_gflops,
               p.scored_against->fingerprint.empty() ? "-" : p.scored_against->fingerprint,
               p.scored_against->measured_at.empty() ? "-" : p.scored_against->measured_at);
  if (p.counters.available)
    fmt::print("counters     {} per call\n", CountsText(p.counters));
  else if (p.latency && !p.metric)
    fmt::print("counters     unavailable: {}\n", p.counters.unavailable_reason);
  if (!p.work_dir.empty()) fmt::print("kept         {}\n", p.work_dir);
  if (p.status != Verdict::kOk || verbose) {
    if (!p.compile_log.empty()) fmt::print("\n--- compile log\n{}", p.compile_log);
    if (!p.run_log.empty()) fmt::print("\n{}", p.run_log);
  }
  if (verbose && !p.vectorization_report.empty()) fmt::print("\n--- vectorization report\n{}", p.vectorization_report);
  if (verbose && !p.register_report.empty()) fmt::print("\n--- register report (ptxas)\n{}", p.register_report);
  if (verbose && !p.not_vectorized.empty()) fmt::print("\n--- loops not vectorized\n{}", p.not_vectorized);
  if (verbose && !p.hot_loop.empty()) fmt::print("\n--- hottest loop as compiled\n{}", p.hot_loop);
  if (verbose && !p.time_profile.empty()) fmt::print("\n--- where the benchmark's time goes\n{}", p.time_profile);
}

}  // namespace accelopt::cli
