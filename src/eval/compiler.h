#pragma once
/// Building one kernel source into a shared library with fixed flags.

#include <string>
#include <vector>

#include "core/result.h"

namespace accelopt::eval {

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
  std::string library_path;          ///< the .so when ok
  std::string log;                   ///< compiler diagnostics (truncated)
  std::string vectorization_report;  ///< the kernel's loops the compiler vectorized
  std::string not_vectorized;        ///< the kernel's loops it did not, and why (NotVectorizedRemarks)
  std::string hot_loop;              ///< its hottest loop in assembly (HotLoop)
  double seconds = 0;                ///< compiler wall time (0 when cached)
  bool cached = false;
  /// Why the source was refused, not compiled (a file it would read at
  /// compile time: ForbiddenFileAccess, or the assembler's .incbin/.include);
  /// "" when it was not. A refused source is not ok; `log` says why.
  std::string refused;
};

/// Compiles `source` with `header` force-included as shape.h. A failing
/// compilation is data (ok = false, log), and so is a source refused because
/// it would read a file at compile time (`refused`); an Error means the
/// compiler could not be started or the build folder not written. Blocks; thread-safe.
Result<CompileOutcome> CompileKernel(const std::string& source, const std::string& header,
                                     const CompileOptions& options, const std::string& scratch_dir);

/// From gcc's -fopt-info-vec-all remarks: each of the kernel's own loops that
/// was not vectorized and why ("kernel.cpp:28: vectorization is not
/// profitable"), once per line and reason, at most `max_lines` of them.
std::string NotVectorizedRemarks(const std::string& remarks, size_t max_lines = 30);

/// The compiler's diagnostics about the kernel's own files: every diagnostic
/// in kernel.cpp or shape.h, the errors located in the toolchain's headers
/// (under /usr/), the linker's messages, and a line saying how many were left
/// out: the warnings in system headers (an AVX-512 kernel draws ~32 KB of
/// -Wmaybe-uninitialized from the intrinsics headers) and every diagnostic
/// located in any other file, with its quoted lines (a file the kernel
/// should not have read).
std::string KeepOwnDiagnostics(const std::string& log);

/// `log` with the compiled file's own name (kernel.cpp) replaced by `name`, for
/// sources that are not candidates (a task's reference).
std::string NameSourceInLog(const std::string& log, const std::string& name);

}  // namespace accelopt::eval
