#include "eval/includes.h"

#include <cctype>
#include <vector>

#include "core/pattern.h"

namespace accelopt::eval {
namespace {

// The source as the preprocessor reads its directives: backslash-newlines
// joined (each logical line remembers the physical line it starts on),
// comments replaced by a space, string and character literals kept.
struct LogicalLine {
  int number = 0;
  std::string text;
};

bool IsIdentifierChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// Whether the '"' at `at` opens a raw string literal: R, u8R, uR, UR or LR
// before it, with no identifier character before that prefix.
bool OpensRawString(const std::string& source, size_t at) {
  if (at == 0 || source[at - 1] != 'R') return false;
  const size_t r = at - 1;
  for (size_t prefix : {size_t{0}, size_t{1}, size_t{2}}) {
    if (prefix > r) break;
    const std::string p = source.substr(r - prefix, prefix);
    if (!(p.empty() || p == "u" || p == "U" || p == "L" || p == "u8")) continue;
    const size_t start = r - prefix;
    if (start == 0 || !IsIdentifierChar(source[start - 1])) return true;
  }
  return false;
}

std::vector<LogicalLine> LogicalLines(const std::string& source) {
  std::vector<LogicalLine> lines(1, {1, ""});
  int physical = 1;
  bool block_comment = false;
  char quote = 0;  // inside a literal opened by this character
  for (size_t i = 0; i < source.size(); ++i) {
    const char c = source[i];
    if (c == '\\' && (source.compare(i + 1, 1, "\n") == 0 || source.compare(i + 1, 2, "\r\n") == 0)) {
      i += source[i + 1] == '\r' ? 2 : 1;
      ++physical;
      continue;
    }
    if (c == '\n') {
      ++physical;
      quote = 0;
      if (!block_comment) lines.push_back({physical, ""});
      continue;
    }
    std::string& text = lines.back().text;
    if (block_comment) {
      if (c == '*' && i + 1 < source.size() && source[i + 1] == '/') block_comment = false, ++i, text += ' ';
      continue;
    }
    if (quote) {
      text += c;
      if (c == '\\' && i + 1 < source.size() && source[i + 1] != '\n') text += source[++i];
      else if (c == quote) quote = 0;
      continue;
    }
    if (c == '/' && i + 1 < source.size() && source[i + 1] == '*') {
      block_comment = true;
      ++i;
      continue;
    }
    if (c == '/' && i + 1 < source.size() && source[i + 1] == '/') {
      // To the end of the logical line (a backslash-newline continues it).
      while (i + 1 < source.size() && source[i + 1] != '\n') {
        if (source[i + 1] == '\\' && source.compare(i + 2, 1, "\n") == 0) ++physical, ++i;
        ++i;
      }
      continue;
    }
    // R"delim( ... )delim": one token, whatever lines, quotes or comment marks
    // it holds. (One never closed is read as a plain literal: at worst a
    // directive-like line in it is refused.)
    const size_t open = c == '"' && OpensRawString(source, i) ? source.find('(', i) : std::string::npos;
    const size_t end = open == std::string::npos || open - i > 17
                           ? std::string::npos
                           : source.find(")" + source.substr(i + 1, open - i - 1) + "\"", open);
    if (end != std::string::npos) {
      const size_t stop = end + (open - i) + 1;
      for (size_t k = i; k < stop; ++k) {
        if (source[k] == '\n') ++physical;
        text += source[k] == '\n' ? ' ' : source[k];
      }
      i = stop - 1;
      continue;
    }
    if (c == '"' || c == '\'') quote = c;
    text += c;
  }
  return lines;
}

}  // namespace

std::optional<std::string> ForbiddenFileAccess(const std::string& source) {
  // A system header by a relative path: no leading '/', no "..".
  static const RE2 directive(R"(^[ \t]*(?:#|%:)[ \t]*(include_next|include|import|embed)\b[ \t]*(.*)$)",
                             PatternOptions());
  static const RE2 system_header(R"(<[A-Za-z0-9_+\-][A-Za-z0-9_+\-./]*>[ \t]*)", PatternOptions());
  static const RE2 has_include(R"(\b(__has_include_next|__has_include|__has_embed)\b[ \t]*\(?[ \t]*([^)]*))",
                               PatternOptions());
  static const RE2 assembler(R"((?i)\.(incbin|include)\b)", PatternOptions());
  auto bad_path = [](const std::string& operand) {
    return !RE2::FullMatch(Piece(operand), system_header) || operand.find("..") != std::string::npos;
  };
  for (const LogicalLine& line : LogicalLines(source)) {
    const std::string at = "line " + std::to_string(line.number) + ": ";
    std::string name, operand;
    if (RE2::FullMatch(Piece(line.text), directive, &name, &operand) && bad_path(operand))
      return at + "#" + name + " " + operand.substr(0, 80) +
             ": a kernel includes only system headers, as <name.h> (not \"file\", an absolute or parent path, "
             "or a macro)";
    re2::StringPiece rest = Piece(line.text);
    // `defined(__has_include)` asks about the compiler, not a file: no operand.
    while (RE2::FindAndConsume(&rest, has_include, &name, &operand))
      if (operand.find_first_not_of(" \t") != std::string::npos && bad_path(operand))
        return at + name + "(" + operand.substr(0, 80) + "): a kernel asks only about system headers, as <name.h>";
    if (RE2::PartialMatch(Piece(line.text), assembler, &name))
      return at + "the assembler's ." + name + " reads a file: a kernel's inline assembly may not use it";
  }
  return std::nullopt;
}

}  // namespace accelopt::eval
