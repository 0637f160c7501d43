#pragma once
/// Numbers as people read them.

#include <string>

namespace accelopt {

/// A duration in the unit that reads best: "812.4 us", "1.590 ms"; "-" when not positive.
std::string FormatSeconds(double seconds);

}  // namespace accelopt
