#include "targets/settings.h"

#include <algorithm>

namespace accelopt::targets {
namespace {

bool HasType(const Json& value, SettingType type) {
  switch (type) {
    case SettingType::kBool:
      return value.is_boolean();
    case SettingType::kInt:
      return value.is_number_integer();
    case SettingType::kNumber:
      return value.is_number();
    case SettingType::kString:
      return value.is_string();
    case SettingType::kIntList:
      if (!value.is_array()) return false;
      for (const Json& v : value)
        if (!v.is_number_integer()) return false;
      return true;
  }
  return false;
}

}  // namespace

const char* SettingTypeName(SettingType type) {
  switch (type) {
    case SettingType::kBool:
      return "bool";
    case SettingType::kInt:
      return "int";
    case SettingType::kNumber:
      return "number";
    case SettingType::kString:
      return "string";
    case SettingType::kIntList:
      return "int list";
  }
  return "?";
}

Result<Json> ResolveSettings(const std::vector<SettingSpec>& specs, const Json& given, const std::string& what) {
  if (!given.is_null() && !given.is_object()) return Error{what + ": the settings must be an object of name: value"};
  Json out = Json::object();
  for (const SettingSpec& spec : specs) out[spec.name] = spec.default_value;
  if (given.is_null()) return out;
  for (const auto& item : given.items()) {
    const std::string& name = item.key();  // a plain reference: a lambda below uses it
    const Json& value = item.value();
    auto spec = std::find_if(specs.begin(), specs.end(), [&](const SettingSpec& s) { return s.name == name; });
    if (spec == specs.end()) {
      std::string known;
      for (const SettingSpec& s : specs) known += (known.empty() ? "" : ", ") + s.name;
      return Error{what + " takes no setting '" + name + "' (" +
                   (known.empty() ? "it takes none" : "it takes: " + known) + ")"};
    }
    if (!value.is_null() && !HasType(value, spec->type))
      return Error{what + ": setting '" + name + "' must be of type " + SettingTypeName(spec->type) + ", not " +
                   value.dump()};
    if (!value.is_null()) out[name] = value;
  }
  return out;
}

std::vector<SettingSpec> HostCoreSettings() {
  return {{"cpus", SettingType::kIntList, Json::array(),
           "the cores kernels and references run on; empty: every allowed core"},
          {"bind_openmp", SettingType::kBool, false,
           "bind each OpenMP thread to one core (OMP_PROC_BIND=close, OMP_PLACES=cores)"}};
}

}  // namespace accelopt::targets
