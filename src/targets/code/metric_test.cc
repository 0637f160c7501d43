#include "targets/code/metric.h"

#include <gtest/gtest.h>

#include "eval/metric.h"

namespace accelopt::code {
namespace {

suite::MetricSpec Regex(const std::string& re) {
  suite::MetricSpec m;
  m.regex = re;
  return m;
}

suite::MetricSpec JsonAt(const std::string& path) {
  suite::MetricSpec m;
  m.json_path = path;
  return m;
}

TEST(CodeMetric, TheLastMatchOfTheRegexCounts) {
  auto v = ReadMetric("warm-up: 9.5 ns/op\nrun: 4.25 ns/op\n", Regex(R"(([0-9.]+) ns/op)"));
  ASSERT_TRUE(v) << v.error().message;
  EXPECT_DOUBLE_EQ(*v, 4.25);
  auto whole = ReadMetric("took 3e-3\n", Regex(R"([0-9.]+e-[0-9]+)"));
  ASSERT_TRUE(whole) << whole.error().message;
  EXPECT_DOUBLE_EQ(*whole, 3e-3);
}

TEST(CodeMetric, AJsonPathLeadsToTheNumber) {
  auto v = ReadMetric(R"({"results": [{"ns_per_op": 7}, {"ns_per_op": 8.5}]})", JsonAt("results.1.ns_per_op"));
  ASSERT_TRUE(v) << v.error().message;
  EXPECT_DOUBLE_EQ(*v, 8.5);
  // Lines before the JSON are allowed: its last line that is JSON counts.
  auto after = ReadMetric("building...\n{\"rate\": 12}\n", JsonAt("rate"));
  ASSERT_TRUE(after) << after.error().message;
  EXPECT_DOUBLE_EQ(*after, 12);
}

TEST(CodeMetric, AFigureOnStandardErrorCountsWhenStandardOutputHasNone) {
  auto v = ReadMetric("done\n", "real 1.50\n", Regex(R"(real ([0-9.]+))"));
  ASSERT_TRUE(v) << v.error().message;
  EXPECT_DOUBLE_EQ(*v, 1.5);
  auto stdout_first = ReadMetric("real 2\n", "real 3\n", Regex(R"(real ([0-9.]+))"));
  ASSERT_TRUE(stdout_first);
  EXPECT_DOUBLE_EQ(*stdout_first, 2);
  auto neither = ReadMetric("a\n", "b\n", Regex(R"(real ([0-9.]+))"));
  ASSERT_FALSE(neither);
  EXPECT_NE(neither.error().message.find("nor in its standard error"), std::string::npos);
}

TEST(CodeMetric, AMissingOrImpossibleFigureIsAnError) {
  auto none = ReadMetric("nothing here\n", Regex(R"(([0-9.]+) ns)"));
  ASSERT_FALSE(none);
  EXPECT_NE(none.error().message.find("no match"), std::string::npos);
  auto field = ReadMetric(R"({"results": []})", JsonAt("results.0.ns"));
  ASSERT_FALSE(field);
  EXPECT_NE(field.error().message.find("results.0"), std::string::npos) << field.error().message;
  auto text = ReadMetric(R"({"ns": "fast"})", JsonAt("ns"));
  ASSERT_FALSE(text);
  EXPECT_NE(text.error().message.find("not a number"), std::string::npos);
  auto zero = ReadMetric("0 ns\n", Regex(R"(([0-9.]+) ns)"));
  ASSERT_FALSE(zero);
  EXPECT_NE(zero.error().message.find("positive"), std::string::npos);
  auto not_json = ReadMetric("12 ns\n", JsonAt("ns"));
  ASSERT_FALSE(not_json);
  EXPECT_NE(not_json.error().message.find("not JSON"), std::string::npos);
}

// A benchmark that prints 100 KB: the regex runs in linear time (std::regex
// overflowed the stack on a long run of what [0-9.]+ matches).
TEST(CodeMetric, AHundredKilobytesOfOutputAreReadNotACrash) {
  auto v = ReadMetric(std::string(100000, '0') + "4.25 ns/op\n", Regex(R"(([0-9.]+) ns/op)"));
  ASSERT_TRUE(v) << v.error().message;
  EXPECT_DOUBLE_EQ(*v, 4.25);
  v = ReadMetric(std::string(100000, 'x') + "\nrun: 4.25 ns/op\n", Regex(R"((?:x|y)*\s*run: ([0-9.]+) ns/op)"));
  ASSERT_TRUE(v) << v.error().message;
  EXPECT_DOUBLE_EQ(*v, 4.25);
  auto none = ReadMetric(std::string(100000, '.'), Regex(R"(([0-9.]+) ns/op)"));
  ASSERT_FALSE(none);
  EXPECT_NE(none.error().message.find("no match for the metric's regex"), std::string::npos);
  EXPECT_LT(none.error().message.size(), 2000u);  // the output's tail, not all of it
}

TEST(CodeMetric, AnEmptyMatchMovesOnAndAPatternRe2RefusesIsAnError) {
  // The last match is the empty one at the end: an answer, not a loop.
  auto v = ReadMetric("a 1\nb 2\n", Regex(R"([0-9]*)"));
  ASSERT_FALSE(v);
  EXPECT_NE(v.error().message.find("which is not a number"), std::string::npos) << v.error().message;
  auto bad = ReadMetric("t 1\n", Regex(R"((?=t) ([0-9]+))"));
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message.find("RE2 syntax"), std::string::npos) << bad.error().message;
}

TEST(CodeMetric, HigherIsBetterIsComparedByItsReciprocal) {
  suite::MetricSpec m;
  m.higher_is_better = true;
  EXPECT_DOUBLE_EQ(eval::CostOf(4, m), 0.25);
  EXPECT_DOUBLE_EQ(eval::FigureOf(0.25, m), 4);
  LatencyStats costs = eval::Summarize({0.25, 0.5, 0.2});
  const MetricFigures f = eval::FiguresOf(costs, m, 3);
  EXPECT_DOUBLE_EQ(f.median, 4);
  EXPECT_DOUBLE_EQ(f.best, 5);  // the highest figure is the lowest cost
  EXPECT_DOUBLE_EQ(f.worst, 2);
  m.higher_is_better = false;
  EXPECT_DOUBLE_EQ(eval::CostOf(4, m), 4);
}

}  // namespace
}  // namespace accelopt::code
