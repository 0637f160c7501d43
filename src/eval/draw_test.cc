#include "eval/draw.h"

#include <gtest/gtest.h>

#include <cmath>
#include <set>
#include <vector>

#include "eval/perturb.h"
#include "eval/streaming.h"

namespace accelopt::eval {
namespace {

suite::BoundTensor Indptr(long parts, long total, long least, double spread) {
  suite::BoundTensor t;
  t.name = "indptr";
  t.dims = {parts + 1};
  t.elements = parts + 1;
  t.dtype = suite::DType::kInt32;
  t.dist.kind = "indptr";
  t.dist.spread = spread;
  t.total = total;
  t.least = least;
  return t;
}

TEST(DrawInput, IndptrSplitsTheTotalIntoUnequalSegmentsOfAtLeastTheLeast) {
  const auto t = Indptr(64, 65536, 1, 0.9);
  std::vector<float> a(65), b(65);
  DrawInput(t, a.data(), 7, 2);
  DrawInput(t, b.data(), 7, 2);
  EXPECT_EQ(a, b);  // (seed, stream) alone decide
  EXPECT_EQ(a.front(), 0);
  EXPECT_EQ(a.back(), 65536);
  long shortest = 1L << 30, longest = 0;
  for (size_t p = 0; p + 1 < a.size(); ++p) {
    const long len = static_cast<long>(a[p + 1] - a[p]);
    EXPECT_GE(len, 1);
    shortest = std::min(shortest, len), longest = std::max(longest, len);
  }
  EXPECT_GT(longest, 3 * shortest) << "a spread of 0.9 draws lengths far apart";
  DrawInput(t, b.data(), 8, 2);
  EXPECT_NE(a, b);

  const auto even = Indptr(4, 8 * 4 + 10, 8, 0);
  std::vector<float> e(5);
  DrawInput(even, e.data(), 1, 0);
  EXPECT_EQ(e, (std::vector<float>{0, 10, 21, 31, 42}));  // 8 each, the spare 10 shared out evenly
}

TEST(DrawInput, PagesAreDistinctIdsInRange) {
  suite::BoundTensor t;
  t.dims = {1000};
  t.elements = 1000;
  t.dtype = suite::DType::kInt32;
  t.dist.kind = "pages";
  t.pages = 1200;
  std::vector<float> ids(1000);
  DrawInput(t, ids.data(), 3, 1);
  std::set<float> seen(ids.begin(), ids.end());
  EXPECT_EQ(seen.size(), 1000u);
  EXPECT_GE(*seen.begin(), 0);
  EXPECT_LT(*seen.rbegin(), 1200);
  EXPECT_FALSE(std::is_sorted(ids.begin(), ids.end()));
}

TEST(DrawInput, Bf16InputsHoldBf16ValuesAndStayBf16WhenPerturbed) {
  suite::BoundTensor t;
  t.dims = {4096};
  t.elements = 4096;
  t.dtype = suite::DType::kBf16;
  std::vector<float> x(4096), y(4096);
  DrawInput(t, x.data(), 5, 0);
  auto is_bf16 = [](float v) { return (std::bit_cast<uint32_t>(v) & 0xffffu) == 0; };
  for (float v : x) ASSERT_TRUE(is_bf16(v)) << v;
  Perturb(x.data(), y.data(), 4096, 11, 0, PerturbMask(t));
  long changed = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    ASSERT_TRUE(is_bf16(y[i])) << y[i];
    if (x[i] != 0) EXPECT_LE(std::fabs(y[i] - x[i]), std::fabs(x[i]) * 0.125 + 1e-30);
    changed += y[i] != x[i];
  }
  EXPECT_GT(changed, 3500);
}

TEST(DrawInput, ConstantsAndIntegersAreNotPerturbed) {
  suite::BoundTensor c;
  c.elements = 1;
  c.dist.kind = "constant";
  c.dist.a = 0.125;
  float v = 0;
  DrawInput(c, &v, 1, 0, 3.0);
  EXPECT_EQ(v, 0.375f);
  EXPECT_EQ(PerturbMask(c), 0u);
  EXPECT_EQ(PerturbMask(Indptr(3, 9, 1, 0.5)), 0u);
  suite::BoundTensor f;
  EXPECT_EQ(PerturbMask(f), kMantissaLow20);
}

// A checked call's page table is drawn afresh from its seed, never the set's.
TEST(DeriveInput, IntegerInputsAreDrawnAfreshRandomOnesPerturbed) {
  const auto t = Indptr(8, 100, 1, 0.9);
  std::vector<float> base(9), derived(9), again(9);
  DrawInput(t, base.data(), 1, 3);
  DeriveInput(t, base.data(), derived.data(), 0, 9, 77, 3);
  DeriveInput(t, base.data(), again.data(), 0, 9, 77, 3);
  EXPECT_NE(derived, base);
  EXPECT_EQ(derived, again);
  EXPECT_EQ(derived.back(), 100);
  suite::BoundTensor f;
  f.elements = 64;
  std::vector<float> x(64), y(64);
  DrawInput(f, x.data(), 1, 0);
  DeriveInput(f, x.data(), y.data(), 0, 64, 77, 0);
  StreamFence();
  for (size_t i = 0; i < x.size(); ++i)
    if (x[i] != 0) EXPECT_EQ(std::signbit(y[i]), std::signbit(x[i]));
  EXPECT_NE(x, y);
}

TEST(RoundToBf16, RoundsToNearestEven) {
  EXPECT_EQ(RoundToBf16(1.0f), 1.0f);
  EXPECT_EQ(RoundToBf16(1.0f + 0x1p-8f), 1.0f);                       // halfway: to even
  EXPECT_EQ(RoundToBf16(1.0f + 0x1p-8f + 0x1p-12f), 1.0f + 0x1p-7f);  // above halfway: up
  EXPECT_TRUE(std::isnan(RoundToBf16(NAN)));
}

}  // namespace
}  // namespace accelopt::eval
