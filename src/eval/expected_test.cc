// The reference's slots shared among several processes give the outputs one
// process gives, bit for bit, in double and in float32, and the rounding
// floors derived from them; how many processes run at once.

#include "eval/expected.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "suite/task.h"
#include "targets/cpu/cpu_target.h"
#include "testing/cpu_test_target.h"

namespace accelopt::eval {
namespace {

class ParallelReference : public ::testing::TestWithParam<std::string> {};

// The checked calls' slots, computed by four double and four float32
// processes at once (the constructor, then AddSlots with all of them), equal
// those of a single process per evaluation (AddSlots with one call each).
TEST_P(ParallelReference, SharedAmongProcessesEqualsOneProcess) {
  auto task = suite::LoadTask(std::string(ACCELOPT_SOURCE_DIR) + "/suite/" + GetParam());
  ASSERT_TRUE(task) << task.error().message;
  auto bound = suite::Bind(*task, "test");
  ASSERT_TRUE(bound) << bound.error().message;
  testing::TempDir scratch;
  ReferenceOptions options = cpu::ReferenceOptionsOf(testing::TestTargetOptions(scratch));
  options.processes = 8;
  const int checked = 5;
  Expected expected(*bound, options, scratch.path(), 3, 1.0, checked);
  ASSERT_TRUE(expected.status()) << expected.status().error().message;
  ASSERT_EQ(ReferenceProcesses(*bound, options, 3 + checked), 8);

  std::vector<CheckedInputs> calls;
  for (int k = 0; k < checked; ++k) calls.push_back(expected.checked(k));
  auto together = expected.AddSlots(*bound, calls);
  ASSERT_TRUE(together) << together.error().message;
  std::vector<size_t> alone;
  for (int k = 0; k < checked; ++k) {
    auto slot = expected.AddSlots(*bound, {calls[k]});
    ASSERT_TRUE(slot) << slot.error().message;
    alone.push_back(*slot);
  }
  const long n = ElementsPerSet(bound->outputs);
  for (int k = 0; k < checked; ++k) {
    const size_t first = expected.seeds() + k, second = *together + k, single = alone[k];
    const std::vector<double> want(expected.reference(single), expected.reference(single) + n);
    EXPECT_EQ(std::vector<double>(expected.reference(first), expected.reference(first) + n), want) << k;
    EXPECT_EQ(std::vector<double>(expected.reference(second), expected.reference(second) + n), want) << k;
    ASSERT_NE(expected.reference32(single), nullptr) << expected.float32_missing();
    const std::vector<float> want32(expected.reference32(single), expected.reference32(single) + n);
    EXPECT_EQ(std::vector<float>(expected.reference32(first), expected.reference32(first) + n), want32) << k;
    EXPECT_EQ(std::vector<float>(expected.reference32(second), expected.reference32(second) + n), want32) << k;
    for (size_t o = 0; o < bound->outputs.size(); ++o) {
      EXPECT_EQ(expected.floor(first, o), expected.floor(single, o));
      EXPECT_EQ(expected.floor(second, o), expected.floor(single, o));
    }
  }
  // Different seeds, different outputs: the comparison above compares something.
  EXPECT_NE(std::vector<double>(expected.reference(alone[0]), expected.reference(alone[0]) + n),
            std::vector<double>(expected.reference(alone[1]), expected.reference(alone[1]) + n));
}

INSTANTIATE_TEST_SUITE_P(Tasks, ParallelReference,
                         ::testing::Values("matmul", "bmm_softmax", "gqa_paged_prefill_causal_h32_kv4_d128_ps1"));

// One process per core it may run on, two at least (double and float32),
// two per slot at most; as many as asked when asked.
TEST(ReferenceProcesses, BoundedByCoresAndSlots) {
  auto task = suite::LoadTask(std::string(ACCELOPT_SOURCE_DIR) + "/suite/silu");
  ASSERT_TRUE(task) << task.error().message;
  auto bound = suite::Bind(*task, "test");
  ASSERT_TRUE(bound) << bound.error().message;
  ReferenceOptions options;
  options.run.cpus = {0};
  EXPECT_EQ(ReferenceProcesses(*bound, options, 6), 2);
  options.run.cpus = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9};
  EXPECT_EQ(ReferenceProcesses(*bound, options, 6), 10);
  EXPECT_EQ(ReferenceProcesses(*bound, options, 3), 6);
  EXPECT_EQ(ReferenceProcesses(*bound, options, 1), 2);
  options.processes = 16;
  EXPECT_EQ(ReferenceProcesses(*bound, options, 6), 12);
  options.processes = 1;
  EXPECT_EQ(ReferenceProcesses(*bound, options, 6), 2);
}

// By hand (--gtest_also_run_disabled_tests): how long the inputs and the
// reference of each task with a baseline.cu take at its gpu shape, with the
// cuda target's 3 seeds and 3 checked calls. ACCELOPT_TIMING_TASKS (a comma
// list) picks tasks; ACCELOPT_TIMING_PROCESSES sets ReferenceOptions::processes.
TEST(ReferenceTiming, DISABLED_EveryCudaTaskAtItsGpuShape) {
  auto tasks = suite::LoadSuite(std::string(ACCELOPT_SOURCE_DIR) + "/suite");
  ASSERT_TRUE(tasks) << tasks.error().message;
  const char* only = std::getenv("ACCELOPT_TIMING_TASKS");
  const char* processes = std::getenv("ACCELOPT_TIMING_PROCESSES");
  for (const suite::Task& task : *tasks) {
    if (!task.shapes.count("gpu")) continue;
    if (only && ("," + std::string(only) + ",").find("," + task.name + ",") == std::string::npos) continue;
    auto bound = suite::Bind(task, "gpu");
    ASSERT_TRUE(bound) << bound.error().message;
    testing::TempDir scratch;
    ReferenceOptions options = cpu::ReferenceOptionsOf(testing::TestTargetOptions(scratch));
    options.run.wall_seconds = 1200;
    if (processes) options.processes = std::atoi(processes);
    const auto start = std::chrono::steady_clock::now();
    Expected expected(*bound, options, scratch.path(), 3, 1.0, 3);
    const double total = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    EXPECT_TRUE(expected.status()) << task.name << ": " << expected.status().error().message;
    std::printf("%-42s processes %2d  inputs %6.2f s  reference %7.2f s  total %7.2f s\n", task.name.c_str(),
                ReferenceProcesses(*bound, options, 6), expected.inputs_seconds(), expected.reference_seconds(), total);
    std::fflush(stdout);
  }
}

}  // namespace
}  // namespace accelopt::eval
