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
    options.seconds_per_test = 0.15;
    options.repeats = 3;
    options.stream_bytes = 64L << 20;
    options.sgemm_n = 512;
    profile_ = new HardwareProfile(Calibrate(options));
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

// The theoretical peaks multiply by a clock measured separately, on one core,
// with a scalar add chain; the all-core vector tests can run at a slightly
// different clock (turbo, hypervisor scheduling, timer granularity), so a
// measurement may overshoot the theoretical figure a little. 10% covers that;
// anything more means the kernel counts flops it does not do, or the pipe
// table is wrong for this CPU.
constexpr double kClockSlack = 1.10;

TEST_F(CalibrateTest, ArithmeticPeaksStayBelowTheoretical) {
  EXPECT_LE(h().peak_mm_gflops, h().theoretical_mm_gflops * kClockSlack);
  EXPECT_LE(h().peak_vec_gflops, h().theoretical_vec_gflops * kClockSlack);
  EXPECT_LE(h().blas_sgemm_gflops, h().theoretical_mm_gflops * kClockSlack);
}

TEST_F(CalibrateTest, BandwidthIsPlausible) {
  // No CPU socket streams 1 TB/s from DRAM; more means the arrays sat in cache
  // or the loop was optimized away.
  EXPECT_LT(h().bandwidth_gbs, 1000.0);
}

}  // namespace
}  // namespace accelopt::cpu
