#pragma once
/// code: the figure a code task's benchmark prints, read as its task says.

#include <string>

#include "core/result.h"
#include "suite/task.h"

namespace accelopt::code {

/// The metric in a benchmark's output: the last match of the regex (its first
/// group, else the whole match), or the number at the JSON path (in the whole
/// output, else in its last line that is JSON). An Error says what was
/// missing; a figure that is not a positive finite number is an Error too.
Result<double> ReadMetric(const std::string& output, const suite::MetricSpec& metric);
/// The metric in a benchmark's standard output, else in its standard error
/// (where tools such as `time` write); an Error says what both lacked.
Result<double> ReadMetric(const std::string& out, const std::string& err, const suite::MetricSpec& metric);

/// The digest of its result a benchmark printed (CodeSpec::digest), as text:
/// the last match of the regex (its first group, else the whole match), or
/// the value at the JSON path. An Error says what was missing.
Result<std::string> ReadDigest(const std::string& output, const suite::CodeSpec::Digest& digest);

}  // namespace accelopt::code
