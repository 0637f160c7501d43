// The per-element bound from float32 rounding (eval/compare.h), both sides,
// on several tasks of the suite: honest float32 kernels with other summation
// orders, fused multiply-adds or a vectorized exp pass; kernels that drop or
// change a term by more than rounding fail, although their relative L2 error
// is within the task's tolerance (so the L2 test alone would let them pass).

#include <gtest/gtest.h>

#include <string>

#include "core/json_io.h"
#include "suite/task.h"
#include "testing/cpu_test_target.h"

namespace accelopt {
namespace {

struct Case {
  const char* task;
  const char* shape;
  const char* kernel;  // under tests/tolerance_kernels/, or a path from the source root
  bool honest;
};

std::ostream& operator<<(std::ostream& os, const Case& c) { return os << c.task << "/" << c.kernel; }

class ElementBound : public ::testing::TestWithParam<Case> {};

TEST_P(ElementBound, HonestPassesDroppedTermFails) {
  const Case& c = GetParam();
  const std::string root = ACCELOPT_SOURCE_DIR;
  auto task = suite::LoadTask(root + "/suite/" + c.task);
  ASSERT_TRUE(task.ok()) << task.error().message;
  std::string path = std::string(c.kernel).find('/') == std::string::npos
                         ? root + "/tests/tolerance_kernels/" + c.kernel
                         : root + "/" + c.kernel;
  auto source = ReadFile(path);
  ASSERT_TRUE(source.ok()) << path;
  testing::TempDir scratch;
  cpu::CpuTargetOptions options = testing::TestTargetOptions(scratch);
  options.timing_enabled = false;  // correctness is the point here
  options.seeds = 3;
  auto target = cpu::MakeCpuTarget(options);
  targets::EvalRequest request{&*task, c.shape, {*source, path, {}}};
  auto profile = std::move(target->Evaluate({&request, 1})[0]);
  ASSERT_TRUE(profile.ok()) << profile.error().message;
  ASSERT_TRUE(profile->errors.has_value()) << profile->message;
  const ErrorStats& e = *profile->errors;
  EXPECT_TRUE(e.bounded) << "no float32 evaluation of the reference: " << profile->message;
  if (c.honest) {
    EXPECT_EQ(profile->status, Verdict::kOk) << profile->message;
    EXPECT_LT(e.worst_ratio, 1.0);
    return;
  }
  EXPECT_EQ(profile->status, Verdict::kWrongAnswer) << profile->message;
  EXPECT_NE(profile->message.find("float32 rounding allows"), std::string::npos) << profile->message;
  // The L2 test alone would have passed it.
  EXPECT_LE(e.rel_l2, task->tolerance) << profile->message;
  EXPECT_GT(e.over_bound, 0u);
}

INSTANTIATE_TEST_SUITE_P(Tasks, ElementBound,
                         ::testing::Values(Case{"adamw", "test", "suite/adamw/baseline.cpp", true},
                                           Case{"adamw", "test", "adamw_fma.cpp", true},
                                           Case{"adamw", "test", "adamw_drops_decay.cpp", false},
                                           Case{"silu", "test", "demo/kernels/silu/iter2_a.cpp", true},
                                           Case{"silu", "test", "silu_cheap_exp.cpp", false},
                                           Case{"mamba", "bench", "suite/mamba/baseline.cpp", true},
                                           Case{"mamba", "bench", "mamba_reordered.cpp", true},
                                           Case{"mamba", "bench", "mamba_truncated_exp.cpp", false},
                                           Case{"rmsnorm_matmul", "bench", "rmsnorm_matmul_blocked.cpp", true},
                                           Case{"rmsnorm_matmul", "bench", "rmsnorm_matmul_drops_small_products.cpp",
                                                false}),
                         [](const auto& info) {
                           std::string name = info.param.kernel;
                           name = name.substr(name.rfind('/') + 1);
                           return std::string(info.param.task) + "_" + name.substr(0, name.find('.'));
                         });

}  // namespace
}  // namespace accelopt
