#pragma once
/// targets: a target's calibrator. It measures the hardware a target scores
/// against (this machine's cores, a GPU, ...), saves the profile per machine
/// under DataDir()/hardware (eval/hardware_store.h), and says what it found,
/// for a person and as JSON. `accelopt calibrate --target NAME` and
/// `accelopt show` reach it through the registry (TargetKind::calibrator).

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/json_io.h"
#include "core/result.h"
#include "targets/settings.h"

namespace accelopt::targets {

struct CalibrateOptions {
  bool force = false;              ///< measure again even when this machine has a saved profile
  Json settings = Json::object();  ///< the calibration's own settings by name (Calibrator::Settings)
  std::string data_dir;            ///< profiles are kept under data_dir/hardware; "" = DataDir()
  std::string cache_dir;           ///< builds and scratch; "" = CacheDir()
  /// Progress, notes and problems for the user while it measures.
  std::function<void(const std::string&)> say = [](const std::string&) {};
  /// Called once, right before it measures (not when the saved profile is
  /// answered): where `calibrate --wait-quiet` waits for a quiet machine.
  std::function<void()> before_measuring = [] {};
};

/// What one `calibrate` found: the saved profile, or one measured now.
struct CalibrationReport {
  Json json;              ///< the profile as the target saves it; when measured now, with `saved` and `problems`
  std::string text;       ///< the profile for a person: figures, where it is kept, its state
  bool measured = false;  ///< measured now (false: the saved profile, measured before)
  bool saved = false;     ///< measured now, passed its checks and saved as the machine's profile
};

class Calibrator {
 public:
  virtual ~Calibrator() = default;
  /// The settings Calibrate takes in CalibrateOptions::settings.
  virtual std::vector<SettingSpec> Settings() const { return {}; }
  /// The saved profile of this machine (or device) when there is one and
  /// nothing asks to measure again; else measures (blocks for seconds to
  /// minutes, on the whole device) and saves the profile when it passes its
  /// checks. A profile that fails them is a report with saved = false. An
  /// Error when the device is missing, the folder cannot be written, or the
  /// saved profile cannot be read.
  virtual Result<CalibrationReport> Calibrate(const CalibrateOptions& options) = 0;
  /// A run's recorded profile (`hardware` as Target::Hardware gave it), in
  /// words for `accelopt show`; "" lets the caller print the rates every
  /// profile carries (bandwidth_gbs, peak_mm_gflops, peak_vec_gflops).
  virtual std::string DescribeRecorded(const Json& hardware) const {
    (void)hardware;
    return "";
  }
};

}  // namespace accelopt::targets
