#include "core/format.h"

#include <fmt/core.h>

namespace accelopt {

std::string FormatSeconds(double s) {
  if (s <= 0) return "-";
  if (s < 1e-6) return fmt::format("{:.1f} ns", s * 1e9);
  if (s < 1e-3) return fmt::format("{:.1f} us", s * 1e6);
  if (s < 1) return fmt::format("{:.3f} ms", s * 1e3);
  return fmt::format("{:.3f} s", s);
}

}  // namespace accelopt
