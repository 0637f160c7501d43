#pragma once
/// A cpu target set up for tests: built harness, private scratch and cache,
/// short limits, fixed nominal peak rates (scores in tests are not measurements).

#include <memory>

#include "targets/cpu/cpu_target.h"
#include "testing/temp_dir.h"

namespace accelopt::testing {

inline cpu::CpuTargetOptions TestTargetOptions(const TempDir& scratch) {
  cpu::CpuTargetOptions options;
  options.rates = {20, 100, 50};
  options.seeds = 2;
  options.wall_seconds = 10;
  options.timing.budget_seconds = 0.02;
  options.timing.max_series = 1;
#ifdef ACCELOPT_HARNESS
  options.harness_path = ACCELOPT_HARNESS;
#endif
  options.work_dir = scratch.path() + "/work";
  options.kernel_compile.cache_dir = scratch.path() + "/build";
  options.reference_compile.cache_dir = scratch.path() + "/build";
  return options;
}

}  // namespace accelopt::testing
