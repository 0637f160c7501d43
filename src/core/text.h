#pragma once
/// Small text helpers shared across layers.

#include <string>

namespace accelopt {

/// `s` with ASCII letters in lower case.
std::string Lower(std::string s);

}  // namespace accelopt
