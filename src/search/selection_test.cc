#include "search/selection.h"

#include <gtest/gtest.h>

namespace accelopt::search {
namespace {

TEST(KeepSample, BestWhenItBeatsTheParent) { EXPECT_EQ(KeepSample({{true, 3}, {true, 1}, {true, 2}}, 2.5), 1u); }

TEST(KeepSample, WorstWhenNoneBeatsTheParent) {
  EXPECT_EQ(KeepSample({{true, 3}, {true, 4}, {true, 3.5}}, 2.0), 1u);
  // A failed sample is the worst of all.
  EXPECT_EQ(KeepSample({{true, 3}, {false, 0}}, 2.0), 1u);
  EXPECT_EQ(KeepSample({{false, 0}, {false, 0}}, 2.0), 0u);
}

TEST(PickLessonPairs, HalfPositivesBestFirstThenNegativesWorstFirst) {
  //                          0     1    2     3    4    5     6
  std::vector<double> speedup{1.5, 1.02, 3.0, 0.5, 0.8, 0.95, 2.0};
  // top_k 4: positives > 1.04 best first, at most 2 -> {2, 6}; negatives < 1/1.15 (0.8696) worst first -> {3, 4}.
  EXPECT_EQ(PickLessonPairs(speedup, 4, 1.04, 1.15), (std::vector<size_t>{2, 6, 3, 4}));
  // Few negatives: the rest stays empty (no filling with neutral pairs).
  EXPECT_EQ(PickLessonPairs({1.5, 2.0, 1.2}, 4, 1.04, 1.15), (std::vector<size_t>{1, 0}));
  EXPECT_TRUE(PickLessonPairs({1.0, 1.01}, 8, 1.04, 1.15).empty());
}

TEST(PickBeam, BestDistinctCorrect) {
  std::vector<Sample> c{{true, 5}, {false, 0}, {true, 1}, {true, 1}, {true, 3}};
  std::vector<std::string> h{"a", "b", "c", "c", "d"};
  EXPECT_EQ(PickBeam(c, h, 2), (std::vector<size_t>{2, 4}));
  EXPECT_EQ(PickBeam(c, h, 10), (std::vector<size_t>{2, 4, 0}));
}

}  // namespace
}  // namespace accelopt::search
