#include "eval/hardware_store.h"

#include <fmt/core.h>

namespace accelopt::eval {

Json ToJson(const PeakEvidence& e) {
  return {{"figure", e.figure}, {"value", e.value}, {"previous", e.previous},      {"kernel_hash", e.kernel_hash},
          {"task", e.task},     {"shape", e.shape}, {"measured_at", e.measured_at}};
}

PeakEvidence PeakEvidenceFromJson(const Json& e) {
  return {e.at("figure").get<std::string>(),      e.at("value").get<double>(),     e.at("previous").get<double>(),
          e.at("kernel_hash").get<std::string>(), e.at("task").get<std::string>(), e.at("shape").get<std::string>(),
          e.at("measured_at").get<std::string>()};
}

std::string BeyondCalibrationNote(const PeakEvidence& e, const std::string& machine, const std::string& calibrate) {
  return fmt::format(
      "note: kernel {} ({}) measured this {}'s {} at {:.4g}, beyond the calibrated {:.4g}: run `{}` on an idle {} "
      "to confirm; scores stay against the calibration",
      e.kernel_hash, e.task, machine, e.figure, e.value, e.previous, calibrate, machine);
}

std::string HardwareProfilePath(const std::string& dir, const std::string& fingerprint) {
  return dir + "/" + fingerprint + ".json";
}

}  // namespace accelopt::eval
