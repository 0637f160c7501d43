#include "eval/hardware_store.h"

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

std::string HardwareProfilePath(const std::string& dir, const std::string& fingerprint) {
  return dir + "/" + fingerprint + ".json";
}

}  // namespace accelopt::eval
