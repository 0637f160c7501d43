#include "report/report_data.h"

#include <gtest/gtest.h>

#include "testing/temp_dir.h"

namespace accelopt::report {
namespace {

// An ok profile scored at `percent` of peak with a median of `seconds`.
Profile Scored(double percent, double seconds, bool disturbed = false) {
  Profile p;
  p.status = Verdict::kOk;
  p.latency = LatencyStats{seconds, seconds, seconds, seconds, 0, 10, 1};
  p.percent_of_peak = percent;
  p.scored_against = ScoredAgainst{100, 200, 50, "test-machine", "2026-01-01T00:00:00Z"};
  p.disturbed = disturbed;
  p.other_load = disturbed ? 0.6 : 0;
  return p;
}

PairedSpeedup Speedup(double estimate, double low, double high, bool disturbed = false) {
  PairedSpeedup s;
  s.speedup = estimate;
  s.ci_low = low;
  s.ci_high = high;
  s.pairs = 20;
  s.coverage = 0.95;
  s.disturbed = disturbed;
  return s;
}

class RunReportDataTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto opened = store::OpenSqliteStore({.path = dir_.path() + "/accelopt.db"});
    ASSERT_TRUE(opened.ok()) << opened.error().message;
    store_ = std::move(*opened);
    Json config = {{"tasks", {"silu", "matmul"}},
                   {"shape", "test"},
                   {"eval", {{"target", "cpu"}}},
                   {"hardware", {{"bandwidth_gbs", 100.0}, {"fingerprint", "test-machine"}}}};
    auto run = store_->CreateRun(config);
    ASSERT_TRUE(run.ok());
    run_ = *run;
  }

  int64_t Add(const std::string& task, int iteration, int64_t parent, const std::string& plan, const std::string& code,
              Profile profile) {
    Candidate c;
    c.iteration = iteration;
    c.parent_id = parent;
    c.plan = plan;
    c.code = code;
    c.hash = "hash-of-" + code;
    c.profile = std::move(profile);
    auto id = store_->AddCandidate({run_, task, c});
    EXPECT_TRUE(id.ok());
    return id.ok() ? *id : 0;
  }

  testing::TempDir dir_;
  std::unique_ptr<store::Store> store_;
  int64_t run_ = 0;
};

TEST_F(RunReportDataTest, AnUnknownRunIsAnErrorNamingIt) {
  const Json data = RunReportData(*store_, 99);
  ASSERT_TRUE(data.contains("error"));
  EXPECT_NE(data["error"].get<std::string>().find("99"), std::string::npos) << data;
  EXPECT_EQ(data.size(), 1u);
}

TEST_F(RunReportDataTest, TasksCandidatesLineageIterationsAndSuite) {
  const int64_t base = Add("silu", 0, 0, "", "base", Scored(2, 4e-3));
  const int64_t fast = Add("silu", 1, base, "Vectorize\nwith AVX", "fast", Scored(4, 2e-3));
  ASSERT_TRUE(store_->SetVsParent(fast, Speedup(2, 1.9, 2.1)).ok());
  Profile broken;
  broken.status = Verdict::kCompileError;
  broken.compile_log = "error: </script>";
  const int64_t failed = Add("silu", 1, base, "Unroll", "broken", broken);
  const int64_t again = Add("silu", 2, fast, "Reorder", "fast", Scored(4, 2e-3, /*disturbed=*/true));
  ASSERT_TRUE(store_->SetVsParent(again, Speedup(1, 0.9, 1.1, /*disturbed=*/true)).ok());
  const int64_t mm = Add("matmul", 0, 0, "", "mm", Scored(1, 1e-2));

  const Json data = RunReportData(*store_, run_);
  ASSERT_FALSE(data.contains("error")) << data;
  EXPECT_EQ(data["schema"], kReportSchema);
  EXPECT_EQ(data["run"]["target"], "cpu");
  EXPECT_EQ(data["hardware"]["target"], "cpu");
  ASSERT_EQ(data["tasks"].size(), 2u);
  const Json& silu = data["tasks"][0];
  EXPECT_EQ(silu["name"], "silu");  // the run's order, not the alphabet's
  EXPECT_TRUE(silu["scored"].get<bool>());
  EXPECT_EQ(silu["baseline_id"], base);
  EXPECT_EQ(silu["best_id"], fast);
  EXPECT_DOUBLE_EQ(silu["best_percent"].get<double>(), 4);
  ASSERT_EQ(silu["candidates"].size(), 4u);
  const Json& c_fast = silu["candidates"][1];
  EXPECT_EQ(c_fast["plan_title"], "Vectorize");
  EXPECT_EQ(c_fast["parent"], base);
  EXPECT_TRUE(c_fast["best_lineage"].get<bool>());
  EXPECT_DOUBLE_EQ(c_fast["vs_parent"]["ci_low"].get<double>(), 1.9);
  const Json& c_failed = silu["candidates"][2];
  EXPECT_EQ(c_failed["status"], "compile_error");
  EXPECT_TRUE(c_failed["percent_of_peak"].is_null());
  EXPECT_EQ(c_failed["log"], "error: </script>");
  EXPECT_FALSE(c_failed["best_lineage"].get<bool>());
  EXPECT_EQ(silu["candidates"][3]["duplicate_of"], fast);
  EXPECT_TRUE(silu["candidates"][0]["duplicate_of"].is_null());

  // Per iteration: the baseline, then the faster child (with its step's interval), which stays best.
  ASSERT_EQ(silu["iterations"].size(), 3u);
  EXPECT_EQ(silu["iterations"][0]["best_id"], base);
  EXPECT_TRUE(silu["iterations"][0]["step"].is_null());
  EXPECT_EQ(silu["iterations"][1]["best_id"], fast);
  EXPECT_DOUBLE_EQ(silu["iterations"][1]["step"]["parent_percent"].get<double>(), 2);
  EXPECT_DOUBLE_EQ(silu["iterations"][1]["step"]["ci_high"].get<double>(), 2.1);
  EXPECT_EQ(silu["iterations"][2]["best_id"], fast);

  // Both kinds of disturbed measurement of candidate `again`.
  ASSERT_EQ(data["disturbed"].size(), 2u);
  EXPECT_EQ(data["disturbed"][0]["candidate"], again);
  EXPECT_EQ(data["disturbed"][0]["kind"], "evaluation");
  EXPECT_EQ(data["disturbed"][1]["kind"], "comparison");

  EXPECT_EQ(data["tasks"][1]["best_id"], mm);
  EXPECT_NEAR(data["suite"]["geomean_percent"].get<double>(), 2, 1e-9);  // sqrt(4 x 1)
  EXPECT_NEAR(data["suite"]["baseline_geomean_percent"].get<double>(), std::sqrt(2.0), 1e-9);
  EXPECT_NEAR(data["suite"]["geomean_speedup"].get<double>(), std::sqrt(2.0), 1e-9);  // sqrt(2 x 1)
  (void)failed;
}

