#include "eval/profile.h"

#include <cmath>

namespace accelopt::eval {

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
              {"vectorization_report", vectorization_report}}},
            {"run_log", run_log},
            {"seeds", seeds},
            {"tolerance", tolerance},
            {"wall_seconds", wall_seconds},
            {"kernel_seconds", kernel_seconds},
            {"phase_seconds", phase_seconds}};
  if (errors)
    j["errors"] = {{"rel_l2", Number(errors->rel_l2)},
                   {"max_abs", Number(errors->max_abs)},
                   {"nan_count", errors->nan_count},
                   {"inf_count", errors->inf_count},
                   {"elements", errors->elements}};
  if (latency)
    j["latency"] = {{"median_s", latency->median_s}, {"min_s", latency->min_s},   {"max_s", latency->max_s},
                    {"mean_s", latency->mean_s},     {"spread", latency->spread}, {"calls", latency->calls},
                    {"series", latency->series}};
  if (counters.available)
    j["counters"] = {
        {"cycles", counters.cycles}, {"instructions", counters.instructions}, {"cache_misses", counters.cache_misses}};
  else
    j["counters"] = {{"unavailable", counters.unavailable_reason}};
  if (status == Verdict::kOk)
    j["score"] = {{"bound", bound},
                  {"roofline_seconds", roofline_seconds},
                  {"percent_of_peak", percent_of_peak},
                  {"achieved_gbs", achieved_gbs},
                  {"achieved_gflops", achieved_gflops}};
  return j;
}

}  // namespace accelopt::eval
