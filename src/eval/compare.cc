#include "eval/compare.h"

#include <algorithm>
#include <cfloat>
#include <cmath>

namespace accelopt::eval {

ErrorStats CompareOutputs(const float* out, const double* ref, size_t n) {
  ErrorStats s;
  s.elements = n;
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
  s.nan_count = nans;
  s.inf_count = infs;
  s.max_abs = max_abs;
  double norm = std::sqrt(diff2);
  s.rel_l2 = ref2 > 0 ? norm / std::sqrt(ref2) : norm;
  if (!s.finite()) s.rel_l2 = INFINITY;
  return s;
}

namespace {

// RMS of ref32 - ref over the output: the typical float32 rounding of this
// output, a floor for elements whose own float32 evaluation happened to be exact.
double RoundingRms(const double* ref, const float* ref32, size_t n) {
  double sum = 0;
#pragma omp parallel for simd schedule(static) reduction(+ : sum) if (n > (1 << 18))
  for (size_t i = 0; i < n; ++i) {
    double d = static_cast<double>(ref32[i]) - ref[i];
    sum += std::isfinite(d) ? d * d : 0.0;
  }
  return n ? std::sqrt(sum / static_cast<double>(n)) : 0;
}

}  // namespace

ErrorStats CompareOutputs(const float* out, const double* ref, const float* ref32, size_t n, double scale) {
  ErrorStats s = CompareOutputs(out, ref, n);
  s.bounded = true;
  const double floor = RoundingRms(ref, ref32, n);
  size_t over = 0;
  double worst = 0;
  size_t worst_at = 0;
#pragma omp parallel if (n > (1 << 18))
  {
    size_t local_over = 0, local_at = 0;
    double local_worst = 0;
#pragma omp for schedule(static) nowait
    for (size_t i = 0; i < n; ++i) {
      double err = std::fabs(static_cast<double>(out[i]) - ref[i]);
      double rounding = std::fabs(static_cast<double>(ref32[i]) - ref[i]);
      if (!std::isfinite(rounding)) rounding = 0;
      double bound = scale * (rounding + FLT_EPSILON * std::fabs(ref[i]) + floor) + DBL_MIN;
      double ratio = std::isfinite(err) ? err / bound : 0;  // non-finite outputs are counted apart
      local_over += ratio > 1;
      if (ratio > local_worst) local_worst = ratio, local_at = i;
    }
#pragma omp critical
    {
      over += local_over;
      if (local_worst > worst || (local_worst == worst && local_at < worst_at))
        worst = local_worst, worst_at = local_at;
    }
  }
  s.over_bound = over;
  s.worst_ratio = worst;
  s.worst_index = worst_at;
  if (n) {
    s.worst_error = std::fabs(static_cast<double>(out[worst_at]) - ref[worst_at]);
    double rounding = std::fabs(static_cast<double>(ref32[worst_at]) - ref[worst_at]);
    if (!std::isfinite(rounding)) rounding = 0;
    s.worst_bound = scale * (rounding + FLT_EPSILON * std::fabs(ref[worst_at]) + floor);
  }
  return s;
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
