#include <gtest/gtest.h>

#include <algorithm>
#include <map>

#include "service/evaluator.h"
#include "testing/scoped_env.h"
#include "testing/sleep_target.h"
#include "testing/temp_dir.h"

namespace accelopt::service {
namespace {

const std::string kScaleTask = std::string(ACCELOPT_SOURCE_DIR) + "/tests/fixtures/scale";

class LocalEvaluatorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto task = suite::LoadTask(kScaleTask);
    ASSERT_TRUE(task.ok()) << task.error().message;
    auto spec = TaskSpecOf(*task, "test");
    ASSERT_TRUE(spec.ok()) << spec.error().message;
    spec_ = *spec;
  }

  EvalJob Job(const std::string& source, JobKind kind = JobKind::kEvaluate) const {
    EvalJob job;
    job.kind = kind;
    job.task = spec_;
    job.target = "sleep";
    job.machine_class = "sleep-machine";
    job.sources = {{"candidate", source, source, {}}};
    if (kind == JobKind::kCompare) job.sources.push_back({"child", "sleep 0.01", "child", {}});
    return job;
  }

  LocalEvaluatorOptions Options(testing::SleepTarget& target) const {
    LocalEvaluatorOptions options;
    options.target = &target;
    options.device = "test-device";
    options.worker = "here";
    return options;
  }

  testing::TempDir locks_;
  testing::ScopedEnv lock_dir_{"ACCELOPT_LOCK_DIR", locks_.path()};
  TaskSpec spec_;
};

TEST_F(LocalEvaluatorTest, EachJobGetsItsOutcomeAndABatchIsBuiltTogether) {
  testing::SleepTarget target;
  auto evaluator = MakeLocalEvaluator(Options(target));
  auto futures = evaluator->Submit({Job("sleep 0.01"), Job("sleep 0.02"), Job("not a sleep")});
  ASSERT_EQ(futures.size(), 3u);
  std::vector<Result<EvalOutcome>> outcomes;
  for (auto& f : futures) outcomes.push_back(f.get());
  for (auto& o : outcomes) ASSERT_TRUE(o.ok()) << o.error().message;
  EXPECT_EQ(outcomes[0]->profiles.at(0).status, Verdict::kOk);
  ASSERT_TRUE(outcomes[1]->profiles.at(0).latency.has_value());
  EXPECT_GE(outcomes[1]->profiles.at(0).latency->median_s, 0.02);
  EXPECT_EQ(outcomes[2]->profiles.at(0).status, Verdict::kCompileError) << "a verdict became an engine error";
  EXPECT_EQ(outcomes[0]->worker, "here");
  EXPECT_EQ(outcomes[0]->device, "test-device");
  EXPECT_EQ(outcomes[0]->machine, "sleep-machine");
  EXPECT_EQ(target.build_calls(), 1) << "jobs of one task and shape submitted together were not built as one batch";
}

TEST_F(LocalEvaluatorTest, ComparesTwoSourcesSideBySide) {
  testing::SleepTarget target;
  auto evaluator = MakeLocalEvaluator(Options(target));
  auto outcome = evaluator->Submit({Job("sleep 0.03", JobKind::kCompare)}).front().get();
  ASSERT_TRUE(outcome.ok()) << outcome.error().message;
  ASSERT_EQ(outcome->profiles.size(), 2u);
  ASSERT_TRUE(outcome->speedup.has_value());
  EXPECT_GT(outcome->speedup->speedup, 1.5);
}

TEST_F(LocalEvaluatorTest, ATaskThatCannotLoadIsAnErrorOfTheEngineForItsJobOnly) {
  testing::SleepTarget target;
  auto evaluator = MakeLocalEvaluator(Options(target));
  EvalJob broken = Job("sleep 0");
  broken.task.origin = "";
  broken.task.files["task.yaml"] = "name: [not a task";
  broken.task.digest = DigestOfFiles(broken.task.files);
  auto futures = evaluator->Submit({broken, Job("sleep 0")});
  auto first = futures[0].get();
  ASSERT_FALSE(first.ok());
  EXPECT_NE(first.error().message.find("scale"), std::string::npos) << first.error().message;
  EXPECT_TRUE(futures[1].get().ok());
}

TEST_F(LocalEvaluatorTest, AnUnknownTargetIsAnError) {
  LocalEvaluatorOptions options;
  options.device = "test-device";
  options.make_target = [](const std::string& name, const targets::TargetSettings&)
      -> Result<std::unique_ptr<targets::Target>> { return Error{"no target named " + name}; };
  auto evaluator = MakeLocalEvaluator(options);
  auto outcome = evaluator->Submit({Job("sleep 0")}).front().get();
  ASSERT_FALSE(outcome.ok());
  EXPECT_NE(outcome.error().message.find("sleep"), std::string::npos);
}

