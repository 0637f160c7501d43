#include "eval/perturb.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "eval/inputs.h"

namespace accelopt::eval {
namespace {

std::vector<float> Normal(long n, uint64_t seed) {
  std::vector<float> x(n);
  FillRandom(x.data(), n, seed, 0, {true, 0.0, 1.0});
  return x;
}

TEST(Perturb, ChangesEveryValueWithinItsBinade) {
  auto base = Normal(10007, 3);
  std::vector<float> out(base.size());
  Perturb(base.data(), out.data(), base.size(), 42, 0);
  long changed = 0;
  double rel2 = 0;
  for (size_t i = 0; i < base.size(); ++i) {
    ASSERT_EQ(std::signbit(out[i]), std::signbit(base[i])) << i;
    int eb, eo;
    std::frexp(base[i], &eb);
    std::frexp(out[i], &eo);
    ASSERT_EQ(eb, eo) << i;
    changed += out[i] != base[i];
    double r = (out[i] - base[i]) / base[i];
    rel2 += r * r;
  }
  EXPECT_GT(changed, 0.999 * base.size());
  // Far above any task's tolerance: an output for other inputs cannot pass.
  EXPECT_GT(std::sqrt(rel2 / base.size()), 0.01);
}

TEST(Perturb, DependsOnSeedAndStreamOnly) {
  auto base = Normal(1000, 5);
  std::vector<float> a(1000), b(1000), c(1000), d(1000);
  Perturb(base.data(), a.data(), 1000, 1, 0);
  Perturb(base.data(), b.data(), 1000, 1, 0);
  Perturb(base.data(), c.data(), 1000, 2, 0);
  Perturb(base.data(), d.data(), 1000, 1, 1);
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
  EXPECT_NE(a, d);
}

TEST(Perturb, LeavesZerosSubnormalsAndSpecialsAlone) {
  const float specials[] = {0.0f, -0.0f, std::numeric_limits<float>::denorm_min(),
                            std::numeric_limits<float>::infinity(), -std::numeric_limits<float>::infinity()};
  float out[5];
  Perturb(specials, out, 5, 77, 0);
  for (int i = 0; i < 5; ++i) EXPECT_EQ(std::memcmp(&out[i], &specials[i], 4), 0) << i;
  float nan = std::nanf(""), nan_out;
  Perturb(&nan, &nan_out, 1, 77, 0);
  EXPECT_TRUE(std::isnan(nan_out));
}

}  // namespace
}  // namespace accelopt::eval
