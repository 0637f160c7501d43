#include "eval/inputs.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace accelopt::eval {
namespace {

TEST(Inputs, DeterministicPerSeedAndStream) {
  InputDistribution normal;
  std::vector<float> a(1001), b(1001), c(1001), d(1001);
  FillRandom(a.data(), a.size(), 7, 0, normal);
  FillRandom(b.data(), b.size(), 7, 0, normal);
  FillRandom(c.data(), c.size(), 8, 0, normal);
  FillRandom(d.data(), d.size(), 7, 1, normal);
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
  EXPECT_NE(a, d);
  EXPECT_EQ(a[500], RandomValue(7, 0, 500, normal));
}

TEST(Inputs, DistributionsHaveTheDeclaredMoments) {
  const long n = 200000;
  std::vector<float> x(n);
  FillRandom(x.data(), n, 1, 0, {true, 2.0, 3.0});
  double sum = 0, sq = 0;
  for (float v : x) sum += v, sq += double(v) * v;
  double mean = sum / n, var = sq / n - mean * mean;
  EXPECT_NEAR(mean, 2.0, 0.05);
  EXPECT_NEAR(std::sqrt(var), 3.0, 0.05);

  FillRandom(x.data(), n, 1, 0, {false, -1.0, 0.5});
  float lo = x[0], hi = x[0];
  sum = 0;
  for (float v : x) lo = std::min(lo, v), hi = std::max(hi, v), sum += v;
  EXPECT_GE(lo, -1.0f);
  EXPECT_LT(hi, 0.5f);
  EXPECT_NEAR(sum / n, -0.25, 0.01);
}

}  // namespace
}  // namespace accelopt::eval
