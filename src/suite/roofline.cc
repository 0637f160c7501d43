#include "suite/roofline.h"

#include "core/check.h"

namespace accelopt::suite {

Result<RooflineCounts> CountRoofline(const BoundTask& bound) {
  Bindings all = bound.task->constants;
  for (const auto& [k, v] : bound.params) all[k] = v;
  RooflineCounts counts;
  const auto& r = bound.task->roofline;
  for (auto [expr, slot] : {std::pair{&r.flops_mm, &counts.flops_mm}, std::pair{&r.flops_vec, &counts.flops_vec},
                            std::pair{&r.min_bytes, &counts.min_bytes}}) {
    auto value = expr->Evaluate(all);
    if (!value) return Error{"task '" + bound.task->name + "' roofline: " + value.error().message};
    if (*value < 0) return Error{"task '" + bound.task->name + "' roofline: '" + expr->text() + "' is negative"};
    *slot = *value;
  }
  if (counts.min_bytes <= 0) return Error{"task '" + bound.task->name + "' roofline: min_bytes must be positive"};
  return counts;
}

RooflineTime ComputeRooflineTime(const RooflineCounts& counts, const PeakRates& rates) {
  ACCELOPT_CHECK(rates.bandwidth_gbs > 0 && rates.peak_mm_gflops > 0 && rates.peak_vec_gflops > 0);
  RooflineTime t;
  t.memory_seconds = counts.min_bytes / (rates.bandwidth_gbs * 1e9);
  t.mm_seconds = counts.flops_mm / (rates.peak_mm_gflops * 1e9);
  t.vec_seconds = counts.flops_vec / (rates.peak_vec_gflops * 1e9);
  t.seconds = t.memory_seconds, t.bound = "memory";
  if (t.mm_seconds > t.seconds) t.seconds = t.mm_seconds, t.bound = "mm";
  if (t.vec_seconds > t.seconds) t.seconds = t.vec_seconds, t.bound = "vec";
  return t;
}

}  // namespace accelopt::suite
