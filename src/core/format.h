#pragma once
/// Numbers as people read them.

#include <string>

namespace accelopt {

/// A duration in the unit that reads best: "812.4 us", "1.590 ms"; "-" when not positive.
std::string FormatSeconds(double seconds);

/// A wall-clock span as a person waiting reads it: "45s", "3m05s", "2h07m".
std::string FormatElapsed(double seconds);

/// ", elapsed 1m12s, about 3m40s left" for work of which `done` of `total`
/// units took `elapsed` seconds (units: iterations, jobs); ", elapsed 1m12s"
/// while nothing is done to estimate from.
std::string ElapsedAndEta(double elapsed, double done, double total);

}  // namespace accelopt
