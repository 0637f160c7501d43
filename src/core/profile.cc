#include "core/profile.h"

#include <fmt/core.h>

#include <cmath>

#include "core/format.h"

namespace accelopt {

const char* VerdictName(Verdict verdict) {
  switch (verdict) {
    case Verdict::kOk:
      return "ok";
    case Verdict::kCompileError:
      return "compile_error";
    case Verdict::kRuntimeError:
      return "runtime_error";
    case Verdict::kTimeout:
      return "timeout";
    case Verdict::kResourceLimit:
      return "resource_limit";
    case Verdict::kWrongAnswer:
      return "wrong_answer";
    case Verdict::kSuspect:
      return "suspect";
    case Verdict::kForbidden:
      return "forbidden";
  }
  return "unknown";
}

namespace {

// JSON has no infinity: non-finite numbers become null.
Json Number(double v) { return std::isfinite(v) ? Json(v) : Json(nullptr); }

}  // namespace

Json Profile::ToJson() const {
  Json j = {{"task", task},
            {"shape", shape},
            {"target", target},
            {"status", VerdictName(status)},
            {"message", message},
            {"phase", phase},
            {"compile",
             {{"seconds", compile_seconds},
              {"cached", compile_cached},
              {"log", compile_log},
              {"vectorization_report", vectorization_report},
              {"not_vectorized", not_vectorized},
              {"hot_loop", hot_loop},
              {"register_report", register_report}}},
            {"run_log", run_log},
            {"time_profile", time_profile},
            {"seeds", seeds},
            {"checked_calls", checked_calls},
            {"tolerance", tolerance},
            {"wall_seconds", wall_seconds},
            {"kernel_seconds", kernel_seconds},
            {"handshake_seconds", handshake_seconds},
            {"handshake_subtracted", handshake_subtracted},
            {"outside_cpu_seconds", outside_cpu_seconds},
            {"disturbed_series", disturbed_series},
            {"other_load", other_load},
            {"disturbed", disturbed},
            {"conditions", conditions},
            {"phase_seconds", phase_seconds}};
  if (!sanitizer.empty()) j["sanitizer"] = sanitizer;
  if (scored_against)
    j["scored_against"] = {{"bandwidth_gbs", scored_against->bandwidth_gbs},
                           {"peak_mm_gflops", scored_against->peak_mm_gflops},
                           {"peak_vec_gflops", scored_against->peak_vec_gflops},
                           {"fingerprint", scored_against->fingerprint},
                           {"measured_at", scored_against->measured_at}};
  if (metric)
    j["metric"] = {{"name", metric->name},     {"unit", metric->unit}, {"higher_is_better", metric->higher_is_better},
                   {"median", metric->median}, {"best", metric->best}, {"worst", metric->worst},
                   {"runs", metric->runs}};
  if (!work_dir.empty()) j["work_dir"] = work_dir;
  if (errors) {
    j["errors"] = {{"rel_l2", Number(errors->rel_l2)},
                   {"max_abs", Number(errors->max_abs)},
                   {"nan_count", errors->nan_count},
                   {"inf_count", errors->inf_count},
                   {"elements", errors->elements}};
    if (errors->bounded)
      j["errors"]["element_bound"] = {{"over_bound", errors->over_bound},
                                      {"worst_ratio", Number(errors->worst_ratio)},
                                      {"worst_index", errors->worst_index},
                                      {"worst_error", Number(errors->worst_error)},
                                      {"worst_bound", Number(errors->worst_bound)}};
  }
  if (latency)
    j["latency"] = {{"median_s", latency->median_s}, {"min_s", latency->min_s},   {"max_s", latency->max_s},
                    {"mean_s", latency->mean_s},     {"spread", latency->spread}, {"calls", latency->calls},
                    {"series", latency->series}};
  if (counters.available) {
    j["counters"] = {
        {"cycles", counters.cycles}, {"instructions", counters.instructions}, {"cache_misses", counters.cache_misses}};
    if (counters.dtlb_load_misses >= 0) j["counters"]["dtlb_load_misses"] = counters.dtlb_load_misses;
  } else
    j["counters"] = {{"unavailable", counters.unavailable_reason}};
  if (status == Verdict::kOk || status == Verdict::kSuspect)
    j["score"] = {{"bound", bound},
                  {"roofline_seconds", roofline_seconds},
                  {"roofline_memory_seconds", roofline_memory_seconds},
                  {"roofline_mm_seconds", roofline_mm_seconds},
                  {"roofline_vec_seconds", roofline_vec_seconds},
                  {"percent_of_peak", percent_of_peak},
                  {"achieved_gbs", achieved_gbs},
                  {"achieved_gflops", achieved_gflops}};
  return j;
}

}  // namespace accelopt

