#include "targets/cpu/hardware_store.h"

#include <filesystem>

namespace accelopt::cpu {

Json ToJson(const HardwareProfile& p) {
  Json evidence = Json::array();
  for (const PeakEvidence& e : p.evidence) evidence.push_back(ToJson(e));
  return {{"machine",
           {{"cpu_model", p.machine.cpu_model},
            {"cores", p.machine.cores},
            {"isa", p.machine.isa},
            {"simd_bits", p.machine.simd_bits},
            {"fingerprint", p.machine.fingerprint}}},
          {"bandwidth_gbs", p.bandwidth_gbs},
          {"peak_mm_gflops", p.peak_mm_gflops},
          {"peak_vec_gflops", p.peak_vec_gflops},
          {"blas_sgemm_gflops", p.blas_sgemm_gflops},
          {"clock_ghz", p.clock_ghz},
          {"fma_units", p.fma_units},
          {"fma_lanes", p.fma_lanes},
          {"theoretical_mm_gflops", p.theoretical_mm_gflops},
          {"theoretical_vec_gflops", p.theoretical_vec_gflops},
          {"measured_at", p.measured_at},
          {"other_load", p.other_load},
          {"rounds", p.rounds},
          {"spreads", p.spreads},
          {"evidence", evidence}};
}

Result<HardwareProfile> HardwareProfileFromJson(const Json& j) {
  HardwareProfile p;
  try {
    const Json& m = j.at("machine");
    p.machine.cpu_model = m.at("cpu_model").get<std::string>();
    p.machine.cores = m.at("cores").get<int>();
    p.machine.isa = m.at("isa").get<std::vector<std::string>>();
    p.machine.simd_bits = m.at("simd_bits").get<int>();
    p.machine.fingerprint = m.at("fingerprint").get<std::string>();
    p.bandwidth_gbs = j.at("bandwidth_gbs").get<double>();
    p.peak_mm_gflops = j.at("peak_mm_gflops").get<double>();
    p.peak_vec_gflops = j.at("peak_vec_gflops").get<double>();
    p.blas_sgemm_gflops = j.at("blas_sgemm_gflops").get<double>();
    p.clock_ghz = j.at("clock_ghz").get<double>();
    p.fma_units = j.at("fma_units").get<int>();
    p.fma_lanes = j.at("fma_lanes").get<int>();
    p.theoretical_mm_gflops = j.at("theoretical_mm_gflops").get<double>();
    p.theoretical_vec_gflops = j.at("theoretical_vec_gflops").get<double>();
    p.measured_at = j.at("measured_at").get<std::string>();
    p.other_load = j.value("other_load", 0.0);
    p.rounds = j.value("rounds", 0);
    if (j.contains("spreads")) p.spreads = j.at("spreads").get<std::map<std::string, double>>();
    if (j.contains("evidence"))
      for (const Json& e : j.at("evidence")) p.evidence.push_back(eval::PeakEvidenceFromJson(e));
  } catch (const Json::exception& e) {
    return Error{std::string("hardware profile: ") + e.what()};
  }
  if (p.bandwidth_gbs <= 0 || p.peak_mm_gflops <= 0 || p.peak_vec_gflops <= 0)
    return Error{"hardware profile: rates must be positive"};
  return p;
}

Result<std::optional<HardwareProfile>> LoadHardwareProfile(const std::string& dir, const std::string& fingerprint) {
  std::string path = HardwareProfilePath(dir, fingerprint);
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return std::optional<HardwareProfile>{};
  auto json = ReadJsonFile(path);
  if (!json) return Error{json.error().message + " (run `accelopt calibrate --force`)"};
  auto profile = HardwareProfileFromJson(*json);
  if (!profile) return Error{path + ": " + profile.error().message + " (run `accelopt calibrate --force`)"};
  return std::optional<HardwareProfile>{*profile};
}

Status SaveHardwareProfile(const std::string& dir, const HardwareProfile& profile) {
  return WriteJsonFile(HardwareProfilePath(dir, profile.machine.fingerprint), ToJson(profile));
}

suite::PeakRates RatesOf(const HardwareProfile& p) { return {p.bandwidth_gbs, p.peak_mm_gflops, p.peak_vec_gflops}; }

}  // namespace accelopt::cpu
