#pragma once
/// Regular expressions over text from outside the engine: a model's answer, a
/// kernel's source, a compiler's or a benchmark's output, a task's own
/// patterns. They go through RE2, whose matching time is linear in the text
/// whatever the pattern and which uses no recursion: std::regex backtracks
/// with a stack frame per character and overflows the stack on a line of some
/// ten thousand characters. Text is matched as bytes (Latin-1), so input that
/// is not UTF-8 matches like any other.

#include <re2/re2.h>

#include <memory>
#include <string>
#include <string_view>

#include "core/result.h"

namespace accelopt {

/// The options every pattern is compiled with: bytes, no logging to stderr.
inline RE2::Options PatternOptions() {
  RE2::Options options(RE2::Quiet);
  options.set_encoding(RE2::Options::EncodingLatin1);
  return options;
}

/// `pattern` compiled; an Error gives RE2's reason ("missing ): ..."), to be
/// prefixed with where the pattern came from.
inline Result<std::shared_ptr<const RE2>> CompilePattern(const std::string& pattern) {
  auto re = std::make_shared<const RE2>(pattern, PatternOptions());
  if (!re->ok()) return Error{"not a valid regular expression (RE2 syntax): " + re->error()};
  return std::shared_ptr<const RE2>(std::move(re));
}

/// A view of `text` for RE2's calls.
inline re2::StringPiece Piece(std::string_view text) { return {text.data(), text.size()}; }

/// Where `part` (a submatch RE2 returned for `text`) starts in `text`.
inline size_t OffsetIn(std::string_view text, const re2::StringPiece& part) {
  return static_cast<size_t>(part.data() - text.data());
}

}  // namespace accelopt
