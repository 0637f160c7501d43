#pragma once
/// The cpu target's registration: how it is built from the user's settings
/// (its hardware profile loaded, or measured when missing) and whether it can
/// run here.

#include <memory>
#include <optional>
#include <string>

#include "targets/cpu/calibrate.h"
#include "targets/cpu/cpu_target.h"
#include "targets/registry.h"

namespace accelopt::cpu {

targets::TargetKind Registration();

/// The cpu target's calibrator (cpu_calibrator.cc): this machine's profile,
/// saved or measured; its setting `fma_units` (CalibrationOptions::fma_units).
std::unique_ptr<targets::Calibrator> MakeCpuCalibrator();

/// Calibrates this machine (progress, notes and problems told through `say`)
/// and saves the profile under `data_dir`/hardware when it passes its checks
/// (`saved` says whether it did). An Error when the profile folder cannot be
/// written (found before measuring) or the measurement could not run.
Result<Calibration> CalibrateAndSave(const CalibrationOptions& options, const std::string& data_dir,
                                     const std::function<void(const std::string&)>& say, bool* saved);

/// The profile to score against: the recorded one in `settings.hardware`,
/// else this machine's saved one, else (with `calibrate_if_missing`) a fresh
/// calibration that passed its checks; nullopt means no scoring.
Result<std::optional<HardwareProfile>> HardwareFor(const targets::TargetSettings& settings);

/// The cpu target's options for these settings and this profile.
Result<CpuTargetOptions> OptionsFor(const targets::TargetSettings& settings,
                                    const std::optional<HardwareProfile>& hardware);

}  // namespace accelopt::cpu
