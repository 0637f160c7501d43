#pragma once
/// Small text helpers shared across layers.

#include <string>
#include <string_view>

namespace accelopt {

/// `s` with ASCII letters in lower case.
std::string Lower(std::string s);

/// `s` without the characters of `blanks` at its start, at its end, or at both.
std::string TrimLeft(const std::string& s, std::string_view blanks = " \t\r\n");
std::string TrimRight(const std::string& s, std::string_view blanks = " \t\r\n");
std::string Trim(const std::string& s, std::string_view blanks = " \t\r\n");

/// `text` up to its first newline (a plan's title, a message's first line).
std::string FirstLine(const std::string& text);

}  // namespace accelopt
