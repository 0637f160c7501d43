#include "search/tuning.h"

#include <algorithm>
#include <set>
#include <sstream>

#include "core/pattern.h"

namespace accelopt::search {
namespace {

constexpr size_t kMaxTunables = 4;
constexpr size_t kMaxValues = 16;

bool IsValue(const std::string& v) {
  static const RE2 literal(R"(-?[0-9][0-9A-Za-z_.+'-]*|true|false)", PatternOptions());
  return v.size() <= 32 && RE2::FullMatch(Piece(v), literal);
}

// Where NAME's value is defined: the offset and length of the value text.
struct Definition {
  size_t at = std::string::npos, length = 0;
};

Definition FindDefinition(const std::string& code, const std::string& name) {
  // `#define NAME value`, or a declaration with const/constexpr: `... NAME = value;`
  // (the value does not start with '=': `NAME == value` compares).
  const std::string quoted = RE2::QuoteMeta(name);
  const RE2 define("(?:^|\\n)[ \\t]*#[ \\t]*define[ \\t]+" + quoted + "[ \\t]+([^ \\t\\n/]+)", PatternOptions());
  const RE2 declared("(?:^|\\n)[^\\n]*\\bconst(?:expr)?\\b[^\\n=]*\\b" + quoted +
                         "[ \\t]*=[ \\t]*([^;,}\\n= \\t][^;,}\\n]*?)[ \\t]*[;,}]",
                     PatternOptions());
  re2::StringPiece value;
  for (const RE2* re : {&define, &declared})
    if (RE2::PartialMatch(Piece(code), *re, &value)) return {OffsetIn(code, value), value.size()};
  return {};
}

// An annotation's text as a problem quotes it: a line of 50 KB is cut.
std::string Quoted(const std::string& text) { return text.size() <= 80 ? text : text.substr(0, 80) + "[...]"; }

}  // namespace

TunableScan FindTunables(const std::string& code) {
  TunableScan scan;
  static const RE2 annotation(R"(//[ \t]*accelopt:tune[ \t]+([^\n]*))", PatternOptions());
  static const RE2 identifier("[A-Za-z_][A-Za-z0-9_]{0,63}", PatternOptions());
  std::set<std::string> names;
  re2::StringPiece rest = Piece(code), line;
  while (RE2::FindAndConsume(&rest, annotation, &line)) {
    const std::string text(line.data(), line.size());
    std::istringstream words(text);
    Tunable t;
    words >> t.name;
    for (std::string v; words >> v;) t.values.push_back(v);
    if (!RE2::FullMatch(Piece(t.name), identifier)) {
      scan.problems.push_back("'accelopt:tune " + Quoted(text) + "': expected a constant's name, then its values");
      continue;
    }
    auto bad = std::find_if(t.values.begin(), t.values.end(), [](const std::string& v) { return !IsValue(v); });
    if (bad != t.values.end()) {
      scan.problems.push_back(t.name + ": '" + Quoted(*bad) + "' is not a number (or true/false)");
      continue;
    }
    if (t.values.size() < 2) {
      scan.problems.push_back(t.name + ": at least two values to try are needed");
      continue;
    }
    if (!names.insert(t.name).second) {
      scan.problems.push_back(t.name + ": annotated twice; the first is used");
      continue;
    }
    Definition d = FindDefinition(code, t.name);
    if (d.at == std::string::npos) {
      scan.problems.push_back(t.name + ": no `constexpr ... " + t.name + " = value;` or `#define " + t.name +
                              " value` to set");
      continue;
    }
    if (scan.tunables.size() == kMaxTunables) {
      scan.problems.push_back(t.name + ": at most " + std::to_string(kMaxTunables) + " constants are tuned");
      continue;
    }
    if (t.values.size() > kMaxValues) t.values.resize(kMaxValues);
    t.current = code.substr(d.at, d.length);
    scan.tunables.push_back(t);
  }
  return scan;
}

std::string ApplySetting(const std::string& code, const Setting& setting) {
  std::string out = code;
  for (const auto& [name, value] : setting) {
    Definition d = FindDefinition(out, name);
    if (d.at != std::string::npos) out.replace(d.at, d.length, value);
  }
  return out;
}

std::vector<Setting> TuningSettings(const std::vector<Tunable>& tunables, size_t budget) {
  Setting current;
  for (const auto& t : tunables) current[t.name] = t.current;
  std::vector<Setting> out;
  size_t combinations = 1;
  for (const auto& t : tunables) combinations = std::min<size_t>(combinations * t.values.size(), budget + 2);
  if (combinations <= budget + 1) {
    // Every combination (one of them may be the kernel's own, left out).
    std::vector<Setting> all = {{}};
    for (const auto& t : tunables) {
      std::vector<Setting> next;
      for (const auto& partial : all)
        for (const auto& v : t.values) {
          Setting s = partial;
          s[t.name] = v;
          next.push_back(s);
        }
      all = std::move(next);
    }
    for (const auto& s : all)
      if (s != current && out.size() < budget) out.push_back(s);
    return out;
  }
  // One constant at a time, the others as the kernel has them, round robin.
  for (size_t k = 0; out.size() < budget; ++k) {
    bool any = false;
    for (const auto& t : tunables) {
      if (k >= t.values.size()) continue;
      any = true;
      if (t.values[k] == t.current || out.size() >= budget) continue;
      Setting s = current;
      s[t.name] = t.values[k];
      out.push_back(s);
    }
    if (!any) break;
  }
  return out;
}

std::string SettingText(const Setting& setting) {
  std::string out;
  for (const auto& [name, value] : setting) out += (out.empty() ? "" : ", ") + name + "=" + value;
  return out;
}

}  // namespace accelopt::search
