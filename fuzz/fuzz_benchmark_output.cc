// Fuzzes a code task's benchmark output read for its metric: by regexes of
// the shapes tasks use (a group, a whole match, one that can match empty) and
// by JSON path, on standard output and standard error.

#include "fuzz/fuzz_support.h"
#include "targets/code/metric.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace accelopt;
  const std::string output = fuzz::Text(data, size);
  static const suite::MetricSpec specs[] = {
      {"t", "ns", R"(([0-9.]+) ns/op)", "", false},
      {"t", "ns", R"([0-9]+(?:\.[0-9]*)?(?:[eE][+-]?[0-9]+)?)", "", false},
      {"t", "s", R"((?:real|user)\s+([0-9]*)m?([0-9.]*)s?)", "", false},
      {"t", "ns", "", "benchmarks.0.real_time", true},
  };
  for (const suite::MetricSpec& spec : specs) {
    (void)code::ReadMetric(output, spec);
    (void)code::ReadMetric("", output, spec);
  }
  return 0;
}
