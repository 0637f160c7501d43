// The cuda target's calibration on a GPU: every figure measured, positive,
// and below its theoretical figure (5% allowed for the clock reading), and
// the calibration saved under the machine's name. Skipped with the reason
// where the target is unavailable (no nvcc, no CUDA device).

#include <gtest/gtest.h>

#include <string>

#include "targets/cuda/calibrate.h"
#include "targets/cuda/hardware_store.h"
#include "targets/registry.h"
#include "testing/temp_dir.h"
#include "testing/test_paths.h"

namespace accelopt::cuda {
namespace {

class CudaCalibrationGpuTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const auto& kind : targets::RegisteredTargets())
      if (kind.name == "cuda")
        if (std::string why = targets::WhyUnavailable(kind, targets::TargetSettings{}); !why.empty())
          GTEST_SKIP() << "the cuda target is unavailable here: " << why;
  }
};

TEST_F(CudaCalibrationGpuTest, EveryFigureIsPositiveAndBelowItsTheoreticalOne) {
  testing::TempDir home;
  GpuCalibrationOptions options;
  options.nvcc.cache_dir = testing::TestHome() + "/cuda-cache/cuda-build";
  options.work_dir = home.path();
  bool saved = false;
  auto calibration = CalibrateGpuAndSave(
      options, home.path(), [](const std::string&) {}, &saved);
  ASSERT_TRUE(calibration) << calibration.error().message;
  const GpuHardwareProfile& p = calibration->profile;
  struct Named {
    const char* name;
    const GpuFigure& figure;
  };
  for (const Named& n : {Named{"hbm_gbs", p.hbm}, Named{"bf16_gemm_gflops", p.bf16_gemm},
                         Named{"fp32_gemm_gflops", p.fp32_gemm}, Named{"fp32_fma_gflops", p.fp32_fma}}) {
    SCOPED_TRACE(std::string(n.name) + ": " + n.figure.method);
    EXPECT_GT(n.figure.measured, 0);
    EXPECT_GT(n.figure.theoretical, 0) << "no per-architecture constant for sm_" << p.cc_major << p.cc_minor;
    EXPECT_LT(n.figure.measured, 1.05 * n.figure.theoretical);
  }
  for (const auto& [name, f] : p.details) EXPECT_GT(f.measured, 0) << name;
  EXPECT_LE(p.fp32_gemm.measured, 1.05 * p.fp32_fma.measured);
  EXPECT_EQ(p.machine, FindDevice()->Machine());

  std::string problems;
  for (const auto& problem : calibration->problems) problems += "\n  - " + problem;
  EXPECT_TRUE(saved) << problems;
  if (!saved) return;
  auto loaded = LoadGpuHardwareProfile(home.path() + "/hardware", p.machine);
  ASSERT_TRUE(loaded) << loaded.error().message;
  ASSERT_TRUE(loaded->has_value());
  EXPECT_DOUBLE_EQ((*loaded)->hbm.measured, p.hbm.measured);
}

}  // namespace
}  // namespace accelopt::cuda
