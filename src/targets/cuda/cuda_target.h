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

#include "eval/device_lock.h"
#include "eval/expected.h"
#include "eval/sandbox.h"
#include "targets/cuda/calibrate.h"
#include "targets/cuda/toolchain.h"
#include "targets/registry.h"
#include "targets/target.h"

namespace accelopt::cuda {

/// The cuda target's only steps that need the CUDA toolkit or a GPU: building
/// a candidate and the harness with nvcc, and running the harness in one
/// evaluation's folder. Everything else (the CPU reference, the inputs and
/// plan written for the harness, the judging of what it wrote, the scoring)
/// is the target's own: a test that replaces this layer runs all of it
/// without a GPU. The target calls it from one thread at a time.
class DeviceLayer {
 public:
  virtual ~DeviceLayer() = default;
  /// Builds a candidate, as CompileCuda (toolchain.h) does.
  virtual Result<NvccOutcome> Compile(const std::string& source, const std::string& shape_header,
                                      const NvccOptions& options, const std::string& scratch_dir) = 0;
  /// The harness program's path, built at first use, as BuildHarness does.
  virtual Result<std::string> Harness(const NvccOptions& options) = 0;
  /// Runs `request` to its end: argv is [compute-sanitizer and its flags,]
  /// HARNESS KERNEL.so plan.txt result.txt outputs.bin, run in
  /// `request.workdir`, where plan.txt, slots.bin and tables.bin are
  /// (harness.cu says what each holds and what it writes). Blocks.
  virtual Result<eval::SandboxOutcome> Run(const eval::SandboxRequest& request) = 0;
};

/// The real layer: nvcc, and the harness run in the sandbox on this machine's GPU.
std::shared_ptr<DeviceLayer> MakeGpuDeviceLayer();

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
  /// Evaluate under the machine-wide lock of the "cuda:0" device
  /// (eval/device_lock.h): each evaluation's reference and harness runs take
  /// turns with other processes' (and with `calibrate --target cuda`).
  bool device_lock = true;
  eval::DeviceLock::OnWait on_device_wait;  ///< told while waiting for the device; empty = a line on stderr
  std::shared_ptr<DeviceLayer> device_layer;  ///< empty = MakeGpuDeviceLayer()
};

/// The options the registration makes the target with: the reference's
/// (built and run as the cpu target's, by eval::Expected, with the harness
/// found by HarnessPath()), nvcc's, the folders and limits from `settings`,
/// the device given and its stored calibration.
Result<CudaTargetOptions> OptionsFor(const targets::TargetSettings& settings, const std::optional<Device>& device);

/// The kernel file's extension: a task's CUDA baseline is baseline.cu.
inline const std::string kCudaExtension = ".cu";
/// The shape the cuda target evaluates a task at by default, where the task
/// has it: one whose roofline on an H100 is at least 50 us, well above a
/// kernel launch (the `bench` shapes, sized for the CPU, are not).
inline const std::string kGpuShape = "gpu";
/// kGpuShape when `task` has it, else "bench".
inline std::string CudaDefaultShape(const suite::Task& task) {
  return task.shapes.count(kGpuShape) ? kGpuShape : "bench";
}

std::unique_ptr<targets::Target> MakeCudaTarget(const CudaTargetOptions& options);

/// The registration: available where nvcc and a CUDA device are.
targets::TargetKind Registration();

/// The cuda target's calibrator (cuda_calibrator.cc): the first device's profile, saved or measured.
std::unique_ptr<targets::Calibrator> MakeCudaCalibrator();

}  // namespace accelopt::cuda
