#pragma once
/// The roofline time T of DESIGN.md section 3 and percent of peak.

#include <string>

#include "core/result.h"
#include "suite/task.h"

namespace accelopt::suite {

/// What the hardware can do, in the units the roofline needs.
struct PeakRates {
  double bandwidth_gbs = 0;    ///< GB/s (1e9 bytes)
  double peak_mm_gflops = 0;   ///< matrix-multiply (FMA) GFLOP/s
  double peak_vec_gflops = 0;  ///< other vector arithmetic GFLOP/s
};

/// The counts of one task at one shape.
struct RooflineCounts {
  double flops_mm = 0;
  double flops_vec = 0;
  double min_bytes = 0;
};

/// T and the component that set it.
struct RooflineTime {
  double seconds = 0;
  std::string bound;  ///< "memory", "mm" or "vec"
  /// Each component's time: how near the others come to bounding the kernel.
  double memory_seconds = 0, mm_seconds = 0, vec_seconds = 0;
};

/// Evaluates the task's roofline expressions at the bound shape.
Result<RooflineCounts> CountRoofline(const BoundTask& bound);

/// T = max(bytes / bandwidth, flops_mm / peak_mm, flops_vec / peak_vec).
/// Requires every rate to be positive.
RooflineTime ComputeRooflineTime(const RooflineCounts& counts, const PeakRates& rates);

}  // namespace accelopt::suite
