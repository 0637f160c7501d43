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

std::vector<Speedup> Exact(const std::vector<double>& estimates) {
  std::vector<Speedup> out;
  for (double e : estimates) out.push_back({e, e, e});
  return out;
}

TEST(PickLessonPairs, HalfPositivesBestFirstThenNegativesWorstFirst) {
  //                                0     1    2     3    4    5     6
  std::vector<Speedup> speedup = Exact({1.5, 1.02, 3.0, 0.5, 0.8, 0.95, 2.0});
  // top_k 4: positives > 1.04 best first, at most 2 -> {2, 6}; negatives < 1/1.15 (0.8696) worst first -> {3, 4}.
  EXPECT_EQ(PickLessonPairs(speedup, 4, 1.04, 1.15), (std::vector<size_t>{2, 6, 3, 4}));
  // Few negatives: the rest stays empty (no filling with neutral pairs).
  EXPECT_EQ(PickLessonPairs(Exact({1.5, 2.0, 1.2}), 4, 1.04, 1.15), (std::vector<size_t>{1, 0}));
  EXPECT_TRUE(PickLessonPairs(Exact({1.0, 1.01}), 8, 1.04, 1.15).empty());
}

// Measured 1.05x and 1.06x apart, but with intervals reaching below the
// threshold: noise, not a lesson. Only a whole interval beyond it counts.
TEST(PickLessonPairs, OnlyIntervalsWhollyBeyondTheThresholdsBecomeLessons) {
  std::vector<Speedup> speedup{{1.05, 0.98, 1.12}, {1.06, 1.045, 1.08}, {0.80, 0.70, 0.90}, {0.80, 0.75, 0.86}};
  EXPECT_EQ(PickLessonPairs(speedup, 8, 1.04, 1.15), (std::vector<size_t>{1, 3}));
}

// Two replays of one recording once stored opposite "verified" lessons, both
// measured while other processes took 44-69% of the machine.
TEST(PickLessonPairs, ADisturbedComparisonTeachesNothing) {
  std::vector<Speedup> speedup{{1.90, 1.82, 1.96, true}, {0.77, 0.73, 0.80, true}, {1.5, 1.4, 1.6, false}};
  EXPECT_EQ(PickLessonPairs(speedup, 8, 1.04, 1.15), (std::vector<size_t>{2}));
}

TEST(PickBeam, BestDistinctCorrect) {
  std::vector<Sample> c{{true, 5}, {false, 0}, {true, 1}, {true, 1}, {true, 3}};
  std::vector<double> s{1, 9, 5, 5, 2};
  std::vector<std::string> h{"a", "b", "c", "c", "d"};
  EXPECT_EQ(PickBeam(c, s, h, 2), (std::vector<size_t>{2, 4}));
  EXPECT_EQ(PickBeam(c, s, h, 10), (std::vector<size_t>{2, 4, 0}));
}

// A child measured 1.76x faster than its parent side by side, whose own
// median (taken minutes apart, under another load) looks slower than a
// sibling's, is ranked by the evidence, not by its median.
TEST(PickBeam, TheSideBySideEvidenceRanksNotTheMedians) {
  std::vector<Sample> c{{true, 1.0}, {true, 0.9}, {true, 0.95}};
  std::vector<double> s{1.0, 1.2, 1.76};
  std::vector<std::string> h{"base", "a", "b"};
  EXPECT_EQ(PickBeam(c, s, h, 2), (std::vector<size_t>{2, 1}));
  // Equal evidence: the median breaks the tie.
  EXPECT_EQ(PickBeam(c, {1.0, 1.2, 1.2}, h, 1), (std::vector<size_t>{1}));
}

}  // namespace
// Plan titles that name one strategy, in other words or with details
// changed, and ones that do not.
TEST(SameStrategy, TellsVariantsOfOneIdeaFromOtherIdeas) {
  EXPECT_TRUE(SameStrategy("Register tiling 8x8 with AVX2 FMA", "register tiling 8x8 with AVX2 FMA, unrolled"));
  EXPECT_TRUE(SameStrategy("Vectorize the inner loop with AVX2", "Vectorize inner loop using AVX2 intrinsics"));
  EXPECT_FALSE(SameStrategy("Register tiling 8x8 with AVX2 FMA", "Transpose B into a packed buffer first"));
  EXPECT_FALSE(SameStrategy("Fuse the softmax into the matmul", "Parallelize rows with OpenMP"));
  EXPECT_FALSE(SameStrategy("", ""));
  EXPECT_FALSE(SameStrategy("", "Vectorize"));
}

// The beam keeps distinct strategies: the second variant of an idea is passed
// over for the next distinct one, even when its evidence ranks it second.
TEST(PickBeam, KeepsStrategiesDistinct) {
  std::vector<Sample> c = {{true, 3.0}, {true, 1.0}, {true, 1.1}, {true, 2.0}};
  std::vector<double> s = {1.0, 3.0, 2.9, 1.5};
  std::vector<std::string> h = {"base", "a", "b", "c"};
  std::vector<std::string> titles = {"", "Register tiling 8x8 with AVX2", "Register tiling 8x8 with AVX2, unrolled 4x",
                                     "Transpose B into a packed buffer"};
  EXPECT_EQ(PickBeam(c, s, h, 2), (std::vector<size_t>{1, 2}));
  EXPECT_EQ(PickBeam(c, s, h, 2, titles), (std::vector<size_t>{1, 3}));
  EXPECT_EQ(PickBeam(c, s, h, 4, titles), (std::vector<size_t>{1, 3, 0}));
}

}  // namespace accelopt::search
