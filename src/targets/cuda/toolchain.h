#pragma once
/// The cuda target's toolchain: where nvcc is, which CUDA device this machine
/// has, and building a candidate `.cu` (or the harness) with nvcc.
///
/// The device is found by loading libcudart with dlopen, so that the engine
/// links no CUDA library and runs (saying why the target is unavailable) on
/// machines without one.

#include <string>
#include <utility>
#include <vector>

#include "core/result.h"

namespace accelopt::cuda {

/// nvcc on $PATH, else /usr/local/cuda/bin/nvcc; "" when neither exists.
std::string FindNvcc();

/// The first CUDA device, as the runtime reports it.
struct Device {
  std::string name;  ///< "NVIDIA H100 80GB HBM3"
  int major = 0, minor = 0;
  long l2_bytes = 0;
  /// nvcc's -arch for it: sm_90a on Hopper (its wgmma/TMA instructions), sm_XY elsewhere.
  std::string Arch() const;
  /// The machine as the cuda target names it (Target::Machine): "<name> <arch>".
  /// Evaluations and the GPU's hardware profile are kept under it.
  std::string Machine() const { return name + " " + Arch(); }
};

/// The device, or an Error saying why there is none ("no CUDA device:
/// cudaGetDeviceCount returned 100 (no CUDA-capable device is detected)",
/// or that libcudart could not be loaded). Blocks briefly; thread-safe.
Result<Device> FindDevice();

/// The arch a candidate is built for when there is no device (an H100's).
inline const std::string kDefaultArch = "sm_90a";

struct NvccOptions {
  std::string nvcc;  ///< the compiler; "" = FindNvcc()
  std::string arch = kDefaultArch;
  std::vector<std::string> flags = {"-O3", "-std=c++17", "-lineinfo"};
  double timeout_seconds = 180;  ///< the compiler is killed after this
  std::string cache_dir;         ///< builds keyed by content hash; "" = no cache
  size_t log_bytes = 32 << 10;   ///< diagnostics kept
};

struct NvccOutcome {
  bool ok = false;
  std::string library_path;     ///< kernel.so when ok
  std::string log;              ///< nvcc's diagnostics without ptxas' report (truncated)
  std::string register_report;  ///< ptxas -v: registers, spills, shared memory per function
  double seconds = 0;           ///< compiler wall time (0 when cached)
  bool cached = false;
  /// Why the source was refused, not compiled (eval::ForbiddenFileAccess); "" when it was not.
  std::string refused;
};

/// Builds `source` (kernel.cu, with `header` force-included as shape.h) into
/// a shared library with fixed flags and ptxas' verbose report. A failing
/// build is data (ok = false, log); an Error means nvcc could not run, or
/// the build environment itself is failing (a trivial file does not build
/// either). Blocks; thread-safe.
Result<NvccOutcome> CompileCuda(const std::string& source, const std::string& header, const NvccOptions& options,
                                const std::string& scratch_dir);

/// A program of the engine's own (its source built into the engine as text).
struct ProgramSource {
  std::string program;  ///< the executable's name: "accelopt-cuda-harness"
  /// (file name, text), written side by side; the first is the one compiled.
  std::vector<std::pair<std::string, std::string>> files;
  std::vector<std::string> link_args;  ///< after the sources: "-ldl", "-lcublasLt"
};

/// Builds `source` with nvcc for `options.arch` under `options.cache_dir`,
/// keyed by its text, on first use; later calls find it there: its path. An
/// Error when it does not build (the engine's failure: nvcc's output is in it).
/// Blocks; processes building the same program at once each publish one copy.
Result<std::string> BuildProgram(const NvccOptions& options, const ProgramSource& source);

/// The hash (core/hash.h) of the source a library of CompileCuda was built
/// from, as the engine hashes a kernel's source: CompileCuda keeps kernel.cu
/// beside kernel.so. "" when it cannot be read.
std::string SourceHashOf(const std::string& library_path);

/// The harness program (harness.cu), built by BuildProgram.
Result<std::string> BuildHarness(const NvccOptions& options);

/// The toolkit's library folder beside `nvcc` (bin/../lib64, else bin/../lib):
/// where a program linked with a CUDA library finds it at run time.
std::string ToolkitLibraryDir(const std::string& nvcc);

/// ptxas' "info" lines from nvcc's output, shortened to the kernel's own
/// functions' lines; the rest of the output goes to `rest`.
std::string SplitPtxasReport(const std::string& output, std::string* rest);

}  // namespace accelopt::cuda
