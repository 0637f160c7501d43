#include "targets/cpu/calibrate.h"

#include <gtest/gtest.h>

#include <cmath>

namespace accelopt::cpu {
namespace {

TEST(DetectMachineTest, DescribesThisMachine) {
  const MachineIdentity id = DetectMachine();
  EXPECT_GT(id.cores, 0);
  EXPECT_FALSE(id.fingerprint.empty());
  EXPECT_TRUE(id.simd_bits == 32 || id.simd_bits == 128 || id.simd_bits == 256 || id.simd_bits == 512) << id.simd_bits;
}

TEST(DetectMachineTest, IsStableAcrossCalls) {
  const MachineIdentity a = DetectMachine();
  const MachineIdentity b = DetectMachine();
  EXPECT_EQ(a.fingerprint, b.fingerprint);
  EXPECT_EQ(a.cpu_model, b.cpu_model);
  EXPECT_EQ(a.cores, b.cores);
  EXPECT_EQ(a.isa, b.isa);
}

// One short calibration shared by the tests below: small sizes, a fraction of
// a second per test, so the suite stays within a few seconds.
class CalibrateTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    CalibrationOptions options;
    options.seconds_per_test = 0.05;
    options.repeats = 2;
    options.stream_bytes = 16L << 20;
    options.sgemm_n = 512;
    options.min_rounds = options.max_rounds = 2;
    auto calibration = Calibrate(options);
    ASSERT_TRUE(calibration) << calibration.error().message;
    profile_ = new HardwareProfile(calibration->profile);
  }
  static void TearDownTestSuite() {
    delete profile_;
    profile_ = nullptr;
  }
  static const HardwareProfile& h() { return *profile_; }

 private:
  static HardwareProfile* profile_;
};

HardwareProfile* CalibrateTest::profile_ = nullptr;

bool PositiveFinite(double x) { return x > 0 && std::isfinite(x); }

TEST_F(CalibrateTest, AllFiguresArePositiveAndFinite) {
  EXPECT_EQ(h().machine.fingerprint, DetectMachine().fingerprint);
  EXPECT_PRED1(PositiveFinite, h().bandwidth_gbs);
  EXPECT_PRED1(PositiveFinite, h().peak_mm_gflops);
  EXPECT_PRED1(PositiveFinite, h().peak_vec_gflops);
  EXPECT_PRED1(PositiveFinite, h().blas_sgemm_gflops);
  EXPECT_PRED1(PositiveFinite, h().clock_ghz);
  EXPECT_PRED1(PositiveFinite, h().theoretical_mm_gflops);
  EXPECT_PRED1(PositiveFinite, h().theoretical_vec_gflops);
  EXPECT_GT(h().fma_units, 0);
  EXPECT_GT(h().fma_lanes, 0);
  EXPECT_FALSE(h().measured_at.empty());
  EXPECT_EQ(h().measured_at.back(), 'Z');  // ISO-8601 UTC
}

// The theoretical peaks multiply by a clock measured with every core running
// FMAs, just before the peaks; the peaks can still run at a slightly
// different clock (turbo, hypervisor scheduling, timer granularity), so a
// measurement may overshoot the theoretical figure a little. 10% covers that;
// anything more means the kernel counts flops it does not do, or the pipe
// table is wrong for this CPU.
constexpr double kClockSlack = 1.10;

TEST_F(CalibrateTest, ArithmeticPeaksStayBelowTheoretical) {
  // Other processes on the cores while the clock is measured make the
  // theoretical figure, and nothing else, too low: no physics to check then
  // (calibrate itself refuses to save such a profile).
  if (h().other_load > CalibrationOptions{}.max_other_load)
    GTEST_SKIP() << "other processes used " << 100 * h().other_load << "% of the machine during the calibration";
  EXPECT_LE(h().peak_mm_gflops, h().theoretical_mm_gflops * kClockSlack);
  EXPECT_LE(h().peak_vec_gflops, h().theoretical_vec_gflops * kClockSlack);
  EXPECT_LE(h().blas_sgemm_gflops, h().theoretical_mm_gflops * kClockSlack);
}

TEST_F(CalibrateTest, BandwidthIsPlausible) {
  // No CPU socket streams 1 TB/s from DRAM; more means the arrays sat in cache
  // or the loop was optimized away.
  EXPECT_LT(h().bandwidth_gbs, 1000.0);
}

TEST_F(CalibrateTest, EveryFigureHasItsRoundsAndSpread) {
  EXPECT_EQ(h().rounds, 2);
  for (const char* figure : {"bandwidth", "peak_mm", "peak_vec", "sgemm", "clock"}) {
    ASSERT_TRUE(h().spreads.count(figure)) << figure;
    EXPECT_GE(h().spreads.at(figure), 0) << figure;
    EXPECT_LT(h().spreads.at(figure), 1) << figure;
  }
}

// A profile as an idle machine measures it: passes every check.
HardwareProfile Consistent() {
  HardwareProfile h;
  h.peak_mm_gflops = 460;
  h.theoretical_mm_gflops = 470;
  h.blas_sgemm_gflops = 320;
  h.other_load = 0.01;
  h.rounds = 3;
  h.spreads = {{"bandwidth", 0.02}, {"peak_mm", 0.005}, {"peak_vec", 0.004}, {"sgemm", 0.2}, {"clock", 0.001}};
  return h;
}

bool Mentions(const std::vector<std::string>& problems, const std::string& what) {
  for (const auto& p : problems)
    if (p.find(what) != std::string::npos) return true;
  return false;
}

TEST(CheckProfileTest, AConsistentProfilePasses) { EXPECT_TRUE(CheckProfile(Consistent(), {}).empty()); }

TEST(CheckProfileTest, SgemmAboveTheFmaPeakIsRefused) {
  HardwareProfile h = Consistent();
  h.peak_mm_gflops = 117.3;  // a disturbed FMA test, as once saved
  h.blas_sgemm_gflops = 189.4;
  const auto problems = CheckProfile(h, {});
  EXPECT_TRUE(Mentions(problems, "above the FMA peak")) << ::testing::PrintToString(problems);
  EXPECT_TRUE(Mentions(problems, "of the theoretical")) << ::testing::PrintToString(problems);
}

TEST(CheckProfileTest, AnFmaPeakFarBelowTheTheoreticalIsRefused) {
  HardwareProfile h = Consistent();
  h.peak_mm_gflops = 0.85 * h.theoretical_mm_gflops;
  h.blas_sgemm_gflops = 0.5 * h.peak_mm_gflops;
  EXPECT_TRUE(Mentions(CheckProfile(h, {}), "busy machine, or two threads sharing a core"));
}

TEST(CheckProfileTest, AnFmaPeakAboveTheTheoreticalIsRefused) {
  HardwareProfile h = Consistent();
  h.fma_units = 1;
  h.theoretical_mm_gflops = 235;  // one pipe stated where there are two
  EXPECT_TRUE(Mentions(CheckProfile(h, {}), "above the theoretical"));
}

TEST(CheckProfileTest, AProfileMeasuredUnderLoadIsRefused) {
  HardwareProfile h = Consistent();
  h.other_load = 0.37;
  EXPECT_TRUE(Mentions(CheckProfile(h, {}), "other processes used 37%"));
}

TEST(CheckProfileTest, AFigureThatDidNotHoldStillIsRefused) {
  HardwareProfile h = Consistent();
  h.spreads["bandwidth"] = 0.3;
  EXPECT_TRUE(Mentions(CheckProfile(h, {}), "bandwidth did not hold still"));
}

}  // namespace
}  // namespace accelopt::cpu
