#include "targets/code/metric.h"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <optional>

#include "core/json_io.h"
#include "core/pattern.h"

namespace accelopt::code {
namespace {

std::string Tail(const std::string& output) {
  if (output.empty()) return " (the benchmark printed nothing)";
  return ":\n" + (output.size() > 1500 ? "[...]" + output.substr(output.size() - 1500) : output);
}

// The metric is looked for in the output's last 4 MiB (where a benchmark
// prints its figure); a runaway benchmark's output is not scanned whole.
constexpr size_t kMaxScannedBytes = 4 << 20;

// The last match of `pattern` in the output (its first group, else the whole
// match); `what` names the pattern's owner in errors ("metric", "digest").
Result<std::string> MatchText(const std::string& output, const std::string& pattern, const std::string& what) {
  auto re = CompilePattern(pattern);
  if (!re) return Error{"the " + what + "'s regex '" + pattern + "': " + re.error().message};
  const std::string_view text =
      std::string_view(output).substr(output.size() > kMaxScannedBytes ? output.size() - kMaxScannedBytes : 0);
  // Every match in turn, the last kept: [0] the whole match, [1] the first group if any.
  re2::StringPiece match[2], last[2];
  const int groups = (*re)->NumberOfCapturingGroups() > 0 ? 2 : 1;
  bool found = false;
  for (size_t at = 0; at <= text.size() && (*re)->Match(Piece(text), at, text.size(), RE2::UNANCHORED, match, groups);) {
    std::copy(match, match + groups, last);
    found = true;
    at = OffsetIn(text, match[0]) + std::max<size_t>(match[0].size(), 1);  // an empty match moves on by one
  }
  if (!found)
    return Error{"no match for the " + what + "'s regex '" + pattern + "' in the benchmark's output" + Tail(output)};
  const re2::StringPiece figure = groups > 1 && last[1].data() != nullptr ? last[1] : last[0];
  return std::string(figure.data(), figure.size());
}

Result<double> FromRegex(const std::string& output, const std::string& pattern) {
  auto number = MatchText(output, pattern, "metric");
  if (!number) return number.error();
  char* end = nullptr;
  const double value = std::strtod(number->c_str(), &end);
  if (number->empty() || end == number->c_str())
    return Error{"the metric's regex '" + pattern + "' matched '" + number->substr(0, 200) + "', which is not a number"};
  return value;
}

std::optional<Json> ParseJson(const std::string& text) {
  Json j = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return std::nullopt;
  return j;
}

// The value at the dotted `path` of the output's JSON (the whole output, else
// its last line that is JSON); `what` names its owner in errors.
Result<Json> JsonAt(const std::string& output, const std::string& path, const std::string& what) {
  auto parsed = ParseJson(output);
  if (!parsed) {
    // A benchmark may print other lines before its JSON: the last line that is JSON.
    size_t end = output.size();
    while (end > 0 && !parsed) {
      size_t start = output.rfind('\n', end - 1);
      start = start == std::string::npos ? 0 : start + 1;
      if (start < end) parsed = ParseJson(output.substr(start, end - start));
      end = start == 0 ? 0 : start - 1;
    }
  }
  if (!parsed) return Error{"the benchmark's output is not JSON (the " + what + " is read at '" + path + "')" + Tail(output)};
  const Json* node = &*parsed;
  std::string walked;
  size_t start = 0;
  while (start <= path.size()) {
    size_t dot = path.find('.', start);
    const std::string key = path.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    walked += (walked.empty() ? "" : ".") + key;
    if (node->is_array()) {
      char* end = nullptr;
      const long index = std::strtol(key.c_str(), &end, 10);
      if (key.empty() || *end || index < 0 || static_cast<size_t>(index) >= node->size())
        return Error{"the benchmark's JSON has no element '" + walked + "' (an array of " +
                     std::to_string(node->size()) + ")"};
      node = &(*node)[static_cast<size_t>(index)];
    } else if (node->is_object() && node->contains(key)) {
      node = &(*node)[key];
    } else {
      return Error{"the benchmark's JSON has no field '" + walked + "'" + Tail(output)};
    }
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  return *node;
}

Result<double> FromJson(const std::string& output, const std::string& path) {
  auto node = JsonAt(output, path, "metric");
  if (!node) return node.error();
  if (!node->is_number()) return Error{"the benchmark's JSON field '" + path + "' is not a number: " + node->dump()};
  return node->get<double>();
}

}  // namespace

Result<double> ReadMetric(const std::string& output, const suite::MetricSpec& metric) {
  auto value = metric.regex.empty() ? FromJson(output, metric.json_path) : FromRegex(output, metric.regex);
  if (!value) return value;
  if (!std::isfinite(*value) || *value <= 0)
    return Error{fmt::format("the benchmark reported {} = {:g}; a figure to compare must be a positive number",
                             metric.name, *value)};
  return value;
}

Result<double> ReadMetric(const std::string& out, const std::string& err, const suite::MetricSpec& metric) {
  auto from_out = ReadMetric(out, metric);
  if (from_out || err.empty()) return from_out;
  auto from_err = ReadMetric(err, metric);
  if (from_err) return from_err;
  return Error{from_out.error().message + "\n(nor in its standard error: " + from_err.error().message + ")"};
}

Result<std::string> ReadDigest(const std::string& output, const suite::CodeSpec::Digest& digest) {
  if (!digest.regex.empty()) return MatchText(output, digest.regex, "digest");
  auto node = JsonAt(output, digest.json_path, "digest");
  if (!node) return node.error();
  return node->is_string() ? node->get<std::string>() : node->dump();
}

}  // namespace accelopt::code
