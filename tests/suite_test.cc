// Every task of the suite: its baseline agrees with its reference on the
// `test` shape under the real evaluator, and its roofline is well formed.

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>

#include "core/json_io.h"
#include "suite/roofline.h"
#include "suite/task.h"
#include "testing/cpu_test_target.h"

namespace accelopt {
namespace {

const std::vector<suite::Task>& Suite() {
  static const std::vector<suite::Task> tasks = [] {
    auto loaded = suite::LoadSuite(std::string(ACCELOPT_SOURCE_DIR) + "/suite");
    if (!loaded) ADD_FAILURE() << loaded.error().message;
    return loaded ? *loaded : std::vector<suite::Task>{};
  }();
  return tasks;
}

TEST(Suite, HasTheFourteenWorkloadsAndFourPagedAttentionTasks) {
  std::vector<std::string> names;
  for (const auto& t : Suite()) names.push_back(t.name);
  EXPECT_EQ(names,
            (std::vector<std::string>{
                "adamw", "add_rmsnorm_matmul", "bmm", "bmm_softmax", "gqa_full", "gqa_paged_decode_h32_kv4_d128_ps1",
                "gqa_paged_decode_h32_kv8_d128_ps1", "gqa_paged_prefill_causal_h32_kv4_d128_ps1",
                "gqa_paged_prefill_causal_h32_kv8_d128_ps1", "lora", "mamba", "matmul", "matmul_add_rmsnorm",
                "rmsnorm_matmul", "rope", "silu", "swiglu", "transpose_matmul"}));
}

class SuiteTask : public ::testing::TestWithParam<std::string> {};

const suite::Task* Find(const std::string& name) {
  for (const auto& t : Suite())
    if (t.name == name) return &t;
  return nullptr;
}

TEST_P(SuiteTask, RooflineIsPositiveAtBothShapes) {
  const suite::Task* task = Find(GetParam());
  ASSERT_NE(task, nullptr);
  EXPECT_TRUE(task->provenance.count("model")) << "provenance.model";
  std::vector<std::string> shapes = {"test", "bench"};
  if (task->shapes.count("gpu")) shapes.push_back("gpu");
  for (const std::string& shape : shapes) {
    auto bound = suite::Bind(*task, shape);
    ASSERT_TRUE(bound.ok()) << bound.error().message;
    auto counts = suite::CountRoofline(*bound);
    ASSERT_TRUE(counts.ok()) << counts.error().message;
    EXPECT_GT(counts->min_bytes, 0);
    EXPECT_GT(counts->flops_mm + counts->flops_vec, 0);
    // Each input read once and each output written once; a paged task reads
    // only the pages its page table names, every page on its bench shape.
    double io_bytes = 0;
    for (const auto* group : {&bound->inputs, &bound->outputs})
      for (const auto& t : *group) io_bytes += static_cast<double>(suite::DTypeBytes(t.dtype)) * t.elements;
    if (task->fib_definition.empty() || shape != "test")
      EXPECT_DOUBLE_EQ(counts->min_bytes, io_bytes) << shape;
    else
      EXPECT_LT(counts->min_bytes, io_bytes) << shape;
  }
}

TEST_P(SuiteTask, BaselineMatchesReferenceOnTestShape) {
  const suite::Task* task = Find(GetParam());
  ASSERT_NE(task, nullptr);
  testing::TempDir scratch;
  cpu::CpuTargetOptions options = testing::TestTargetOptions(scratch);
  options.timing_enabled = false;
  options.seeds = 3;
  auto target = cpu::MakeCpuTarget(options);
  if (!task->PlainFloat32()) {
    EXPECT_FALSE(target->Supports(*task)) << "the cpu target runs float32 tasks only";
    GTEST_SKIP() << task->name << " has bf16 and int32 tensors: the cuda target runs it";
  }
  ASSERT_TRUE(target->Supports(*task));
  auto source = ReadFile(task->baseline_path(cpu::kKernelExtension));
  ASSERT_TRUE(source.ok());
  targets::EvalRequest request{task, "test", {*source, "baseline", {}}};
  auto profile = target->Evaluate({&request, 1})[0];
  ASSERT_TRUE(profile.ok()) << profile.error().message;
  EXPECT_EQ(profile->status, Verdict::kOk) << profile->message << profile->compile_log << profile->run_log;
  ASSERT_TRUE(profile->errors.has_value());
  EXPECT_LE(profile->errors->rel_l2, task->tolerance);
  // adamw's loop stays scalar (std::sqrt may set errno): the profile says so and why.
  if (task->name == "adamw") {
    EXPECT_NE(profile->not_vectorized.find("kernel.cpp:"), std::string::npos) << profile->not_vectorized;
    EXPECT_NE(profile->not_vectorized.find("control flow in loop"), std::string::npos) << profile->not_vectorized;
  }
}

// An H100 SXM as the issue sizes the gpu shapes by: HBM 3.0 TB/s (the low end
// of what it is measured at), FP32 FMA 65 TFLOP/s, FP32 GEMM 51 TFLOP/s (the
// float32 tasks' matrix rate: their tolerance rules out TF32), bf16 GEMM
// 800 TFLOP/s (the paged tasks' bf16 inputs).
suite::PeakRates H100Rates(const suite::Task& task) {
  const bool bf16 = std::any_of(task.inputs.begin(), task.inputs.end(),
                                [](const suite::Tensor& t) { return t.dtype == suite::DType::kBf16; });
  return {3000, bf16 ? 800000.0 : 51000.0, 65000};
}

// Every task the cuda target runs (a baseline.cu) has a `gpu` shape, the
// target's default, at which its roofline on an H100 is at least 50 us: a
// bench shape of a few microseconds measures the launch, not the kernel.
// Prints each task's gpu shape, roofline and bound.
TEST(Suite, EveryCudaTaskHasAGpuShapeOfAtLeastFiftyMicrosecondsOnAnH100) {
  int cuda_tasks = 0;
  for (const auto& task : Suite()) {
    if (!std::filesystem::exists(task.baseline_path(".cu"))) continue;
    ++cuda_tasks;
    ASSERT_TRUE(task.shapes.count("gpu")) << task.name << " has baseline.cu but no gpu shape";
    auto bound = suite::Bind(task, "gpu");
    ASSERT_TRUE(bound.ok()) << bound.error().message;
    auto counts = suite::CountRoofline(*bound);
    ASSERT_TRUE(counts.ok()) << counts.error().message;
    const suite::RooflineTime t = suite::ComputeRooflineTime(*counts, H100Rates(task));
    std::printf("%-42s %8.1f us  %-6s  %s\n", task.name.c_str(), t.seconds * 1e6, t.bound.c_str(),
                suite::ShapeText(bound->params).c_str());
    EXPECT_GE(t.seconds, 50e-6) << task.name << " at gpu (" << suite::ShapeText(bound->params) << "): "
                                << t.seconds * 1e6 << " us, " << t.bound << "-bound";
    // Larger than bench in every way that matters: never below it.
    auto bench = suite::Bind(task, "bench");
    ASSERT_TRUE(bench.ok());
    auto bench_counts = suite::CountRoofline(*bench);
    ASSERT_TRUE(bench_counts.ok());
    EXPECT_GE(t.seconds, suite::ComputeRooflineTime(*bench_counts, H100Rates(task)).seconds) << task.name;
  }
  EXPECT_EQ(cuda_tasks, 18);
}

// Honest fast kernels pass every trust check, timed: the demo's optimized
// kernels (vectorized, threaded, non-temporal stores) and the OpenBLAS anchors.
TEST(FastKernels, HonestOnesAreOk) {
  testing::TempDir scratch;
  auto target = cpu::MakeCpuTarget(testing::TestTargetOptions(scratch));
  const std::string root = ACCELOPT_SOURCE_DIR;
  struct Kernel {
    const char* task;
    std::string path;
    std::vector<std::string> libraries;
  };
  std::vector<Kernel> kernels;
  for (const char* task : {"silu", "matmul", "rmsnorm_matmul"})
    for (const char* step : {"iter2_a", "iter2_b"})
      kernels.push_back({task, root + "/demo/kernels/" + task + "/" + step + ".cpp", {}});
  for (const char* task : {"matmul", "swiglu", "gqa_full"})
    kernels.push_back({task, root + "/suite/" + task + "/vendor.cpp", {"openblas"}});
  for (const auto& k : kernels) {
    const suite::Task* task = Find(k.task);
    ASSERT_NE(task, nullptr);
    auto source = ReadFile(k.path);
    ASSERT_TRUE(source.ok()) << k.path;
    targets::EvalRequest request{task, "test", {*source, k.path, k.libraries}};
    auto profile = target->Evaluate({&request, 1})[0];
    ASSERT_TRUE(profile.ok()) << profile.error().message;
    EXPECT_EQ(profile->status, Verdict::kOk) << k.path << ": " << profile->message << profile->run_log;
    EXPECT_GT(profile->checked_calls, 0) << k.path;
  }
}

INSTANTIATE_TEST_SUITE_P(All, SuiteTask,
                         ::testing::Values("adamw", "add_rmsnorm_matmul", "bmm", "bmm_softmax", "gqa_full",
                                           "gqa_paged_decode_h32_kv4_d128_ps1",
                                           "gqa_paged_prefill_causal_h32_kv8_d128_ps1", "lora", "mamba", "matmul",
                                           "matmul_add_rmsnorm", "rmsnorm_matmul", "rope", "silu", "swiglu",
                                           "transpose_matmul"));

}  // namespace
}  // namespace accelopt
