#include "service/eval_job.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "testing/temp_dir.h"

namespace accelopt::service {
namespace {

namespace fs = std::filesystem;

const std::string kScaleTask = std::string(ACCELOPT_SOURCE_DIR) + "/tests/fixtures/scale";

suite::Task LoadOrDie(const std::string& dir) {
  auto task = suite::LoadTask(dir);
  EXPECT_TRUE(task.ok()) << task.error().message;
  return *task;
}

EvalJob JobOf(const suite::Task& task, const std::string& code) {
  auto spec = TaskSpecOf(task, "test");
  EXPECT_TRUE(spec.ok()) << spec.error().message;
  EvalJob job;
  job.task = *spec;
  job.sources = {{"candidate", code, "h-" + code, {"openblas"}}};
  job.target = "toy";
  job.settings = {{"seeds", 2}};
  job.machine_class = "fingerprint";
  return job;
}

TEST(EvalJob, RoundTripsThroughJsonWithTheSameKey) {
  const suite::Task task = LoadOrDie(kScaleTask);
  const EvalJob job = JobOf(task, "void kernel() {}");
  auto back = EvalJob::FromJson(Json::parse(DumpJson(job.ToJson())));
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(back->Key(), job.Key());
  EXPECT_EQ(back->task.files, job.task.files);
  EXPECT_EQ(back->sources[0].libraries, std::vector<std::string>{"openblas"});
  EXPECT_EQ(back->settings, job.settings);
  EXPECT_EQ(job.task.parameters.size(), task.shapes.at("test").size());
}

TEST(EvalJob, TheKeyNamesTheWorkAndWhereItRuns) {
  const suite::Task task = LoadOrDie(kScaleTask);
  EvalJob a = JobOf(task, "a");
  EXPECT_EQ(a.Key(), JobOf(task, "a").Key());
  EXPECT_NE(a.Key(), JobOf(task, "b").Key());
  EvalJob elsewhere = a;
  elsewhere.machine_class = "another";
  EXPECT_NE(a.Key(), elsewhere.Key());
  EvalJob compare = a;
  compare.kind = JobKind::kCompare;
  EXPECT_NE(a.Key(), compare.Key());
  EXPECT_EQ(a.Key().rfind("evaluate/scale@", 0), 0u) << a.Key();
}

TEST(EvalJob, RefusesWhatItCannotTrust) {
  const suite::Task task = LoadOrDie(kScaleTask);
  Json j = JobOf(task, "a").ToJson();
  Json newer = j;
  newer["version"] = kJobVersion + 1;
  auto refused = EvalJob::FromJson(newer);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.error().message.find("version"), std::string::npos);

  Json changed = j;
  changed["task"]["files"]["reference.cpp"] = "// changed on the way";
  EXPECT_FALSE(EvalJob::FromJson(changed).ok()) << "a task whose files do not match their digest was read";

  Json missing = j;
  missing.erase("target");
  auto no_target = EvalJob::FromJson(missing);
  ASSERT_FALSE(no_target.ok());
  EXPECT_NE(no_target.error().message.find("target"), std::string::npos) << no_target.error().message;

  Json two = j;
  two["sources"].push_back(two["sources"][0]);
  EXPECT_FALSE(EvalJob::FromJson(two).ok()) << "an evaluate job with two sources";
}

TEST(EvalJob, OutcomesRoundTrip) {
  EvalOutcome out;
  Profile p;
  p.task = "scale";
  p.status = Verdict::kWrongAnswer;
  p.message = "off by one";
  out.profiles = {p, p};
  out.speedup = PairedSpeedup{1.5, 1.4, 1.6, 30};
  out.worker = "w1";
  out.device = "dev0";
  out.seconds = 2.5;
  auto back = EvalOutcome::FromJson(out.ToJson());
  ASSERT_TRUE(back.ok()) << back.error().message;
  ASSERT_EQ(back->profiles.size(), 2u);
  EXPECT_EQ(back->profiles[1].status, Verdict::kWrongAnswer);
  ASSERT_TRUE(back->speedup.has_value());
  EXPECT_DOUBLE_EQ(back->speedup->ci_low, 1.4);
  EXPECT_EQ(back->worker, "w1");
}

TEST(EvalJob, SettingsTravelAsData) {
  targets::TargetSettings s;
  s.seeds = 5;
  s.timeout = 12;
  s.options = {{"cpus", {1}}, {"evaluator", "python3 eval.py"}};
  s.data_dir = "/somewhere/only/here";
  targets::TargetSettings there;
  there.data_dir = "/the/workers/own";
  ASSERT_TRUE(ApplySettings(SettingsToJson(s), there).ok());
  EXPECT_EQ(there.seeds, 5);
  EXPECT_EQ(there.timeout, 12);
  EXPECT_EQ(there.options["cpus"], Json::array({1}));
  EXPECT_EQ(there.options["evaluator"], "python3 eval.py");
  EXPECT_EQ(there.data_dir, "/the/workers/own") << "a folder of the engine's machine travelled with the job";
  EXPECT_FALSE(ApplySettings(Json{{"seeds", "three"}}, there).ok());
}

// Where its folder is gone (another machine), the task is loaded from the files the job carries.
TEST(EvalJob, ATaskLoadsFromItsFilesWhereItsFolderIsGone) {
  testing::TempDir dir, cache;
  fs::copy(kScaleTask, dir.path() + "/scale");
  const suite::Task task = LoadOrDie(dir.path() + "/scale");
  EvalJob job = JobOf(task, "a");
  fs::remove_all(dir.path() + "/scale");
  auto loaded = LoadTaskSpec(job.task, cache.path());
  ASSERT_TRUE(loaded.ok()) << loaded.error().message;
  EXPECT_EQ(loaded->name, "scale");
  EXPECT_EQ(loaded->dir.rfind(cache.path(), 0), 0u) << loaded->dir;
  EXPECT_EQ(loaded->shapes, task.shapes);

  job.task.files["../escape.txt"] = "x";
  EXPECT_FALSE(LoadTaskSpec(job.task, cache.path()).ok()) << "a file outside the task folder was written";
}

TEST(EvalJob, ATaskFolderTooLargeToCarryIsAnError) {
  const suite::Task task = LoadOrDie(kScaleTask);
  auto spec = TaskSpecOf(task, "test", /*max_bytes=*/16);
  ASSERT_FALSE(spec.ok());
  EXPECT_NE(spec.error().message.find(kScaleTask), std::string::npos) << spec.error().message;
  EXPECT_FALSE(TaskSpecOf(task, "no-such-shape").ok());
}

}  // namespace
}  // namespace accelopt::service
