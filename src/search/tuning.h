#pragma once
/// search: tuning without the model. A kernel declares tunable constants,
///
///   constexpr int BLOCK_K = 32;  // accelopt:tune BLOCK_K 8 16 32 64
///
/// (the annotation may stand on any line; the constant is defined by
/// `constexpr`/`const` ... `NAME = value` or `#define NAME value`), and the
/// engine tries the values itself: the model changes structure, the machine
/// sweeps the numbers. This header: reading the annotations and writing the
/// variants, as plain functions.

#include <map>
#include <string>
#include <vector>

namespace accelopt::search {

struct Tunable {
  std::string name;
  std::vector<std::string> values;  ///< as written: numeric literals, true or false
  std::string current;              ///< the value the kernel defines
};

struct TunableScan {
  std::vector<Tunable> tunables;
  std::vector<std::string> problems;  ///< annotations that cannot be applied, and why
};

/// The kernel's annotations, in order; at most 4 names of at most 16 values each are taken.
TunableScan FindTunables(const std::string& code);

/// A choice of value per tunable name.
using Setting = std::map<std::string, std::string>;

/// `code` with each named constant's definition set to the setting's value.
/// Requires every name to be one FindTunables found in `code`.
std::string ApplySetting(const std::string& code, const Setting& setting);

/// Up to `budget` settings other than the kernel's own: every combination when
/// there are no more than `budget` of them, else each tunable's values in
/// turn with the others at their current value, taken round robin.
std::vector<Setting> TuningSettings(const std::vector<Tunable>& tunables, size_t budget);

/// What a tuning variant's plan says after the plan it tunes: "(constants tuned by the engine: BLOCK_K=64)".
inline constexpr const char* kTunedMark = "(constants tuned by the engine: ";

/// "BLOCK_K=64, UNROLL=4".
std::string SettingText(const Setting& setting);

}  // namespace accelopt::search