TEST_F(RunReportDataTest, LessonsOfThisRunAndCallsPerRole) {
  const int64_t base = Add("silu", 0, 0, "", "base", Scored(2, 4e-3));
  const int64_t fast = Add("silu", 1, base, "Vectorize", "fast", Scored(4, 2e-3));
  Lesson lesson;
  lesson.title = "Vectorize the loop";
  lesson.text = "**Vectorize the loop** ...";
  lesson.speedup = 2;
  lesson.low = 1.9;
  lesson.high = 2.1;
  lesson.tags.task = "silu";
  ASSERT_TRUE(store_->AddLesson({lesson, "demo", run_, base, fast}).ok());
  auto other = store_->CreateRun(Json::object());
  ASSERT_TRUE(other.ok());
  ASSERT_TRUE(store_->AddLesson({lesson, "demo", *other, base, fast}).ok());  // another run's
  auto call = [&](const std::string& key, const std::string& role, const std::string& at, Json cost) {
    Json record = {{"agent_role", role},
                   {"task", "silu"},
                   {"started_at", at},
                   {"usage", {{"input_tokens", 100}, {"output_tokens", 10}}},
                   {"cost_usd", cost},
                   {"error", ""}};
    ASSERT_TRUE(store_->PutLlmCall(key, run_, role, record).ok());
  };
  call("a", "planner", "2026-01-01T00:00:00Z", 0.5);
  call("b", "executor", "2026-01-01T00:00:30Z", nullptr);
  call("c", "planner", "2026-01-01T00:01:00Z", 0.25);

  const Json data = RunReportData(*store_, run_);
  ASSERT_EQ(data["lessons"].size(), 1u);
  EXPECT_EQ(data["lessons"][0]["title"], "Vectorize the loop");
  EXPECT_EQ(data["lessons"][0]["slow"], base);
  EXPECT_EQ(data["lessons"][0]["fast"], fast);
  const Json& llm = data["llm"];
  ASSERT_EQ(llm["calls"].size(), 3u);
  EXPECT_DOUBLE_EQ(llm["calls"][2]["at_s"].get<double>(), 60);
  EXPECT_TRUE(llm["calls"][1]["cost_usd"].is_null());
  ASSERT_EQ(llm["roles"].size(), 2u);
  const Json& planner = llm["roles"][1]["role"] == "planner" ? llm["roles"][1] : llm["roles"][0];
  EXPECT_EQ(planner["calls"], 2);
  EXPECT_EQ(planner["input_tokens"], 200);
  EXPECT_DOUBLE_EQ(planner["cost_usd"].get<double>(), 0.75);
  EXPECT_EQ(llm["totals"]["unpriced_calls"], 1);
  EXPECT_TRUE(data["suite"].is_null());  // one task begun
}

}  // namespace
}  // namespace accelopt::report
