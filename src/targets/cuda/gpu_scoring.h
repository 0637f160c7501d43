#pragma once
/// How the cuda target scores a correct kernel: eval/scoring against its GPU's
/// calibration (calibrate.h). The memory term divides by the measured HBM
/// bandwidth, the vector term by the FP32 FMA peak (2 FLOPs per FMA), the
/// matmul term by the bf16 tensor-core GEMM peak when the task's inputs are
/// bf16, else by the fp32 GEMM peak (the suite's float32 tasks allow a
/// relative error TF32 cannot meet, so tensor cores are not their ceiling).

#include <functional>
#include <string>
#include <vector>

#include "core/profile.h"
#include "core/result.h"
#include "eval/scoring.h"
#include "suite/roofline.h"
#include "suite/task.h"
#include "targets/cuda/calibrate.h"

namespace accelopt::cuda {

/// Whether the task's matrix arithmetic runs on bf16 inputs (some input is
/// bf16: the paged-attention tasks); the float32 suite tasks are not.
bool InputsAreBf16(const suite::BoundTask& bound);

/// The rates the roofline divides by on this GPU. On a device without bf16
/// tensor cores (a bf16 figure of 0) bf16 inputs take the fp32 GEMM peak.
suite::PeakRates RatesFor(const GpuHardwareProfile& hardware, bool bf16_inputs);

/// RatesFor with the theoretical figures and spreads beside them, as the
/// judgement of a kernel beyond the roofline needs them.
eval::ScoringPeaks PeaksFor(const GpuHardwareProfile& hardware, bool bf16_inputs);

/// The evidence a kernel's claims make (eval::ScoreMeasuringAgainBeyondPeak),
/// for the next calibration to confirm: never applied to a profile.
std::vector<eval::PeakEvidence> EvidenceOf(const std::vector<eval::ProvedRate>& proved, const std::string& kernel_hash,
                                           const std::string& task, const std::string& shape);

/// Scores a correct profile against `hardware` at the bound task's shape:
/// faster than the roofline, it is measured again (`measure_again`) and is
/// then suspect, or, within what the calibration could miss, ok with its
/// claims told to `on_evidence`. `hardware` is never changed: only
/// `accelopt calibrate` moves the rates. An Error is the engine's: the
/// roofline does not evaluate, or measuring again failed.
Status ScoreOnGpu(const suite::BoundTask& bound, const std::string& kernel_hash, const GpuHardwareProfile& hardware,
                  Profile& profile, const std::function<Status(Profile& again)>& measure_again,
                  const std::function<void(const eval::PeakEvidence&)>& on_evidence);

}  // namespace accelopt::cuda
