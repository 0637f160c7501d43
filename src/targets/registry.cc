#include "targets/registry.h"

#include <cstdio>

#include "core/check.h"
#include "targets/code/code_target.h"
#include "targets/cpu/register.h"
#include "targets/cuda/cuda_target.h"
#include "targets/external/external_target.h"

namespace accelopt::targets {
namespace {

// The registry itself: the built-in targets, one line each, then those
// registered from elsewhere.
std::vector<TargetKind>& Kinds() {
  static std::vector<TargetKind> kinds = {
      cpu::Registration(),
      external::Registration(),
      code::Registration(),
      cuda::Registration(),
  };
  return kinds;
}

}  // namespace

const std::vector<TargetKind>& RegisteredTargets() { return Kinds(); }

Status RegisterTarget(TargetKind kind) {
  if (kind.name.empty() || !kind.make) return Error{"a target needs a name and a way to make it"};
  if (FindTarget(kind.name)) return Error{"a target named '" + kind.name + "' is registered already"};
  if (!kind.unavailable) kind.unavailable = [](const TargetSettings&) { return std::string(); };
  Kinds().push_back(std::move(kind));
  return Ok{};
}

TargetRegistrar::TargetRegistrar(TargetKind kind) {
  const std::string name = kind.name;
  Status registered = RegisterTarget(std::move(kind));
  if (!registered)
    std::fprintf(stderr, "registering target '%s': %s\n", name.c_str(), registered.error().message.c_str());
  ACCELOPT_CHECK(registered);
}

const TargetKind* FindTarget(const std::string& name) {
  for (const TargetKind& kind : Kinds())
    if (kind.name == name) return &kind;
  return nullptr;
}

Result<Json> SettingsFor(const std::string& name, const TargetSettings& settings) {
  const TargetKind* kind = FindTarget(name);
  if (!kind) return Error{"unknown target '" + name + "'"};
  // Only its own: the options may hold other targets' settings too.
  Json own = Json::object();
  if (settings.options.is_object())
    for (const SettingSpec& spec : kind->settings)
      if (settings.options.contains(spec.name)) own[spec.name] = settings.options[spec.name];
  return ResolveSettings(kind->settings, own, "the " + name + " target");
}

std::string WhyUnavailable(const TargetKind& kind, const TargetSettings& settings) {
  std::string why = kind.unavailable(settings);
  if (why.empty() && kind.probe) why = kind.probe(settings);
  return why;
}

Result<std::unique_ptr<Target>> MakeTarget(const std::string& name, const TargetSettings& settings) {
  std::string known;
  for (const TargetKind& kind : RegisteredTargets()) {
    if (kind.name == name) {
      if (std::string why = kind.unavailable(settings); !why.empty())
        return Error{"the " + name + " target is not available here: " + why};
      return kind.make(settings);
    }
    known += (known.empty() ? "" : ", ") + kind.name;
  }
  return Error{"unknown target '" + name + "' (known: " + known + "; see `accelopt targets`)"};
}

}  // namespace accelopt::targets
