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
}

}  // namespace
}  // namespace accelopt::eval