namespace accelopt {

std::string IntervalName(double coverage) {
  if (!(coverage > 0)) return "interval";
  return fmt::format("{:.4g}% interval", coverage * 100);
}

namespace {

double NumberOr(const Json& j, const char* key, double fallback) {
  return j.contains(key) && j[key].is_number() ? j[key].get<double>() : fallback;
}

}  // namespace

std::optional<Verdict> VerdictFromName(const std::string& name) {
  for (Verdict v : {Verdict::kOk, Verdict::kCompileError, Verdict::kRuntimeError, Verdict::kTimeout,
                    Verdict::kResourceLimit, Verdict::kWrongAnswer, Verdict::kSuspect, Verdict::kForbidden})
    if (name == VerdictName(v)) return v;
  return std::nullopt;
}

Json ToJson(const PairedSpeedup& s) {
  return {{"speedup", s.speedup},       {"ci_low", s.ci_low},
          {"ci_high", s.ci_high},       {"pairs", s.pairs},
          {"coverage", s.coverage},     {"other_load", s.other_load},
          {"disturbed_series", s.disturbed_series}, {"disturbed", s.disturbed}};
}

Result<PairedSpeedup> PairedSpeedupFromJson(const Json& j) {
  try {
    PairedSpeedup s;
    s.speedup = j.at("speedup");
    s.ci_low = j.at("ci_low");
    s.ci_high = j.at("ci_high");
    s.pairs = j.at("pairs");
    s.coverage = NumberOr(j, "coverage", 0);
    s.other_load = NumberOr(j, "other_load", 0);
    s.disturbed_series = j.value("disturbed_series", 0);
    s.disturbed = j.value("disturbed", false);
    return s;
  } catch (const Json::exception& e) {
    return Error{std::string("side-by-side speedup: ") + e.what()};
  }
}

std::string PairedSpeedupText(const PairedSpeedup& s) {
  std::string text = s.pairs == 0 ? fmt::format("{:.3f}x (the ratio of the two medians", s.speedup)
                                  : fmt::format("{:.3f}x ({} {:.3f}-{:.3f}, {} pairs", s.speedup,
                                                IntervalName(s.coverage), s.ci_low, s.ci_high, s.pairs);
  if (s.disturbed)
    text += fmt::format(", measured disturbed: others used {:.0f}% of the CPU", 100 * s.other_load);
  else if (s.disturbed_series > 0)
    text += fmt::format(", {} disturbed series measured again", s.disturbed_series);
  return text + ")";
}

std::string CountsText(const CounterValues& c) {
  std::string text = fmt::format("{:.3g} cycles, {:.3g} instructions ({:.2f} per cycle), {:.3g} cache misses",
                                 c.cycles, c.instructions, c.cycles > 0 ? c.instructions / c.cycles : 0.0,
                                 c.cache_misses);
  if (c.dtlb_load_misses >= 0) text += fmt::format(", {:.3g} dTLB load misses", c.dtlb_load_misses);
  return text;
}

Result<Profile> ProfileFromJson(const Json& j) {
  Profile p;
  try {
    p.task = j.at("task");
    p.shape = j.at("shape");
    p.target = j.value("target", kDefaultTarget);
    std::string status = j.at("status");
    auto verdict = VerdictFromName(status);
    if (!verdict) return Error{"profile: unknown status '" + status + "'"};
    p.status = *verdict;
    p.message = j.value("message", "");
    p.phase = j.value("phase", "");
    p.work_dir = j.value("work_dir", "");
    p.run_log = j.value("run_log", "");
    if (j.contains("compile")) {
      const Json& c = j["compile"];
      p.compile_seconds = NumberOr(c, "seconds", 0);
      p.compile_cached = c.value("cached", false);
      p.compile_log = c.value("log", "");
      p.vectorization_report = c.value("vectorization_report", "");
      p.not_vectorized = c.value("not_vectorized", "");
      p.hot_loop = c.value("hot_loop", "");
      p.register_report = c.value("register_report", "");
    }
    p.time_profile = j.value("time_profile", "");
    p.seeds = j.value("seeds", 0);
    p.checked_calls = j.value("checked_calls", 0);
    p.tolerance = NumberOr(j, "tolerance", 0);
    p.wall_seconds = NumberOr(j, "wall_seconds", 0);
    p.kernel_seconds = NumberOr(j, "kernel_seconds", 0);
    p.handshake_seconds = NumberOr(j, "handshake_seconds", 0);
  p.handshake_subtracted = j.value("handshake_subtracted", false);
    p.outside_cpu_seconds = NumberOr(j, "outside_cpu_seconds", 0);
    p.disturbed_series = j.value("disturbed_series", 0);
    p.other_load = NumberOr(j, "other_load", 0);
    p.disturbed = j.value("disturbed", false);
    p.conditions = j.value("conditions", "");
    p.sanitizer = j.value("sanitizer", "");
    if (j.contains("scored_against")) {
      const Json& r = j.at("scored_against");
      p.scored_against =
          ScoredAgainst{NumberOr(r, "bandwidth_gbs", 0), NumberOr(r, "peak_mm_gflops", 0),
                        NumberOr(r, "peak_vec_gflops", 0), r.value("fingerprint", ""), r.value("measured_at", "")};
    }
    if (j.contains("metric")) {
      const Json& m = j.at("metric");
      p.metric = MetricFigures{m.value("name", ""),      m.value("unit", ""),    m.value("higher_is_better", false),
                               NumberOr(m, "median", 0), NumberOr(m, "best", 0), NumberOr(m, "worst", 0),
                               m.value("runs", 0)};
    }
    if (j.contains("errors")) {
      const Json& e = j["errors"];
      p.errors =
          ErrorStats{NumberOr(e, "rel_l2", INFINITY), NumberOr(e, "max_abs", INFINITY), e.value("nan_count", size_t{0}),
                     e.value("inf_count", size_t{0}), e.value("elements", size_t{0})};
      if (e.contains("element_bound")) {
        const Json& b = e["element_bound"];
        p.errors->bounded = true;
        p.errors->over_bound = b.value("over_bound", size_t{0});
        p.errors->worst_ratio = NumberOr(b, "worst_ratio", INFINITY);
        p.errors->worst_index = b.value("worst_index", size_t{0});
        p.errors->worst_error = NumberOr(b, "worst_error", INFINITY);
        p.errors->worst_bound = NumberOr(b, "worst_bound", 0);
      }
    }
    if (j.contains("latency")) {
      const Json& l = j["latency"];
      p.latency = LatencyStats{l.at("median_s"), l.at("min_s"), l.at("max_s"), l.at("mean_s"),
                               l.at("spread"),   l.at("calls"), l.at("series")};
    }
    if (j.contains("counters") && j["counters"].contains("cycles")) {
      p.counters.available = true;
      p.counters.cycles = NumberOr(j["counters"], "cycles", 0);
      p.counters.instructions = NumberOr(j["counters"], "instructions", 0);
      p.counters.cache_misses = NumberOr(j["counters"], "cache_misses", 0);
      p.counters.dtlb_load_misses = NumberOr(j["counters"], "dtlb_load_misses", -1);
    } else if (j.contains("counters")) {
      p.counters.unavailable_reason = j["counters"].value("unavailable", "");
    }
    if (j.contains("score")) {
      const Json& s = j["score"];
      p.bound = s.value("bound", "");
      p.roofline_seconds = NumberOr(s, "roofline_seconds", 0);
      p.roofline_memory_seconds = NumberOr(s, "roofline_memory_seconds", 0);
      p.roofline_mm_seconds = NumberOr(s, "roofline_mm_seconds", 0);
      p.roofline_vec_seconds = NumberOr(s, "roofline_vec_seconds", 0);
      p.percent_of_peak = NumberOr(s, "percent_of_peak", 0);
      p.achieved_gbs = NumberOr(s, "achieved_gbs", 0);
      p.achieved_gflops = NumberOr(s, "achieved_gflops", 0);
    }
  } catch (const Json::exception& e) {
    return Error{std::string("profile: ") + e.what()};
  }
  return p;
}

std::string CostText(const Profile& profile, double cost) {
  if (!profile.metric) return FormatSeconds(cost);
  const MetricFigures& m = *profile.metric;
  const double figure = m.higher_is_better ? 1 / cost : cost;
  return fmt::format("{:.4g}{}{}", figure, m.unit.empty() ? "" : " ", m.unit);
}

std::string MeasureText(const Profile& profile) {
  if (!profile.latency) return "-";
  return CostText(profile, profile.latency->median_s);
}

}  // namespace accelopt
