#pragma once
/// Comparing a candidate's float outputs with the reference's double outputs.

#include <cstddef>
#include <string>

namespace accelopt::eval {

struct ErrorStats {
  double rel_l2 = 0;     ///< ||out - ref|| / ||ref|| (||out - ref|| when ||ref|| = 0)
  double max_abs = 0;    ///< largest |out - ref| over finite values
  size_t nan_count = 0;  ///< NaN in the output (an unwritten element stays NaN)
  size_t inf_count = 0;
  size_t elements = 0;
  bool finite() const { return nan_count == 0 && inf_count == 0; }
};

/// Accumulates in double. Thread-compatible.
ErrorStats CompareOutputs(const float* out, const double* ref, size_t n);

/// Merges per-output (or per-seed) statistics: worst rel_l2 and max_abs, summed counts.
ErrorStats Worst(const ErrorStats& a, const ErrorStats& b);

}  // namespace accelopt::eval
