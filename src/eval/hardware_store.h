#pragma once
/// eval: what every target's hardware profile shares. A profile is saved per
/// machine as a JSON file under DataDir()/hardware (the saved profile changes
/// only through `calibrate`, or when a kernel proves a rate, with itself as
/// the evidence); the figures in it are the target's own.

#include <string>

#include "core/json_io.h"

namespace accelopt::eval {

/// A rate raised above what the calibration measured, by a kernel that was
/// correct on every check and, measured again, still ran faster than the
/// calibrated roofline allowed: the kernel is the evidence.
struct PeakEvidence {
  std::string figure;       ///< "bandwidth", "peak_mm" or "peak_vec" (a GPU's: "hbm", "fp32_gemm", ...)
  double value = 0;         ///< the rate the kernel proved (GB/s or GFLOP/s)
  double previous = 0;      ///< the rate before
  std::string kernel_hash;  ///< of the kernel's source
  std::string task, shape;
  std::string measured_at;  ///< ISO-8601 UTC
};

/// A raised rate's evidence, as every target's hardware profile keeps it.
Json ToJson(const PeakEvidence& evidence);
/// Throws Json::exception naming a missing or mistyped field.
PeakEvidence PeakEvidenceFromJson(const Json& json);

/// `dir`/<fingerprint>.json
std::string HardwareProfilePath(const std::string& dir, const std::string& fingerprint);

}  // namespace accelopt::eval
