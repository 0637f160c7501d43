#include "eval/scoring.h"

#include <gtest/gtest.h>

namespace accelopt::eval {
namespace {

ScoringPeaks Calibrated() {
  ScoringPeaks peaks;
  peaks.rates = {100, 1000, 500};
  peaks.theoretical = {0, 1200, 600};
  peaks.spreads = {{"bandwidth", 0.01}, {"peak_mm", 0.01}, {"peak_vec", 0.01}};
  peaks.calibrated = true;
  peaks.fingerprint = "f";
  return peaks;
}

Profile Timed(double median) {
  Profile p;
  p.latency.emplace();
  p.latency->median_s = median;
  return p;
}

// 1e9 bytes at 100 GB/s is 10 ms; measured in 20 ms: 50% of peak, memory-bound.
TEST(Score, PercentOfPeakFromTheSlowestComponent) {
  Profile p = Timed(0.02);
  Score({1e9, 1e9, 1e9}, Calibrated(), p);
  EXPECT_EQ(p.bound, "memory");
  EXPECT_DOUBLE_EQ(p.percent_of_peak, 50);
  EXPECT_DOUBLE_EQ(p.roofline_memory_seconds, 0.01);
  EXPECT_DOUBLE_EQ(p.roofline_mm_seconds, 0.001);
  ASSERT_TRUE(p.scored_against.has_value());
  EXPECT_EQ(p.scored_against->fingerprint, "f");
  Profile unscored = Timed(0.02);
  Score({1e9, 1e9, 1e9}, ScoringPeaks{}, unscored);
  EXPECT_FALSE(unscored.scored_against.has_value());
}

TEST(JudgeBeyondPeak, WithinWhatTheCalibrationCouldMissIsAClaimNotARaise) {
  // 1e9 bytes in 9.7 ms: 103 GB/s, within 5% of the calibrated 100.
  BeyondPeak b = JudgeBeyondPeak({0, 0, 1e9}, 0.0097, Calibrated());
  EXPECT_EQ(b.suspect_reason, "");
  ASSERT_EQ(b.proved.size(), 1u);
  EXPECT_EQ(b.proved[0].figure, "bandwidth");
  EXPECT_NEAR(b.raised.bandwidth_gbs, 103.09, 0.01);
}

TEST(JudgeBeyondPeak, BeyondTheAllowanceTheTheoreticalOrWithoutAProfileIsSuspect) {
  EXPECT_NE(JudgeBeyondPeak({0, 0, 1e9}, 0.008, Calibrated()).suspect_reason.find("more than the calibrated 100"),
            std::string::npos);
  ScoringPeaks tight = Calibrated();
  tight.theoretical.peak_mm_gflops = 1010;
  const BeyondPeak above = JudgeBeyondPeak({1.04e9, 0, 0}, 0.001, tight);  // 1040 GFLOP/s
  EXPECT_NE(above.suspect_reason.find("peak_mm 1040 above the theoretical 1010"), std::string::npos);
  EXPECT_TRUE(above.proved.empty());
  ScoringPeaks uncalibrated = Calibrated();
  uncalibrated.calibrated = false;
  EXPECT_NE(JudgeBeyondPeak({0, 0, 1e9}, 0.0097, uncalibrated).suspect_reason.find("no hardware profile"),
            std::string::npos);
  Profile p = Timed(0.008);
  MarkSuspect(p, "a reason");
  EXPECT_EQ(p.status, Verdict::kSuspect);
  EXPECT_NE(p.message.find("it would need a reason; not trusted"), std::string::npos);
}

}  // namespace
}  // namespace accelopt::eval
