#include "eval/compare.h"

#include <algorithm>
#include <cfloat>
#include <cmath>

#include <fmt/core.h>

namespace accelopt::eval {
namespace {

// The L2 statistics from their sums, with the counts already in `s`.
void FinishL2(ErrorStats& s, size_t n, double diff2, double ref2, double max_abs) {
  s.elements = n;
  s.max_abs = max_abs;
  const double norm = std::sqrt(diff2);
  s.rel_l2 = !s.finite() ? INFINITY : ref2 > 0 ? norm / std::sqrt(ref2) : norm;
}

}  // namespace

ErrorStats CompareOutputs(const float* out, const double* ref, size_t n) {
  double diff2 = 0, ref2 = 0, max_abs = 0;
  size_t nans = 0, infs = 0;
  // Branch-free so that it vectorizes; threads for large outputs.
#pragma omp parallel for simd schedule(static) reduction(+ : diff2, ref2, nans, infs) reduction(max : max_abs) \
    if (n > (1 << 18))
  for (size_t i = 0; i < n; ++i) {
    double o = out[i];
    bool nan = std::isnan(o), inf = std::isinf(o);
    nans += nan;
    infs += inf;
    double d = nan || inf ? 0.0 : o - ref[i];
    double r = nan || inf ? 0.0 : ref[i];
    diff2 += d * d;
    ref2 += r * r;
    max_abs = std::max(max_abs, std::fabs(d));
  }
  ErrorStats s;
  s.nan_count = nans;
  s.inf_count = infs;
  FinishL2(s, n, diff2, ref2, max_abs);
  return s;
}

double RoundingFloor(const double* ref, const float* ref32, size_t n) {
  double sum = 0;
#pragma omp parallel for simd schedule(static) reduction(+ : sum) if (n > (1 << 18))
  for (size_t i = 0; i < n; ++i) {
    double d = static_cast<double>(ref32[i]) - ref[i];
    sum += std::isfinite(d) ? d * d : 0.0;
  }
  return n ? std::sqrt(sum / static_cast<double>(n)) : 0;
}

namespace {

double ElementBound(double ref, float ref32, double floor, double scale) {
  double rounding = std::fabs(static_cast<double>(ref32) - ref);
  if (!std::isfinite(rounding)) rounding = 0;
  return scale * (rounding + FLT_EPSILON * std::fabs(ref) + floor);
}

// One pass for both tests: the L2 sums and every element against its bound,
// `bound(i)`.
template <typename Bound>
ErrorStats CompareBounded(const float* out, const double* ref, size_t n, Bound bound) {
  double diff2 = 0, ref2 = 0, max_abs = 0, worst = 0;
  size_t nans = 0, infs = 0, over = 0, worst_at = 0;
#pragma omp parallel if (n > (1 << 18))
  {
    double l_diff2 = 0, l_ref2 = 0, l_max = 0, l_worst = 0;
    size_t l_nans = 0, l_infs = 0, l_over = 0, l_at = 0;
#pragma omp for schedule(static) nowait
    for (size_t i = 0; i < n; ++i) {
      const double o = out[i];
      if (std::isnan(o) || std::isinf(o)) {
        l_nans += std::isnan(o);
        l_infs += std::isinf(o);
        continue;
      }
      const double d = o - ref[i], err = std::fabs(d);
      l_diff2 += d * d;
      l_ref2 += ref[i] * ref[i];
      l_max = std::max(l_max, err);
      const double ratio = err / (bound(i) + DBL_MIN);
      l_over += ratio > 1;
      if (ratio > l_worst) l_worst = ratio, l_at = i;
    }
#pragma omp critical
    {
      diff2 += l_diff2, ref2 += l_ref2, nans += l_nans, infs += l_infs, over += l_over;
      max_abs = std::max(max_abs, l_max);
      if (l_worst > worst || (l_worst == worst && l_at < worst_at)) worst = l_worst, worst_at = l_at;
    }
  }
  ErrorStats s;
  s.nan_count = nans;
  s.inf_count = infs;
  FinishL2(s, n, diff2, ref2, max_abs);
  s.bounded = true;
  s.over_bound = over;
  s.worst_ratio = worst;
  s.worst_index = worst_at;
  if (n) {
    s.worst_error = std::isfinite(out[worst_at]) ? std::fabs(static_cast<double>(out[worst_at]) - ref[worst_at]) : 0;
    s.worst_bound = bound(worst_at);
  }
  return s;
}

}  // namespace

ErrorStats CompareOutputs(const float* out, const double* ref, const float* ref32, size_t n, double floor,
                          double scale) {
  return CompareBounded(out, ref, n, [&](size_t i) { return ElementBound(ref[i], ref32[i], floor, scale); });
}

ErrorStats CompareWithin(const float* out, const double* ref, size_t n, double atol, double rtol) {
  return CompareBounded(out, ref, n, [&](size_t i) { return std::max(atol, rtol * std::fabs(ref[i])); });
}

ErrorStats CompareOutput(const suite::BoundTensor& output, const float* out, const double* ref, const float* ref32,
                         double floor) {
  const size_t n = static_cast<size_t>(output.elements);
  if (output.dtype == suite::DType::kBf16) return CompareWithin(out, ref, n);
  return ref32 ? CompareOutputs(out, ref, ref32, n, floor) : CompareOutputs(out, ref, n);
}

std::string JudgeOutput(const ErrorStats& e, const suite::BoundTensor& output, const std::string& label,
                        double tolerance) {
  const std::string what = "output '" + output.name + "' (" + label + "): ";
  if (!e.finite()) return what + fmt::format("{} NaN and {} Inf of {} values", e.nan_count, e.inf_count, e.elements);
  if (e.rel_l2 > tolerance) return what + fmt::format("relative L2 error {:.3g} exceeds {:.3g}", e.rel_l2, tolerance);
  if (!e.bounded || e.over_bound == 0) return "";
  const bool bf16 = output.dtype == suite::DType::kBf16;
  const std::string allowed = bf16 ? fmt::format("the bf16 tolerance (absolute {:g}, relative {:g}) allows {:.3g}",
                                                 kBf16Atol, kBf16Rtol, e.worst_bound)
                                   : fmt::format("float32 rounding allows {:.3g}", e.worst_bound);
  return what + fmt::format("element {} is off by {:.3g} where {} ({} of {} elements beyond their bound{})",
                            e.worst_index, e.worst_error, allowed, e.over_bound, e.elements,
                            bf16 ? "" : ": a dropped or changed term?");
}

ErrorStats Worst(const ErrorStats& a, const ErrorStats& b) {
  ErrorStats s;
  s.rel_l2 = std::max(a.rel_l2, b.rel_l2);
  s.max_abs = std::max(a.max_abs, b.max_abs);
  s.nan_count = a.nan_count + b.nan_count;
  s.inf_count = a.inf_count + b.inf_count;
  s.elements = a.elements + b.elements;
  s.bounded = a.bounded || b.bounded;
  s.over_bound = a.over_bound + b.over_bound;
  const ErrorStats& worse = b.worst_ratio > a.worst_ratio ? b : a;
  s.worst_ratio = worse.worst_ratio;
  s.worst_index = worse.worst_index;
  s.worst_error = worse.worst_error;
  s.worst_bound = worse.worst_bound;
  return s;
}

}  // namespace accelopt::eval
