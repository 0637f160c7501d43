#pragma once
/// eval: what every target's hardware profile shares. A profile is saved per
/// machine as a JSON file under DataDir()/hardware (the saved profile changes
/// only through `calibrate`); the figures in it are the target's own.

#include <string>

#include "core/json_io.h"

namespace accelopt::eval {

/// A rate above what the calibration measured, claimed by a kernel that was
/// correct on every check and, measured again, still ran faster than the
/// calibrated roofline allowed: evidence for the next calibration to confirm
/// (no evaluation applies it).
struct PeakEvidence {
  std::string figure;       ///< "bandwidth", "peak_mm" or "peak_vec" (a GPU's: "hbm", "fp32_gemm", ...)
  double value = 0;         ///< the rate the kernel claims (GB/s or GFLOP/s)
  double previous = 0;      ///< the calibrated rate
  std::string kernel_hash;  ///< of the kernel's source
  std::string task, shape;
  std::string measured_at;  ///< ISO-8601 UTC
};

/// A raised rate's evidence, as every target's hardware profile keeps it.
Json ToJson(const PeakEvidence& evidence);
/// Throws Json::exception naming a missing or mistyped field.
PeakEvidence PeakEvidenceFromJson(const Json& json);

/// What a user is told of `evidence` about the `machine` ("machine", "GPU"):
/// the claim, and that `calibrate` (the command to run) confirms it.
std::string BeyondCalibrationNote(const PeakEvidence& evidence, const std::string& machine,
                                  const std::string& calibrate);

/// `dir`/<fingerprint>.json
std::string HardwareProfilePath(const std::string& dir, const std::string& fingerprint);

}  // namespace accelopt::eval
