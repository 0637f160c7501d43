#include "targets/cuda/hardware_store.h"

#include <cctype>
#include <filesystem>

#include "eval/hardware_store.h"

namespace accelopt::cuda {
namespace {

constexpr const char* kRecalibrate = " (run `accelopt calibrate --target cuda --force`)";

Json ToJson(const GpuFigure& f) {
  return {{"measured", f.measured}, {"spread", f.spread}, {"theoretical", f.theoretical}, {"method", f.method}};
}

GpuFigure FigureFromJson(const Json& j) {
  return {j.at("measured").get<double>(), j.at("spread").get<double>(), j.at("theoretical").get<double>(),
          j.at("method").get<std::string>()};
}

// The device's properties, in place in `p`; throws Json::exception.
void ReadDevice(const Json& j, GpuHardwareProfile& p) {
  p.machine = j.at("fingerprint").get<std::string>();
  p.device = j.at("device_name").get<std::string>();
  p.cc_major = j.at("compute_capability").at(0).get<int>();
  p.cc_minor = j.at("compute_capability").at(1).get<int>();
  p.sm_count = j.at("sm_count").get<int>();
  p.sm_clock_mhz = j.at("sm_clock_mhz").get<double>();
  p.memory_clock_mhz = j.at("memory_clock_mhz").get<double>();
  p.memory_bus_bits = j.at("memory_bus_bits").get<int>();
  p.l2_bytes = j.at("l2_bytes").get<long>();
}

}  // namespace

Json ToJson(const GpuHardwareProfile& p) {
  Json details = Json::object();
  for (const auto& [name, f] : p.details) details[name] = ToJson(f);
  Json evidence = Json::array();
  for (const eval::PeakEvidence& e : p.evidence) evidence.push_back(eval::ToJson(e));
  return {{"kind", "cuda"},
          {"fingerprint", p.machine},
          {"device_name", p.device},
          {"compute_capability", {p.cc_major, p.cc_minor}},
          {"sm_count", p.sm_count},
          {"sm_clock_mhz", p.sm_clock_mhz},
          {"memory_clock_mhz", p.memory_clock_mhz},
          {"memory_bus_bits", p.memory_bus_bits},
          {"l2_bytes", p.l2_bytes},
          {"figures",
           {{"hbm_gbs", ToJson(p.hbm)},
            {"bf16_gemm_gflops", ToJson(p.bf16_gemm)},
            {"fp32_gemm_gflops", ToJson(p.fp32_gemm)},
            {"fp32_fma_gflops", ToJson(p.fp32_fma)}}},
          {"details", details},
          {"bandwidth_gbs", p.hbm.measured},
          {"peak_mm_gflops", p.fp32_gemm.measured},
          {"peak_vec_gflops", p.fp32_fma.measured},
          {"measured_at", p.measured_at},
          {"evidence", evidence}};
}

Result<GpuHardwareProfile> GpuHardwareProfileFromJson(const Json& j) {
  if (!j.is_object() || j.value("kind", "") != "cuda")
    return Error{"GPU hardware profile: not one (no \"kind\": \"cuda\"): a profile of another target?"};
  GpuHardwareProfile p;
  try {
    ReadDevice(j, p);
    const Json& figures = j.at("figures");
    p.hbm = FigureFromJson(figures.at("hbm_gbs"));
    p.bf16_gemm = FigureFromJson(figures.at("bf16_gemm_gflops"));
    p.fp32_gemm = FigureFromJson(figures.at("fp32_gemm_gflops"));
    p.fp32_fma = FigureFromJson(figures.at("fp32_fma_gflops"));
    if (j.contains("details"))
      for (const auto& [name, f] : j.at("details").items()) p.details[name] = FigureFromJson(f);
    p.measured_at = j.at("measured_at").get<std::string>();
    if (j.contains("evidence"))
      for (const Json& e : j.at("evidence")) p.evidence.push_back(eval::PeakEvidenceFromJson(e));
  } catch (const Json::exception& e) {
    return Error{std::string("GPU hardware profile: ") + e.what()};
  }
  if (p.hbm.measured <= 0 || p.fp32_gemm.measured <= 0 || p.fp32_fma.measured <= 0 || p.bf16_gemm.measured < 0)
    return Error{"GPU hardware profile: the HBM, fp32 GEMM and FMA rates must be positive"};
  return p;
}

std::string GpuHardwareProfilePath(const std::string& dir, const std::string& machine) {
  std::string name = machine;
  for (char& c : name)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '-' && c != '_') c = '_';
  return dir + "/cuda-" + name + ".json";
}

Result<std::optional<GpuHardwareProfile>> LoadGpuHardwareProfile(const std::string& dir, const std::string& machine) {
  const std::string path = GpuHardwareProfilePath(dir, machine);
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return std::optional<GpuHardwareProfile>{};
  auto json = ReadJsonFile(path);
  if (!json) return Error{json.error().message + kRecalibrate};
  auto profile = GpuHardwareProfileFromJson(*json);
  if (!profile) return Error{path + ": " + profile.error().message + kRecalibrate};
  if (profile->machine != machine)
    return Error{path + " holds the profile of '" + profile->machine + "', not of '" + machine + "'" + kRecalibrate};
  return std::optional<GpuHardwareProfile>{std::move(*profile)};
}

Status SaveGpuHardwareProfile(const std::string& dir, const GpuHardwareProfile& profile) {
  return WriteJsonFile(GpuHardwareProfilePath(dir, profile.machine), ToJson(profile));
}

}  // namespace accelopt::cuda
