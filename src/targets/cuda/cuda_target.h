#pragma once
/// The cuda target: one `.cu` file per candidate, defining
/// `extern "C" void kernel(const float* inputs..., float* outputs..., cudaStream_t stream)`
/// on device pointers. Built with nvcc (toolchain.h) for the GPU found, run
/// in its own process (the harness, harness.cu) under docs/trust.md carried to
/// GPUs, checked against the task's double-precision reference on the CPU
/// (computed as the cpu target computes it: eval::Expected), and scored
/// through eval/scoring against the GPU's calibration (calibrate.h,
/// gpu_scoring.h); where none is stored it scores nothing and says so.

#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "eval/expected.h"
#include "targets/cuda/calibrate.h"
#include "targets/cuda/toolchain.h"
#include "targets/registry.h"
#include "targets/target.h"

namespace accelopt::cuda {

struct CudaTargetOptions {
  NvccOptions nvcc;              ///< candidate and harness builds (arch set from the device)
  std::optional<Device> device;  ///< the GPU measured on; none: builds only (Run fails)
  /// Its calibration, which a correct kernel is scored against; none: not scored.
  std::optional<GpuHardwareProfile> hardware;
  /// Told each time a correct kernel, measured twice, claimed a rate beyond
  /// the calibrated one but within what the calibration could miss: evidence
  /// for the next `accelopt calibrate`, never applied (the rates do not move).
  std::function<void(const eval::PeakEvidence&)> on_beyond_calibration;
  eval::ReferenceOptions reference;  ///< how the CPU reference is built and run
  int seeds = 3;                    ///< correctness calls, each on its own drawn input set
  int timed_calls = 30;             ///< timed calls, each on fresh inputs
  int checked_calls = 3;            ///< of those, checked against the reference (positions drawn)
  int warmup_calls = 2;             ///< untimed, between the correctness and the timed calls
  double wall_seconds = 120;        ///< per harness process
  bool memcheck = false;            ///< also run the correctness calls under compute-sanitizer memcheck
  std::string work_dir;             ///< scratch for each evaluation
  bool keep_work = false;
};

/// The kernel file's extension: a task's CUDA baseline is baseline.cu.
inline const std::string kCudaExtension = ".cu";

std::unique_ptr<targets::Target> MakeCudaTarget(const CudaTargetOptions& options);

/// The registration: available where nvcc and a CUDA device are.
targets::TargetKind Registration();

/// The cuda target's calibrator (cuda_calibrator.cc): the first device's profile, saved or measured.
std::unique_ptr<targets::Calibrator> MakeCudaCalibrator();

}  // namespace accelopt::cuda