// A target whose hardware profile is the one it was given, else one it "calibrates".
struct ProfiledSleepTarget : testing::SleepTarget {
  explicit ProfiledSleepTarget(Json given) : hardware(given.is_null() ? Json{{"calibrated", "here"}} : given) {}
  Json Hardware() const override { return hardware; }
  Json hardware;
};

TEST_F(LocalEvaluatorTest, AJobNamingNoProfileScoresAgainstTheRecordedOneOrRecordsItsOwn) {
  std::map<std::string, Json> store;  // target -> profile, as a worker's store keeps them
  std::vector<Json> made_with;
  LocalEvaluatorOptions options;
  options.device = "test-device";
  options.make_target = [&](const std::string&, const targets::TargetSettings& settings)
      -> Result<std::unique_ptr<targets::Target>> {
    made_with.push_back(settings.hardware);
    return std::unique_ptr<targets::Target>(new ProfiledSleepTarget(settings.hardware));
  };
  options.recorded_hardware = [&](const std::string& target) { return store.count(target) ? store[target] : Json(); };
  options.record_hardware = [&](const std::string& target, const Json& hardware) { store[target] = hardware; };
  {
    auto evaluator = MakeLocalEvaluator(options);
    ASSERT_TRUE(evaluator->Submit({Job("sleep 0")}).front().get().ok());
  }
  ASSERT_EQ(store.count("sleep"), 1u) << "the profile the first target made was not recorded";
  EXPECT_EQ(store["sleep"]["calibrated"], "here");
  store["sleep"] = Json{{"recorded", "in the store"}};
  {
    auto evaluator = MakeLocalEvaluator(options);
    ASSERT_TRUE(evaluator->Submit({Job("sleep 0")}).front().get().ok());
  }
  ASSERT_EQ(made_with.size(), 2u);
  EXPECT_EQ(made_with[1]["recorded"], "in the store") << "a later worker did not score against the recorded profile";
  // A job that names its profile scores against that one, and records nothing.
  EvalJob named = Job("sleep 0");
  named.settings = {{"hardware", {{"named", "by the run"}}}};
  {
    auto evaluator = MakeLocalEvaluator(options);
    ASSERT_TRUE(evaluator->Submit({named}).front().get().ok());
  }
  EXPECT_EQ(made_with[2]["named"], "by the run");
  EXPECT_EQ(store["sleep"]["recorded"], "in the store");
}

// Two evaluators (as two processes would be) on one device: their timed runs
// take turns under the device's machine-wide lock, never overlapping.
TEST_F(LocalEvaluatorTest, TwoEvaluatorsOnOneDeviceNeverRunAtOnce) {
  testing::SleepTarget target;
  auto first = MakeLocalEvaluator(Options(target));
  auto second = MakeLocalEvaluator(Options(target));
  std::vector<OutcomeFuture> futures;
  for (int i = 0; i < 4; ++i) {
    for (auto* e : {first.get(), second.get()}) {
      auto f = e->Submit({Job("sleep 0.05")});
      futures.push_back(std::move(f.front()));
    }
  }
  for (auto& f : futures) ASSERT_TRUE(f.get().ok());
  auto runs = target.runs();
  ASSERT_EQ(runs.size(), 8u);
  std::sort(runs.begin(), runs.end(), [](auto& a, auto& b) { return a.begin < b.begin; });
  for (size_t i = 1; i < runs.size(); ++i) EXPECT_LE(runs[i - 1].end, runs[i].begin) << "runs " << i - 1 << " and " << i << " overlapped";
}

TEST_F(LocalEvaluatorTest, OnDifferentDevicesTheyRunAtOnce) {
  testing::SleepTarget target;
  auto options = Options(target);
  auto first = MakeLocalEvaluator(options);
  options.device = "another-device";
  auto second = MakeLocalEvaluator(options);
  auto a = first->Submit({Job("sleep 0.3")});
  auto b = second->Submit({Job("sleep 0.3")});
  ASSERT_TRUE(a.front().get().ok());
  ASSERT_TRUE(b.front().get().ok());
  auto runs = target.runs();
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_LT(std::max(runs[0].begin, runs[1].begin), std::min(runs[0].end, runs[1].end))
      << "two devices did not measure at once";
}

}  // namespace
}  // namespace accelopt::service
