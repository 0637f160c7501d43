#pragma once
/// The cuda target's calibration: the GPU's limits its percent of peak divides
/// by (HBM bandwidth, the cuBLASLt bf16 and fp32 GEMM peaks, the FP32 FMA
/// peak), measured on the device by calibrate.cu, which the engine builds with
/// nvcc at first use and whose printed lines it reads back here. Beside each
/// figure, the theoretical one from the device's properties (arch_peaks.h).

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "core/result.h"
#include "eval/hardware_store.h"
#include "targets/cuda/toolchain.h"

namespace accelopt::cuda {

/// One measured figure and its ceiling.
struct GpuFigure {
  double measured = 0;     ///< the best repetition: GB/s or GFLOP/s
  double spread = 0;       ///< (best - third best) / best over the repetitions
  double theoretical = 0;  ///< from the device's properties and clocks; 0 = unknown for this architecture
  std::string method;      ///< how it was measured, in words
};

/// A GPU's measured limits, saved per machine (the cuda target's Machine()).
struct GpuHardwareProfile {
  std::string machine;  ///< the cuda target's Machine(), "NVIDIA H100 80GB HBM3 sm_90a": the key it is saved under
  std::string device;   ///< the device's name
  int cc_major = 0, cc_minor = 0;
  int sm_count = 0;
  double sm_clock_mhz = 0;  ///< the maximum SM clock, which the theoretical figures assume
  double memory_clock_mhz = 0;
  int memory_bus_bits = 0;
  long l2_bytes = 0;
  GpuFigure hbm;        ///< GB/s: the better of cudaMemcpyAsync and a copy kernel, read and write counted
  GpuFigure bf16_gemm;  ///< GFLOP/s of cuBLASLt bf16 GEMM (fp32 accumulation); measured 0: no bf16 tensor cores
  GpuFigure fp32_gemm;  ///< GFLOP/s of cuBLASLt fp32 GEMM, CUBLAS_COMPUTE_32F without TF32
  GpuFigure fp32_fma;   ///< GFLOP/s of an FP32 FMA kernel (2 per FMA)
  /// The measurements a figure was chosen from: "hbm_memcpy_gbs", "hbm_copy_kernel_gbs".
  std::map<std::string, GpuFigure> details;
  std::string measured_at;                  ///< ISO-8601 UTC
  std::vector<eval::PeakEvidence> evidence;  ///< rates raised by kernels since, oldest first
};

/// Reads what calibrate.cu printed. An Error names what is wrong: the program
/// said it failed (its message), the output was cut off before `done`, a line
/// is not one it prints (its number and text), or a figure is missing.
/// `machine` and `measured_at` are left empty.
Result<GpuHardwareProfile> ParseCalibrationOutput(const std::string& output);

struct GpuCalibrationOptions {
  NvccOptions nvcc;               ///< builds the program; its cache_dir keeps it
  std::string work_dir;           ///< where the program runs; "" = the system's temporary folder
  int repeats = 10;               ///< timed repetitions of each measurement; the best counts
  long gemm_n = 8192;             ///< square size of the GEMMs
  long copy_bytes = 0;            ///< bytes per copy buffer; 0 = the larger of 1 GiB and 32 times the L2
  double timeout_seconds = 300;   ///< the program is killed after this
  bool device_lock = true;        ///< measure under the machine-wide "cuda:0" device lock
  double max_over_theory = 1.05;  ///< a figure above this share of its theoretical one is refused
  double min_fma_share = 0.5;     ///< an FMA peak below this share of the theoretical: a busy or throttled GPU
  double min_hbm_share = 0.5;     ///< the same for the HBM bandwidth
  double max_spread = 0.10;       ///< a figure whose repetitions spread more did not hold still
};

/// The program calibrate.cu (with arch_peaks.h), built by BuildProgram and
/// linked with cuBLASLt (found at run time beside nvcc): its path.
Result<std::string> BuildCalibrator(const NvccOptions& options);

/// A calibration and whether it may be saved as the machine's profile.
struct GpuCalibration {
  GpuHardwareProfile profile;
  std::vector<std::string> problems;  ///< why it is not the machine's profile; empty: it is
};

/// The checks a calibration must pass to be saved: every figure positive
/// (bf16 aside on a device without it), none above its theoretical figure by
/// more than `max_over_theory`, fp32 GEMM not above the FMA peak, the FMA peak
/// and the bandwidth not far below theirs, every spread within `max_spread`.
std::vector<std::string> CheckGpuProfile(const GpuHardwareProfile& profile, const GpuCalibrationOptions& options);

/// Measures the first CUDA device: builds the program, runs it (under the
/// device lock), reads its output and checks it. Blocks for tens of seconds.
/// An Error, naming why, when there is no device (FindDevice's message), no
/// nvcc, the program does not build, or it fails or prints something unreadable.
Result<GpuCalibration> CalibrateGpu(const GpuCalibrationOptions& options);

/// Calibrates (progress and problems told through `say`) and saves the
/// profile under `data_dir`/hardware when it passes its checks (`saved` says
/// whether it did). An Error as CalibrateGpu's, or when the profile folder
/// cannot be written (found before measuring).
Result<GpuCalibration> CalibrateGpuAndSave(const GpuCalibrationOptions& options, const std::string& data_dir,
                                           const std::function<void(const std::string&)>& say, bool* saved);

}  // namespace accelopt::cuda
