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
