#pragma once
/// Hardware profiles saved per machine fingerprint, as JSON files.

#include <optional>
#include <string>

#include "core/json_io.h"
#include "eval/hardware_store.h"
#include "suite/roofline.h"
#include "targets/cpu/calibrate.h"

namespace accelopt::cpu {

Json ToJson(const HardwareProfile& profile);
/// Errors name the missing or mistyped field.
Result<HardwareProfile> HardwareProfileFromJson(const Json& json);

/// `dir`/<fingerprint>.json (eval/hardware_store.h)
using eval::HardwareProfilePath;

/// The saved profile for this fingerprint; nullopt when none was saved.
/// A corrupt file is an Error naming it.
Result<std::optional<HardwareProfile>> LoadHardwareProfile(const std::string& dir, const std::string& fingerprint);
Status SaveHardwareProfile(const std::string& dir, const HardwareProfile& profile);

/// The rates the roofline divides by.
suite::PeakRates RatesOf(const HardwareProfile& profile);

}  // namespace accelopt::cpu
