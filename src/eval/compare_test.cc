#include "eval/compare.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace accelopt::eval {
namespace {

TEST(Compare, ExactMatchIsZero) {
  std::vector<float> out = {1, 2, 3};
  std::vector<double> ref = {1, 2, 3};
  ErrorStats s = CompareOutputs(out.data(), ref.data(), 3);
  EXPECT_EQ(s.rel_l2, 0);
  EXPECT_TRUE(s.finite());
}

TEST(Compare, RelativeL2) {
  std::vector<float> out = {3, 4.5f};
  std::vector<double> ref = {3, 4};
  ErrorStats s = CompareOutputs(out.data(), ref.data(), 2);
  EXPECT_NEAR(s.rel_l2, 0.5 / 5.0, 1e-12);
  EXPECT_NEAR(s.max_abs, 0.5, 1e-12);
}

TEST(Compare, NanAndInfFail) {
  std::vector<float> out = {1, NAN, INFINITY, 4};
  std::vector<double> ref = {1, 2, 3, 4};
  ErrorStats s = CompareOutputs(out.data(), ref.data(), 4);
  EXPECT_EQ(s.nan_count, 1u);
  EXPECT_EQ(s.inf_count, 1u);
  EXPECT_FALSE(s.finite());
  EXPECT_TRUE(std::isinf(s.rel_l2));
}

TEST(Compare, WorstMerges) {
  ErrorStats a{0.1, 2, 0, 1, 10}, b{0.3, 1, 2, 0, 5};
  ErrorStats w = Worst(a, b);
  EXPECT_DOUBLE_EQ(w.rel_l2, 0.3);
  EXPECT_DOUBLE_EQ(w.max_abs, 2);
  EXPECT_EQ(w.nan_count, 2u);
  EXPECT_EQ(w.inf_count, 1u);
  EXPECT_EQ(w.elements, 15u);
}

}  // namespace
}  // namespace accelopt::eval
