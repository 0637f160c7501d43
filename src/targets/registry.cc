#include "targets/registry.h"

#include "targets/code/code_target.h"
#include "targets/cpu/register.h"
#include "targets/cuda/cuda_target.h"
#include "targets/external/external_target.h"

namespace accelopt::targets {

const std::vector<TargetKind>& RegisteredTargets() {
  static const std::vector<TargetKind> kinds = {
      cpu::Registration(),
      external::Registration(),
      code::Registration(),
      cuda::Registration(),
  };
  return kinds;
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
