// Build and Run, the two halves of an evaluation (targets/target.h): what a
// build alone finds, and that running what was built measures it.

#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <vector>

#include "core/json_io.h"
#include "suite/task.h"
#include "testing/cpu_test_target.h"

namespace accelopt {
namespace {

const std::string kScaleTask = std::string(ACCELOPT_SOURCE_DIR) + "/tests/fixtures/scale";

std::vector<targets::Built*> Pointers(std::vector<Result<std::unique_ptr<targets::Built>>>& built) {
  std::vector<targets::Built*> out;
  for (auto& b : built) {
    EXPECT_TRUE(b) << b.error().message;
    if (b) out.push_back(b->get());
  }
  return out;
}

// The scale fixture's task and baseline, and a cpu target for tests.
class BuildRun : public ::testing::Test {
 protected:
  void SetUp() override {
    auto loaded = suite::LoadTask(kScaleTask);
    ASSERT_TRUE(loaded) << loaded.error().message;
    task_ = std::move(*loaded);
    auto source = ReadFile(task_.baseline_path(".cpp"));
    ASSERT_TRUE(source);
    baseline_ = *source;
    target = cpu::MakeCpuTarget(testing::TestTargetOptions(scratch_));
  }
  testing::TempDir scratch_;
  suite::Task task_;
  const suite::Task* task = &task_;  // as requests name it
  std::string baseline_;
  std::unique_ptr<targets::Target> target;
};

// The cpu target: a build that fails is the candidate's verdict as soon as it
// is built, before anything runs; one that builds is measured by Run, and the
// candidates of one Build share the batch's reference outputs.
TEST_F(BuildRun, TheCpuTargetBuildsFirstAndRunsWhatItBuilt) {
  const targets::EvalRequest requests[] = {{task, "test", {baseline_, "baseline", {}}},
                                           {task, "test", {"this is not C++", "broken", {}}},
                                           {task, "test", {baseline_ + "\n// again\n", "again", {}}}};
  auto built = target->Build(requests);
  ASSERT_EQ(built.size(), 3u);
  auto pointers = Pointers(built);
  ASSERT_EQ(pointers.size(), 3u);
  EXPECT_TRUE(pointers[0]->ok());
  EXPECT_GT(pointers[0]->BuildProfile().compile_seconds, 0);
  EXPECT_FALSE(pointers[0]->BuildProfile().latency);  // built, not yet run
  EXPECT_FALSE(pointers[1]->ok());
  EXPECT_EQ(pointers[1]->BuildProfile().status, Verdict::kCompileError);
  EXPECT_FALSE(pointers[1]->BuildProfile().compile_log.empty());

  std::vector<size_t> told;
  auto ran = target->Run(pointers, [&](size_t k, const Result<Profile>&) { told.push_back(k); });
  ASSERT_EQ(ran.size(), 3u);
  EXPECT_EQ(told, (std::vector<size_t>{0, 1, 2}));
  for (size_t k : {0u, 2u}) {
    ASSERT_TRUE(ran[k]) << ran[k].error().message;
    EXPECT_EQ(ran[k]->status, Verdict::kOk) << ran[k]->message;
    EXPECT_TRUE(ran[k]->latency);
  }
  ASSERT_TRUE(ran[1]);
  EXPECT_EQ(ran[1]->status, Verdict::kCompileError);
  // The reference ran once for the batch: its time is counted against the first candidate only.
  EXPECT_TRUE(ran[0]->phase_seconds.count("reference"));
  EXPECT_FALSE(ran[2]->phase_seconds.count("reference"));
}

// What one Build made for two shapes runs in any order: the batches share
// the device's lock instead of waiting for each other.
TEST_F(BuildRun, TwoShapesBuiltTogetherRunInEitherOrder) {
  const targets::EvalRequest requests[] = {{task, "test", {baseline_, "a", {}}}, {task, "bench", {baseline_, "b", {}}}};
  auto built = target->Build(requests);
  auto pointers = Pointers(built);
  ASSERT_EQ(pointers.size(), 2u);
  targets::Built* reversed[] = {pointers[1], pointers[0]};
  auto ran = target->Run(reversed, {});
  for (const auto& r : ran) {
    ASSERT_TRUE(r) << r.error().message;
    EXPECT_EQ(r->status, Verdict::kOk) << r->message;
  }
  EXPECT_EQ(ran[0]->shape, "bench");
}

// Evaluate is Build then Run: an engine error of one build (here a shape the
// task does not have) is that request's result, and the others are measured.
TEST_F(BuildRun, EvaluateReportsEachRequestInItsPlace) {
  const targets::EvalRequest requests[] = {{task, "nosuch", {baseline_, "baseline", {}}},
                                           {task, "test", {baseline_, "baseline", {}}}};
  std::vector<size_t> told;
  auto results = target->Evaluate(requests, [&](size_t k, const Result<Profile>&) { told.push_back(k); });
  ASSERT_EQ(results.size(), 2u);
  EXPECT_FALSE(results[0]);
  EXPECT_NE(results[0].error().message.find("nosuch"), std::string::npos) << results[0].error().message;
  ASSERT_TRUE(results[1]) << results[1].error().message;
  EXPECT_EQ(results[1]->status, Verdict::kOk);
  std::sort(told.begin(), told.end());
  EXPECT_EQ(told, (std::vector<size_t>{0, 1}));
}

}  // namespace
}  // namespace accelopt
