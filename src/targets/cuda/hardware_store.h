#pragma once
/// The GPU's hardware profiles, saved as JSON files beside the cpu target's
/// (DataDir()/hardware), one per machine as the cuda target names it
/// (Device::Machine, Target::Machine): cuda-<machine, made file-safe>.json.

#include <optional>
#include <string>

#include "core/json_io.h"
#include "targets/cuda/calibrate.h"

namespace accelopt::cuda {

/// Also writes `bandwidth_gbs`, `peak_mm_gflops` and `peak_vec_gflops`, the
/// rates an fp32 task is scored against, and `fingerprint` (the machine), for
/// readers that know only those (accelopt show); they are not read back.
Json ToJson(const GpuHardwareProfile& profile);
/// Errors name the missing or mistyped field, or that the JSON is not a GPU's
/// profile; the rates scored against must be positive.
Result<GpuHardwareProfile> GpuHardwareProfileFromJson(const Json& json);

/// `dir`/cuda-<machine>.json, the machine's characters other than letters,
/// digits, '.', '-' and '_' written as '_'.
std::string GpuHardwareProfilePath(const std::string& dir, const std::string& machine);

/// The saved profile of `machine`; nullopt when none was saved. A corrupt
/// file, or one holding another machine's profile, is an Error naming it.
Result<std::optional<GpuHardwareProfile>> LoadGpuHardwareProfile(const std::string& dir, const std::string& machine);
Status SaveGpuHardwareProfile(const std::string& dir, const GpuHardwareProfile& profile);

}  // namespace accelopt::cuda
