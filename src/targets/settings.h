#pragma once
/// targets: a target's own settings as data. Each target describes the
/// settings it takes (name, type, default, help); the user's choices reach it
/// as a JSON object by name, checked against that description, so that the
/// CLI and the run configuration need not name any target's fields.

#include <string>
#include <vector>

#include "core/json_io.h"
#include "core/result.h"

namespace accelopt::targets {

/// The type of a setting's value.
enum class SettingType { kBool, kInt, kNumber, kString, kIntList };

/// "bool", "int", "number", "string", "int list"
const char* SettingTypeName(SettingType type);

/// One setting a target (or its calibration) takes.
struct SettingSpec {
  std::string name;  ///< its key in the settings object: "fma_units"
  SettingType type = SettingType::kString;
  Json default_value;  ///< taken when the user gives none (null: none)
  std::string help;    ///< one line for the user
};

/// `given` (a JSON object; null is taken as empty) checked against `specs`:
/// every setting of `specs` with its value, the default where none was given.
/// An Error names a setting not in `specs` (and those that are) or a value of
/// the wrong type.
Result<Json> ResolveSettings(const std::vector<SettingSpec>& specs, const Json& given, const std::string& what);

/// The settings of work that runs on this machine's cores (the cpu target's
/// kernels; the task's reference, which every target checks against):
/// `cpus` (int list, empty = every allowed core) and `bind_openmp` (bool).
std::vector<SettingSpec> HostCoreSettings();

}  // namespace accelopt::targets
