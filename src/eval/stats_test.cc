#include "eval/stats.h"

#include <gtest/gtest.h>

namespace accelopt::eval {
namespace {

TEST(Stats, SummarizeOddSeries) {
  LatencyStats s = Summarize({5, 1, 3, 2, 4});
  EXPECT_DOUBLE_EQ(s.median_s, 3);
  EXPECT_DOUBLE_EQ(s.min_s, 1);
  EXPECT_DOUBLE_EQ(s.max_s, 5);
  EXPECT_DOUBLE_EQ(s.mean_s, 3);
  EXPECT_DOUBLE_EQ(s.spread, (4.0 - 2.0) / 3.0);
  EXPECT_EQ(s.calls, 5);
}

TEST(Stats, QuantileInterpolates) {
  EXPECT_DOUBLE_EQ(Quantile({1, 2, 3, 4}, 0.5), 2.5);
  EXPECT_DOUBLE_EQ(Quantile({7}, 0.9), 7);
}

TEST(Stats, MostStableKeepsSmallestSpread) {
  LatencyStats s = MostStable({{1, 2, 3, 4, 5}, {10, 10.1, 10, 9.9, 10}, {1, 1, 9, 9, 5}});
  EXPECT_DOUBLE_EQ(s.median_s, 10);
  EXPECT_EQ(s.series, 3);
  EXPECT_LT(s.spread, 0.02);
}

}  // namespace
}  // namespace accelopt::eval

namespace accelopt::eval {
namespace {

TEST(PairedComparison, SpeedupIsTheMedianRatioWithOrderStatisticBounds) {
  // Ten pairs, ratios 1.0 .. 1.9: for n = 10 the 95% interval of the median is
  // the 2nd to the 9th smallest ratio (P(Binomial(10, 1/2) <= 1) = 1.1%).
  std::vector<double> a, b;
  for (int i = 0; i < 10; ++i) a.push_back(1.0 + 0.1 * i), b.push_back(1.0);
  PairedSpeedup s = PairedComparison(a, b);
  EXPECT_EQ(s.pairs, 10);
  EXPECT_NEAR(s.speedup, 1.45, 1e-12);
  EXPECT_NEAR(s.ci_low, 1.1, 1e-12);
  EXPECT_NEAR(s.ci_high, 1.8, 1e-12);
  EXPECT_NEAR(s.coverage, 1 - 2 * 11.0 / 1024, 1e-12);  // P(X <= 1) = 11/1024 on each side
}

TEST(PairedComparison, DriftBetweenPairsCancels) {
  // The machine slows down threefold over the series; within each pair B is
  // 2x faster. Two absolute medians would be swamped; the pairs are not.
  std::vector<double> a, b;
  for (int i = 0; i < 40; ++i) {
    const double drift = 1.0 + 2.0 * i / 39;
    a.push_back(2e-3 * drift * (1 + 0.01 * (i % 3)));
    b.push_back(1e-3 * drift * (1 + 0.01 * ((i + 1) % 3)));
  }
  PairedSpeedup s = PairedComparison(a, b);
  EXPECT_NEAR(s.speedup, 2.0, 0.03);
  EXPECT_GT(s.ci_low, 1.95);
  EXPECT_LT(s.ci_high, 2.05);
}

TEST(PairedComparison, TooFewPairsGiveTheWholeRange) {
  PairedSpeedup s = PairedComparison({1.0, 2.0, 3.0}, {1.0, 1.0, 1.0});
  EXPECT_EQ(s.ci_low, 1.0);
  EXPECT_EQ(s.ci_high, 3.0);
  EXPECT_NEAR(s.coverage, 0.75, 1e-12);  // both ends beyond the median: 1 - 2/8
}

// The coverage kept is what the chosen order statistics give, never a fixed
// 95%: five pairs give 93.75% (the whole range), six 96.875%, and from there
// the narrowest interval of at least 95%.
TEST(PairedComparison, TheCoverageIsWhatTheOrderStatisticsGive) {
  EXPECT_NEAR(PairedComparison({1, 2, 3, 4, 5}, {1, 1, 1, 1, 1}).coverage, 0.9375, 1e-12);
  EXPECT_NEAR(PairedComparison({1, 2, 3, 4, 5, 6}, {1, 1, 1, 1, 1, 1}).coverage, 0.96875, 1e-12);
  EXPECT_EQ(PairedComparison({2}, {1}).coverage, 0);
  for (int n = 6; n <= 200; n += 7) {
    std::vector<double> a(static_cast<size_t>(n), 2.0), b(static_cast<size_t>(n), 1.0);
    const double coverage = PairedComparison(a, b).coverage;
    EXPECT_GE(coverage, 0.95) << n;
    EXPECT_LT(coverage, 1) << n;
  }
  EXPECT_EQ(IntervalName(0.9375), "93.75% interval");
  EXPECT_EQ(IntervalName(0), "interval");
}

TEST(PairedSpeedupJson, CoverageIsKeptAndOldRecordsReadAsUnknown) {
  PairedSpeedup s = PairedComparison({1, 2, 3, 4, 5}, {1, 1, 1, 1, 1});
  PairedSpeedup back = *PairedSpeedupFromJson(ToJson(s));
  EXPECT_EQ(back.coverage, s.coverage);
  EXPECT_EQ(back.ci_high, s.ci_high);
  Json old = {{"speedup", 1.2}, {"ci_low", 1.1}, {"ci_high", 1.3}, {"pairs", 9}};
  EXPECT_EQ(PairedSpeedupFromJson(old)->coverage, 0);
  EXPECT_EQ(IntervalName(PairedSpeedupFromJson(old)->coverage), "interval");
}

}  // namespace
}  // namespace accelopt::eval
