// A target of the tests' own (toy_target.h), registered with one line beside
// its definition: the registry lists it, builds it, and it evaluates and
// compares kernels through the Target interface like any built-in target.

#include "tests/toy_target/toy_target.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace accelopt::toy {
namespace {

suite::Task DoubleTask() {
  suite::Task task;
  task.name = "double";
  task.inputs.resize(1);
  task.outputs.resize(1);
  return task;
}

std::unique_ptr<targets::Target> MakeToy(const targets::TargetSettings& settings = {}) {
  auto target = targets::MakeTarget(kToyTarget, settings);
  EXPECT_TRUE(target) << target.error().message;
  return target ? std::move(*target) : nullptr;
}

TEST(ToyTarget, OneRegistrationLineListsItAndTheRegistryMakesIt) {
  const auto& kinds = targets::RegisteredTargets();
  EXPECT_TRUE(std::any_of(kinds.begin(), kinds.end(), [](const auto& k) { return k.name == kToyTarget; }));
  const targets::TargetKind* kind = targets::FindTarget(kToyTarget);
  ASSERT_NE(kind, nullptr);
  EXPECT_EQ(targets::WhyUnavailable(*kind, {}), "");
  auto target = MakeToy();
  ASSERT_TRUE(target);
  EXPECT_EQ(target->name(), kToyTarget);
  EXPECT_EQ(target->Describe().file_extension, ".toy");
  // A name is registered once.
  EXPECT_FALSE(targets::RegisterTarget(Registration()));
}

TEST(ToyTarget, EvaluatesThroughTheTargetInterface) {
  auto target = MakeToy();
  ASSERT_TRUE(target);
  const suite::Task task = DoubleTask();
  ASSERT_TRUE(target->Supports(task));
  const targets::EvalRequest requests[] = {{&task, "bench", {"scale 2\ncost_us 40\n", "right", {}}},
                                           {&task, "bench", {"scale 3\ncost_us 10\n", "wrong", {}}},
                                           {&task, "bench", {"scale two\n", "broken", {}}}};
  std::vector<size_t> told;
  auto results = target->Evaluate(requests, [&](size_t k, const Result<Profile>&) { told.push_back(k); });
  ASSERT_EQ(results.size(), 3u);
  for (const auto& r : results) ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(results[0]->status, Verdict::kOk);
  EXPECT_EQ(results[0]->target, kToyTarget);
  ASSERT_TRUE(results[0]->latency);
  EXPECT_DOUBLE_EQ(results[0]->latency->median_s, 40e-6);
  EXPECT_EQ(results[1]->status, Verdict::kWrongAnswer);
  EXPECT_EQ(results[2]->status, Verdict::kCompileError);
  EXPECT_NE(results[2]->message.find("line 1"), std::string::npos) << results[2]->message;
  EXPECT_EQ(told.size(), 3u);
}

TEST(ToyTarget, ComparesSideBySide) {
  auto target = MakeToy();
  ASSERT_TRUE(target);
  ASSERT_TRUE(target->ComparesSideBySide());
  const suite::Task task = DoubleTask();
  auto paired = target->Compare({&task, "bench", {"scale 2\ncost_us 40\n", "parent", {}}},
                                {&task, "bench", {"scale 2\ncost_us 10\n", "child", {}}});
  ASSERT_TRUE(paired) << paired.error().message;
  ASSERT_TRUE(paired->speedup);
  EXPECT_DOUBLE_EQ(paired->speedup->speedup, 4);
}

TEST(ToyTarget, TakesItsOwnSettingsAsData) {
  targets::TargetSettings settings;
  settings.options = {{"noise_us", 5.0}, {"another_targets_setting", true}};
  auto target = MakeToy(settings);
  ASSERT_TRUE(target);
  const suite::Task task = DoubleTask();
  const targets::EvalRequest request{&task, "bench", {"scale 2\ncost_us 40\n", "right", {}}};
  auto result = target->Evaluate(std::span(&request, 1));
  ASSERT_TRUE(result[0]) << result[0].error().message;
  EXPECT_DOUBLE_EQ(result[0]->latency->median_s, 45e-6);

  settings.options = {{"noise_us", "loud"}};
  auto refused = targets::MakeTarget(kToyTarget, settings);
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().message.find("'noise_us' must be of type number"), std::string::npos)
      << refused.error().message;
}

TEST(ToyTarget, ItsCalibratorIsReachedThroughTheRegistry) {
  const targets::TargetKind* kind = targets::FindTarget(kToyTarget);
  ASSERT_NE(kind, nullptr);
  ASSERT_TRUE(kind->calibrator);
  auto report = kind->calibrator()->Calibrate({});
  ASSERT_TRUE(report) << report.error().message;
  EXPECT_FALSE(report->measured);
  EXPECT_DOUBLE_EQ(report->json["bandwidth_gbs"].get<double>(), 1.0);
  targets::CalibrateOptions unknown;
  unknown.settings = {{"fma_units", 2}};
  EXPECT_FALSE(kind->calibrator()->Calibrate(unknown));
}

}  // namespace
}  // namespace accelopt::toy
