// LiveProgress: what it records, how often it writes, and that a store that
// refuses the writes is said once and stops nothing.

#include "run/progress.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <thread>

#include "llm/chat_model.h"
#include "llm/llm_client.h"
#include "run/optimize.h"
#include "testing/crashing_store.h"
#include "testing/fake_llm_server.h"
#include "testing/temp_dir.h"

namespace accelopt::run {
namespace {

using namespace std::chrono_literals;

// Forwards to a real store, counting the progress writes.
class CountingStore : public testing::CrashingStore {
 public:
  explicit CountingStore(store::Store& inner) : CrashingStore(inner, 1 << 30), inner_(inner) {}
  Status PutRunProgress(int64_t run, const Json& progress) override {
    ++writes;
    return inner_.PutRunProgress(run, progress);
  }
  std::atomic<int> writes{0};

 private:
  store::Store& inner_;
};

class LiveProgressTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto db = store::OpenSqliteStore({.path = dir_.path() + "/accelopt.db"});
    ASSERT_TRUE(db) << db.error().message;
    db_ = std::move(*db);
    run_ = *db_->CreateRun(Json::object());
  }
  Json Stored() {
    auto p = db_->GetRunProgress(run_);
    return p.ok() && p->has_value() ? **p : Json();
  }
  accelopt::testing::TempDir dir_;
  std::unique_ptr<store::Store> db_;
  int64_t run_ = 0;
};

TEST_F(LiveProgressTest, RecordsTheTaskTheCountsTheBestAndWhatItWaitsFor) {
  {
    LiveProgress progress(*db_, run_);
    progress.StartTask("silu", 3);
    progress.Report(2, 5, 8, 12.5, 30);
    auto model = progress.Waiting("the model (planner)");
    std::this_thread::sleep_for(700ms);
    Json p = Stored();
    EXPECT_EQ(p["task"], "silu");
    EXPECT_EQ(p["iteration"], 2);
    EXPECT_EQ(p["iterations"], 3);
    EXPECT_EQ(p["candidates_evaluated"], 5);
    EXPECT_EQ(p["candidates_total"], 8);
    EXPECT_EQ(p["best_percent_of_peak"], 12.5);
    EXPECT_EQ(p["waiting_for"], "the model (planner)") << p.dump();
    EXPECT_GT(p["elapsed_s"].get<double>(), 0.0);
    EXPECT_LE(p["eta_s"].get<double>(), 30.0);
    EXPECT_EQ(p["running"], true);
    {
      // Two more at once, one told in the evaluator's words.
      auto again = progress.Waiting("the model (planner)");
      auto device = progress.Waiting("an evaluation", [] { return std::string("the cpu device, held by eval silu"); });
      std::this_thread::sleep_for(700ms);
      EXPECT_EQ(Stored()["waiting_for"], "the model (planner) (x2); the cpu device, held by eval silu")
          << Stored().dump();
    }
    std::this_thread::sleep_for(700ms);
    EXPECT_EQ(Stored()["waiting_for"], "the model (planner)");
    // The best as the run chose it at the end, after its last comparisons.
    progress.ReportBest(40.25);
    std::this_thread::sleep_for(700ms);
    EXPECT_EQ(Stored()["best_percent_of_peak"], 40.25) << Stored().dump();
    EXPECT_EQ(Stored()["eta_s"], Json()) << "nothing left: no estimate";
  }
  // The last state, written as it ended: waiting for nothing, not running.
  Json p = Stored();
  EXPECT_EQ(p["waiting_for"], "");
  EXPECT_EQ(p["running"], false);
  EXPECT_TRUE(p["best_percent_of_peak"].is_number());
}

TEST_F(LiveProgressTest, WritesAFewTimesASecondAtMostHoweverOftenItIsTold) {
  CountingStore counting(*db_);
  const auto t0 = std::chrono::steady_clock::now();
  {
    LiveProgress progress(counting, run_, {.min_interval_s = 0.25});
    progress.StartTask("silu", 100);
    for (int i = 0; i < 20000; ++i) {
      progress.Report(i / 200 + 1, i % 200, 200, std::nan(""), -1);
      auto w = progress.Waiting("the model (executor)");
      if (i % 1000 == 0) std::this_thread::sleep_for(50ms);
    }
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  // One per interval, the first at once and the last at the end.
  EXPECT_LE(counting.writes.load(), static_cast<int>(seconds / 0.25) + 3) << seconds << " s";
  EXPECT_GE(counting.writes.load(), 2);
  Json p = Stored();
  EXPECT_EQ(p["iteration"], 100);
  EXPECT_EQ(p["candidates_evaluated"], 199);
  EXPECT_TRUE(p["best_percent_of_peak"].is_null()) << "unscored is null, never 0";
  EXPECT_TRUE(p["eta_s"].is_null());
}

TEST_F(LiveProgressTest, AStoreThatRefusesTheWritesIsSaidOnceAndStopsNothing) {
  std::atomic<int> warnings{0};
  std::string said;
  {
    // No run 4242: every write fails (its foreign key).
    LiveProgress progress(*db_, 4242, {.min_interval_s = 0.05, .warn = [&](const std::string& m) {
                                         ++warnings;
                                         said = m;
                                       }});
    for (int i = 0; i < 10; ++i) {
      progress.Report(i, i, 10, 1.0, 5);
      std::this_thread::sleep_for(60ms);
    }
    EXPECT_EQ(progress.Snapshot()["iteration"], 9) << "the state is kept all the same";
  }
  EXPECT_EQ(warnings.load(), 1);
  EXPECT_NE(said.find("could not record the run's progress"), std::string::npos) << said;
}

// The scripted demo answers too fast to be seen waiting: a model that takes a second is.
TEST_F(LiveProgressTest, AModelCallIsShownAsAWaitForTheModelInItsRoleWhileItLasts) {
  accelopt::testing::FakeLlmServer server;
  server.Enqueue({.behavior = accelopt::testing::Behavior::kHang, .text = "a plan", .hang_seconds = 1.5});
  llm::HttpBackendOptions http{.base_url = server.base_url(), .model = "test-model", .timeout_seconds = 30};
  auto model = llm::OpenOpenAiChatModel(http);
  ASSERT_TRUE(model) << model.error().message;
  std::map<std::string, llm::LlmClient::Backend> backends;
  backends["b"] = llm::LlmClient::Backend{std::move(*model), 1};
  llm::LlmClient client(std::move(backends), {{"planner", llm::RoleSettings{"b"}}},
                        llm::RetryOptions{1, 0.01, 0.05, 0.5}, {}, llm::PriceTable{});
  LiveProgress progress(*db_, run_);
  StoreModelPort port(*db_, client, run_, "silu");
  port.ShowWaitsIn(&progress);
  std::thread ask([&] { EXPECT_EQ(*port.Ask("planner", "plan something", "key-1"), "a plan"); });
  std::this_thread::sleep_for(800ms);
  EXPECT_EQ(Stored()["waiting_for"], "the model (planner)") << Stored().dump();
  ask.join();
  std::this_thread::sleep_for(600ms);
  EXPECT_EQ(Stored()["waiting_for"], "");
}

}  // namespace
}  // namespace accelopt::run
