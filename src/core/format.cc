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

std::string FormatElapsed(double seconds) {
  const long s = seconds > 0 ? static_cast<long>(seconds + 0.5) : 0;
  if (s < 60) return fmt::format("{}s", s);
  if (s < 3600) return fmt::format("{}m{:02}s", s / 60, s % 60);
  return fmt::format("{}h{:02}m", s / 3600, (s % 3600) / 60);
}

std::string ElapsedAndEta(double elapsed, double done, double total) {
  std::string out = ", elapsed " + FormatElapsed(elapsed);
  if (done > 0 && total > done) out += ", about " + FormatElapsed(elapsed * (total - done) / done) + " left";
  return out;
}

}  // namespace accelopt
