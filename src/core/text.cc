#include "core/text.h"

#include <algorithm>
#include <cctype>

namespace accelopt {

std::string Lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

}  // namespace accelopt
