#include "agents/parse.h"

#include <algorithm>
#include <cctype>
#include <set>
#include <sstream>
#include <vector>

#include "core/hash.h"
#include "core/pattern.h"
#include "core/text.h"
#include "targets/registry.h"

namespace accelopt::agents {
namespace {

struct Block {
  std::string tag, code;
};

// What follows ``` on an opening fence: nothing, or a language tag (`cpp`,
// `c++`, `objective-c`). "```</think>" or "```)." is not an opening.
bool IsOpeningRest(const std::string& rest) {
  if (rest.empty()) return true;
  if (!std::isalnum(static_cast<unsigned char>(rest[0]))) return false;
  size_t end = rest.find_first_of(" \t");
  for (char c : rest.substr(0, end))
    if (!std::isalnum(static_cast<unsigned char>(c)) && std::string("+-_.#").find(c) == std::string::npos) return false;
  return true;
}

// Complete ``` blocks only: an answer cut off inside a block yields nothing for it.
// Inside a block, a line of ``` followed by anything but a language tag closes
// it ("```</think>" ends a block and the thinking around it).
std::vector<Block> FencedBlocks(const std::string& answer) {
  std::vector<Block> blocks;
  std::istringstream in(answer);
  std::string line;
  bool inside = false;
  Block current;
  while (std::getline(in, line)) {
    std::string t = Trim(line);
    bool fence = t.rfind("```", 0) == 0;
    std::string rest = fence ? Trim(t.substr(3)) : "";
    if (!inside && fence && IsOpeningRest(rest)) {
      inside = true;
      current = {Lower(rest.substr(0, rest.find_first_of(" \t"))), ""};
    } else if (inside && fence && (rest.empty() || !IsOpeningRest(rest))) {
      inside = false;
      blocks.push_back(current);
    } else if (inside) {
      current.code += line + "\n";
    }
  }
  return blocks;
}

}  // namespace

const std::vector<std::string>& CppFenceTags() {
  static const std::vector<std::string> tags = {"cpp", "c++", "cc", "cxx", "c"};
  return tags;
}

namespace {

// Whether `code` defines the function `name`: C, C++ or CUDA (a type before
// the name, the parameter list followed by its body, not by ';'), or Python
// (`def name(`). A call in a usage example (`kernel(x, out);`) is not one.
bool Defines(const std::string& code, const std::string& name) {
  if (name.empty()) return false;
  const std::string quoted = RE2::QuoteMeta(name);
  const RE2 c_like("[A-Za-z0-9_>*&][ \\t\\n*&]*\\b" + quoted +
                       "[ \\t\\n]*\\([^;{}]*\\)[ \\t\\n]*(?:const[ \\t\\n]*)?(?:noexcept[ \\t\\n]*)?\\{",
                   PatternOptions());
  const RE2 python("(?:^|\\n)[ \\t]*(?:async[ \\t]+)?def[ \\t]+" + quoted + "[ \\t]*\\(", PatternOptions());
  return RE2::PartialMatch(Piece(code), c_like) || RE2::PartialMatch(Piece(code), python);
}

}  // namespace

std::optional<ExtractedCode> ExtractKernel(const std::string& answer, const std::vector<std::string>& tags,
                                           const std::string& entry_point) {
  std::vector<Block> blocks = FencedBlocks(answer);
  auto tagged = [&](const Block& b) {
    return std::any_of(tags.begin(), tags.end(), [&](const std::string& t) { return Lower(t) == b.tag; });
  };
  // The last block that defines the entry point, a tagged one first; else the
  // last tagged block; else the largest.
  std::optional<size_t> chosen;
  std::string why;
  for (bool need_tag : {true, false}) {
    for (size_t i = 0; i < blocks.size(); ++i)
      if ((!need_tag || tagged(blocks[i])) && Defines(blocks[i].code, entry_point)) chosen = i;
    if (chosen) {
      why = "the one that defines `" + entry_point + "`";
      break;
    }
  }
  if (!chosen) {
    for (size_t i = 0; i < blocks.size(); ++i)
      if (tagged(blocks[i])) chosen = i;
    if (chosen) why = "none defines `" + entry_point + "`: the last one tagged " + blocks[*chosen].tag;
  }
  if (!chosen) {
    for (size_t i = 0; i < blocks.size(); ++i)
      if (!chosen || blocks[i].code.size() > blocks[*chosen].code.size()) chosen = i;
    why = "none defines `" + entry_point + "` or is tagged as code: the largest";
  }
  if (!chosen || Trim(blocks[*chosen].code).empty()) return std::nullopt;
  ExtractedCode out{blocks[*chosen].code, ""};
  if (blocks.size() > 1)
    out.note = "took code block " + std::to_string(*chosen + 1) + " of " + std::to_string(blocks.size()) + " (" + why +
               ")";
  return out;
}

std::optional<std::string> ExtractCode(const std::string& answer, const std::vector<std::string>& tags) {
  auto extracted = ExtractKernel(answer, tags, "kernel");
  if (!extracted) return std::nullopt;
  return extracted->code;
}

std::optional<Plan> ParsePlan(const std::string& answer) {
  std::string text = Trim(answer);
  if (text.empty()) return std::nullopt;
  Plan plan;
  size_t at = text.find("PLAN:");
  if (at != std::string::npos) text = Trim(text.substr(at + 5));
  size_t eol = text.find('\n');
  plan.title = Trim(text.substr(0, eol));
  plan.details = eol == std::string::npos ? "" : Trim(text.substr(eol + 1));
  // Markdown emphasis around a title is decoration.
  while (!plan.title.empty() && (plan.title.front() == '*' || plan.title.front() == '#')) plan.title.erase(0, 1);
  while (!plan.title.empty() && plan.title.back() == '*') plan.title.pop_back();
  plan.title = Trim(plan.title);
  if (plan.title.empty()) return std::nullopt;
  return plan;
}

namespace {

// Whether a line opens a plan: `PLAN:` after list marks ("1.", "-"), heading
// marks and emphasis.
bool OpensPlan(const std::string& line) {
  size_t i = 0;
  while (i < line.size() && std::string(" \t*#->_`").find(line[i]) != std::string::npos) ++i;
  size_t digits = i;
  while (i < line.size() && std::isdigit(static_cast<unsigned char>(line[i]))) ++i;
  if (i > digits && i < line.size() && (line[i] == '.' || line[i] == ')')) ++i;
  while (i < line.size() && std::string(" \t*_").find(line[i]) != std::string::npos) ++i;
  return line.compare(i, 5, "PLAN:") == 0;
}

}  // namespace

std::vector<Plan> ParsePlans(const std::string& answer) {
  std::vector<std::string> sections;
  std::istringstream in(answer);
  std::string line;
  bool any = false;
  while (std::getline(in, line)) {
    if (OpensPlan(line)) {
      sections.emplace_back();
      any = true;
      line = line.substr(line.find("PLAN:"));
    }
    if (any) sections.back() += line + "\n";
  }
  if (!any) sections.push_back(answer);
  std::vector<Plan> plans;
  for (const auto& section : sections)
    if (auto plan = ParsePlan(section)) plans.push_back(*plan);
  return plans;
}

const std::vector<std::string>& Strategies() {
  static const std::vector<std::string> names = {
      "tiling",      "vectorization", "threading", "fusion",      "streaming stores", "loop order", "unrolling",
      "data layout", "reduction",     "algorithm", "prefetching", "data structure",   "allocation", "other"};
  return names;
}

std::optional<Lesson> ParseLesson(const std::string& answer) {
  std::string text = Trim(answer);
  if (Lower(text).find("no optimization found") != std::string::npos && text.size() < 80) return std::nullopt;
  // The last line starting with STRATEGY: names the kinds; it is not part of the text.
  std::vector<std::string> strategies;
  size_t tag = std::string::npos;
  for (size_t at = text.find("STRATEGY:"); at != std::string::npos; at = text.find("STRATEGY:", at + 1))
    if (at == 0 || text[at - 1] == '\n' || text[at - 1] == '*' || text[at - 1] == ' ') tag = at;
  if (tag != std::string::npos) {
    size_t eol = text.find('\n', tag);
    std::string names = Lower(text.substr(tag + 9, eol == std::string::npos ? std::string::npos : eol - tag - 9));
    for (const auto& name : Strategies())
      if (names.find(name) != std::string::npos) strategies.push_back(name);
    size_t line_start = text.rfind('\n', tag);
    text = Trim(text.substr(0, line_start == std::string::npos ? 0 : line_start) +
                (eol == std::string::npos ? "" : text.substr(eol)));
  }
  if (strategies.empty()) strategies.push_back("other");
  size_t open = text.find("**");
  if (open == std::string::npos) return std::nullopt;
  size_t close = text.find("**", open + 2);
  if (close == std::string::npos) return std::nullopt;
  Lesson lesson;
  lesson.title = Trim(text.substr(open + 2, close - open - 2));
  lesson.text = text;
  lesson.tags.strategies = strategies;
  if (lesson.title.empty()) return std::nullopt;
  return lesson;
}

bool FoldsCommentsAndSpace(const std::string& language) {
  const std::string lower = Lower(language);
  for (const targets::TargetKind& kind : targets::RegisteredTargets())
    for (const std::string& free_form : kind.free_form_languages)
      if (lower == free_form) return true;
  return false;
}

std::string NormalizeCode(const std::string& code, const std::string& language) {
  std::string out;
  if (!FoldsCommentsAndSpace(language)) {
    out.reserve(code.size());
    for (size_t i = 0; i < code.size(); ++i)
      if (!(code[i] == '\r' && i + 1 < code.size() && code[i + 1] == '\n')) out += code[i];
    return out;
  }
  bool space = false;
  for (size_t i = 0; i < code.size(); ++i) {
    if (code.compare(i, 2, "//") == 0) {
      while (i < code.size() && code[i] != '\n') ++i;
      space = true;
      continue;
    }
    if (code.compare(i, 2, "/*") == 0) {
      size_t end = code.find("*/", i + 2);
      i = end == std::string::npos ? code.size() : end + 1;
      space = true;
      continue;
    }
    if (std::isspace(static_cast<unsigned char>(code[i]))) {
      space = true;
      continue;
    }
    if (space && !out.empty()) out += ' ';
    space = false;
    // A string or character literal is kept whole: "//" or a run of spaces in it is text.
    // (A ' between digits is a digit separator, not a literal.)
    const char quote = code[i];
    const bool literal =
        quote == '"' || (quote == '\'' && (i == 0 || !std::isalnum(static_cast<unsigned char>(code[i - 1]))));
    out += code[i];
    if (!literal) continue;
    for (++i; i < code.size() && code[i] != quote && code[i] != '\n'; ++i) {
      out += code[i];
      if (code[i] == '\\' && i + 1 < code.size()) out += code[++i];
    }
    if (i < code.size() && code[i] == quote)
      out += code[i];
    else
      --i;  // unclosed on its line: the line break is blank space again
  }
  return out;
}

std::string CodeHash(const std::string& code, const std::string& language) {
  return ContentHash(NormalizeCode(code, language));
}

}  // namespace accelopt::agents
