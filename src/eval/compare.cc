#include "eval/compare.h"

#include <algorithm>
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

ErrorStats Worst(const ErrorStats& a, const ErrorStats& b) {
  ErrorStats s;
  s.rel_l2 = std::max(a.rel_l2, b.rel_l2);
  s.max_abs = std::max(a.max_abs, b.max_abs);
  s.nan_count = a.nan_count + b.nan_count;
  s.inf_count = a.inf_count + b.inf_count;
  s.elements = a.elements + b.elements;
  return s;
}

}  // namespace accelopt::eval
