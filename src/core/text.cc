#include "core/text.h"

#include <algorithm>
#include <cctype>

namespace accelopt {

std::string Lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

std::string TrimLeft(const std::string& s, std::string_view blanks) {
  const size_t first = s.find_first_not_of(blanks);
  return first == std::string::npos ? "" : s.substr(first);
}

std::string TrimRight(const std::string& s, std::string_view blanks) {
  const size_t last = s.find_last_not_of(blanks);
  return last == std::string::npos ? "" : s.substr(0, last + 1);
}

std::string Trim(const std::string& s, std::string_view blanks) { return TrimLeft(TrimRight(s, blanks), blanks); }

std::string FirstLine(const std::string& text) { return text.substr(0, text.find('\n')); }

}  // namespace accelopt
