#pragma once
/// Building one kernel source into a shared library with fixed flags.

#include <string>
#include <vector>

#include "core/result.h"

namespace accelopt::cpu {

struct CompileOptions {
  std::string compiler = "g++";  ///< C++ compiler driver
  std::vector<std::string> flags = {"-O3", "-march=native", "-fopenmp", "-std=c++20"};
  std::vector<std::string> libraries;  ///< extra -l names a task allows (e.g. openblas)
  bool vectorization_report = true;    ///< keep -fopt-info-vec remarks
  double timeout_seconds = 120;        ///< the compiler is killed after this
  std::string cache_dir;               ///< builds keyed by content hash; "" = no cache
  size_t log_bytes = 32 << 10;         ///< diagnostics kept
};

struct CompileOutcome {
  bool ok = false;
  std::string library_path;  ///< the .so when ok
  std::string log;           ///< compiler diagnostics (truncated)
  std::string vectorization_report;
  double seconds = 0;  ///< compiler wall time (0 when cached)
  bool cached = false;
};

/// Compiles `source` with `header` force-included as shape.h. A failing
/// compilation is data (ok = false, log); an Error means the compiler could
/// not be started or the build folder not written. Blocks; thread-safe.
Result<CompileOutcome> CompileKernel(const std::string& source, const std::string& header,
                                     const CompileOptions& options, const std::string& scratch_dir);

}  // namespace accelopt::cpu
