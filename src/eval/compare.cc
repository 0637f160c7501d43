#include "eval/compare.h"

#include <algorithm>
#include <cmath>

namespace accelopt::eval {

ErrorStats CompareOutputs(const float* out, const double* ref, size_t n) {
  ErrorStats s;
  s.elements = n;
  double diff2 = 0, ref2 = 0;
  for (size_t i = 0; i < n; ++i) {
    double o = out[i];
    if (std::isnan(o)) {
      ++s.nan_count;
      continue;
    }
    if (std::isinf(o)) {
      ++s.inf_count;
      continue;
    }
    double d = o - ref[i];
    diff2 += d * d;
    ref2 += ref[i] * ref[i];
    s.max_abs = std::max(s.max_abs, std::fabs(d));
  }
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
