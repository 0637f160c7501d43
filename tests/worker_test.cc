// `accelopt worker` processes serving one store's queue, as a user runs them:
// a worker killed with SIGKILL mid-job loses nothing and repeats nothing, and
// `accelopt optimize --demo` gives the same kind of result through workers.

#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <map>
#include <span>
#include <thread>

#include "core/json_io.h"
#include "service/job_queue.h"
#include "testing/postgres_server.h"
#include "testing/run_command.h"
#include "testing/slow_jobs.h"
#include "testing/temp_dir.h"

namespace accelopt {
namespace {

using testing::Accelopt;
using testing::BackgroundAccelopt;
using testing::CommandRun;


std::unique_ptr<service::JobQueue> OpenQueue(const std::string& db) {
  service::SqliteQueueOptions options;
  options.path = db;
  auto queue = service::OpenSqliteJobQueue(options);
  EXPECT_TRUE(queue.ok()) << queue.error().message;
  return queue.ok() ? std::move(*queue) : nullptr;
}

std::string ReadLog(const std::string& path) {
  auto text = ReadFile(path);
  return text ? *text : "";
}

size_t Count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

TEST(Worker, AKilledWorkersJobRunsAgainElsewhereAndEveryJobIsRecordedOnce) {
  testing::TempDir dir;
  const std::string db = dir.path() + "/accelopt.db";
  auto queue = OpenQueue(db);
  ASSERT_TRUE(queue);
  const std::string machine_class = "worker-test-" + std::to_string(getpid());
  constexpr int kJobs = 4;
  auto enqueued = testing::EnqueueSlowJobs(*queue, machine_class, kJobs);
  ASSERT_TRUE(enqueued.ok()) << enqueued.error().message;
  const std::vector<int64_t> ids = *enqueued;

  // Two workers on one device (as on one machine's cores): they take turns under its lock.
  const std::string common = "worker --db " + db + " --machine-class " + machine_class +
                             " --device worker-test-device --lease 2 --heartbeat 0.5 --idle-exit 4 --no-calibrate";
  std::map<std::string, std::unique_ptr<BackgroundAccelopt>> workers;
  for (const char* name : {"w1", "w2"})
    workers[name] = std::make_unique<BackgroundAccelopt>(common + " --name " + name, dir.path() + "/" + name + ".log");

  // Kill the first worker seen measuring, in the middle of its job.
  std::string killed;
  int64_t killed_job = 0;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  while (killed.empty() && std::chrono::steady_clock::now() < deadline) {
    auto statuses = queue->Poll(ids);
    ASSERT_TRUE(statuses.ok()) << statuses.error().message;
    for (const auto& s : *statuses)
      if (s.state == service::JobState::kRunning && killed.empty()) {
        std::this_thread::sleep_for(std::chrono::milliseconds(300));  // into its measurement
        // Only a job still running then, under the same worker: one that
        // finished within those 300 ms is no killed worker's job.
        const int64_t id = s.id;
        auto again = queue->Poll(std::span<const int64_t>(&id, 1));
        ASSERT_TRUE(again.ok()) << again.error().message;
        if (again->empty() || again->front().state != service::JobState::kRunning || again->front().worker != s.worker)
          continue;
        killed = s.worker;
        killed_job = s.id;
        ASSERT_EQ(kill(workers.at(killed)->pid(), SIGKILL), 0);
      }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ASSERT_FALSE(killed.empty()) << "no worker claimed a job:\n" << ReadLog(dir.path() + "/w1.log");
  const std::string survivor = killed == "w1" ? "w2" : "w1";
  CommandRun dead = workers.at(killed)->Wait();
  CommandRun alive = workers.at(survivor)->Wait();  // exits once idle
  EXPECT_EQ(dead.exit_code, 128 + SIGKILL);
  ASSERT_EQ(alive.exit_code, 0) << alive.out;

  auto statuses = queue->Poll(ids);
  ASSERT_TRUE(statuses.ok());
  int done_by_killed = 0;
  for (const auto& s : *statuses) {
    ASSERT_EQ(s.state, service::JobState::kDone) << "job " << s.id << " was lost: " << s.error << "\n" << alive.out;
    auto outcome = service::EvalOutcome::FromJson(s.outcome);
    ASSERT_TRUE(outcome.ok()) << outcome.error().message;
    ASSERT_EQ(outcome->profiles.size(), 1u);
    EXPECT_EQ(outcome->profiles[0].status, Verdict::kOk) << outcome->profiles[0].message;
    EXPECT_EQ(outcome->device, "worker-test-device");
    if (s.id == killed_job) {
      EXPECT_EQ(s.attempts, 2) << "the killed worker's job was not run again";
      EXPECT_EQ(outcome->worker, survivor);
    }
    if (outcome->worker == killed) ++done_by_killed;
  }
  // Every job recorded once: the survivor completed all but those the killed one finished before it died.
  EXPECT_EQ(static_cast<int>(Count(alive.out, ": done\n")), kJobs - done_by_killed) << alive.out;
  EXPECT_NE(alive.out.find(std::to_string(kJobs - done_by_killed) + " job(s) completed"), std::string::npos)
      << alive.out;
  EXPECT_EQ(Count(alive.out, "not recorded"), 0u) << alive.out;
}

TEST(Worker, SaysWhatIsWrongWithItsSettings) {
  testing::TempDir dir;
  CommandRun run = Accelopt("worker --db " + dir.path() + "/a.db --lease 2 --heartbeat 5 --machine-class x");
  EXPECT_EQ(run.exit_code, 2) << run.out;
  EXPECT_NE(run.out.find("--heartbeat"), std::string::npos) << run.out;
  CommandRun folder = Accelopt("worker --db " + dir.path() + " --machine-class x --idle-exit 1");
  EXPECT_EQ(folder.exit_code, 1) << folder.out;
  EXPECT_NE(folder.out.find(dir.path()), std::string::npos) << folder.out;
}

// The demo through two workers started by the run: the same tasks, verdicts
// and percentages as the local demo, every evaluation a job of the queue.
TEST(Worker, TheDemoGivesTheSameKindOfResultThroughWorkers) {
  testing::TempDir dir;
  const std::string db = dir.path() + "/accelopt.db";
  CommandRun run = Accelopt("optimize --demo --shape test --workers 2 --suite " + std::string(ACCELOPT_SOURCE_DIR) +
                            "/suite --db " + db);
  ASSERT_EQ(run.exit_code, 0) << run.out;
  EXPECT_NE(run.out.find("2 worker(s) started here"), std::string::npos) << run.out;
  for (const char* task : {"silu", "matmul", "rmsnorm_matmul"})
    EXPECT_NE(run.out.find(std::string("\n") + task + " "), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("% peak after"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("iteration 2/2"), std::string::npos) << run.out;

  CommandRun runs = Accelopt("runs --json --db " + db);
  ASSERT_EQ(runs.exit_code, 0) << runs.out;
  Json list = Json::parse(runs.out);
  ASSERT_EQ(list.size(), 1u);
  EXPECT_EQ(list[0]["status"], "finished");
  ASSERT_EQ(list[0]["summary"].size(), 3u);
  for (const Json& t : list[0]["summary"]) EXPECT_GT(t["best_s"].get<double>(), 0) << t.dump();

  auto queue = OpenQueue(db);
  ASSERT_TRUE(queue);
  auto counts = queue->Counts(3600);
  ASSERT_TRUE(counts.ok());
  EXPECT_GE(counts->done, 3) << "the baselines at least were measured by workers";
  EXPECT_EQ(counts->queued + counts->running + counts->failed, 0);
}

// The demo through two workers started by the run, its queue in a PostgreSQL
// database (the store stays a file): the jobs are done there, and the
// queue's password is in no output, worker log or recorded run.
TEST(Worker, TheDemoRunsThroughAPostgresQueueAndKeepsItsPasswordOutOfSight) {
  std::string why_not;
  testing::PostgresServer* server = testing::SharedPostgresServer(&why_not);
  if (!server) GTEST_SKIP() << why_not;
  auto uri = server->CreateDatabase("demo_queue_" + std::to_string(getpid()));
  ASSERT_TRUE(uri.ok()) << uri.error().message;
  ASSERT_FALSE(server->password().empty());
  testing::TempDir dir;
  const std::string db = dir.path() + "/accelopt.db";
  CommandRun run = Accelopt("optimize --demo --shape test --workers 2 --suite " + std::string(ACCELOPT_SOURCE_DIR) +
                            "/suite --db " + db + " --queue-db " + *uri);
  ASSERT_EQ(run.exit_code, 0) << run.out;
  EXPECT_NE(run.out.find("2 worker(s) started here"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("% peak after"), std::string::npos) << run.out;
  EXPECT_EQ(run.out.find(server->password()), std::string::npos) << "the password was shown";

  CommandRun runs = Accelopt("runs --json --db " + db);
  ASSERT_EQ(runs.exit_code, 0) << runs.out;
  EXPECT_EQ(runs.out.find(server->password()), std::string::npos) << "the password was recorded with the run";
  for (const std::string& file : {db, db + "-wal"})
    EXPECT_EQ(ReadLog(file).find(server->password()), std::string::npos) << "the password is in " << file;

  auto queue = service::OpenJobQueue(*uri);
  ASSERT_TRUE(queue.ok()) << queue.error().message;
  auto counts = (*queue)->Counts(3600);
  ASSERT_TRUE(counts.ok()) << counts.error().message;
  EXPECT_GE(counts->done, 3) << "the baselines at least were measured by the workers, through PostgreSQL";
  EXPECT_EQ(counts->queued + counts->running + counts->failed, 0);
}


// A team's setting: one PostgreSQL database holds the store and the queue;
// two engines run at once, on one memory, and workers started apart from
// either drain their jobs. What one engine learns, the other draws on.
TEST(Worker, TwoEnginesOnOnePostgresStoreShareOneMemoryAndOneQueue) {
  std::string why_not;
  testing::PostgresServer* server = testing::SharedPostgresServer(&why_not);
  if (!server) GTEST_SKIP() << why_not;
  auto uri = server->CreateDatabase("two_engines_" + std::to_string(getpid()));
  ASSERT_TRUE(uri.ok()) << uri.error().message;
  // Everyone names the database without its password, which comes from the environment.
  const std::string shown = service::RedactUri(*uri);
  ASSERT_EQ(setenv("PGPASSWORD", server->password().c_str(), 1), 0);
  testing::TempDir dir;
  const std::string suite = std::string(ACCELOPT_SOURCE_DIR) + "/suite";
  const std::string machine_class = "team-" + std::to_string(getpid());

  // A lesson the team's memory holds before either engine starts.
  const std::string lessons = dir.path() + "/lessons.json";
  ASSERT_TRUE(WriteJsonFile(lessons, Json::array({Json{{"task", "silu"},
                                                       {"target", "cpu"},
                                                       {"machine", machine_class},
                                                       {"speedup", 1.5},
                                                       {"speedup_low", 1.4},
                                                       {"speedup_high", 1.6},
                                                       {"title", "Vectorize the loop"},
                                                       {"text", "**Vectorize the loop**\nUse 8-wide lanes."}}}))
                  .ok());
  CommandRun imported = Accelopt("memory import " + lessons + " --memory demo --db '" + shown + "'");
  ASSERT_EQ(imported.exit_code, 0) << imported.out;

  std::vector<std::unique_ptr<testing::BackgroundAccelopt>> workers;
  for (int i = 1; i <= 2; ++i)
    workers.push_back(std::make_unique<testing::BackgroundAccelopt>(
        "worker --db '" + shown + "' --machine-class " + machine_class + " --name local-" + std::to_string(i) +
            " --suite " + suite,
        dir.path() + "/worker-" + std::to_string(i) + ".log"));
  std::vector<std::unique_ptr<testing::BackgroundAccelopt>> engines;
  for (int i = 1; i <= 2; ++i)
    engines.push_back(std::make_unique<testing::BackgroundAccelopt>(
        "optimize --demo --shape test --queue --machine-class " + machine_class + " --suite " + suite + " --db '" +
            shown + "'",
        dir.path() + "/engine-" + std::to_string(i) + ".log"));
  for (auto& engine : engines) {
    CommandRun run = engine->Wait();
    EXPECT_EQ(run.exit_code, 0) << run.out;
    EXPECT_NE(run.out.find("lessons from memory 'demo'"), std::string::npos) << run.out;
    EXPECT_NE(run.out.find("% peak after"), std::string::npos) << run.out;
    EXPECT_EQ(run.out.find(server->password()), std::string::npos) << "the password was shown";
  }
  for (auto& worker : workers) {
    kill(worker->pid(), SIGTERM);
    CommandRun stopped = worker->Wait();  // stopped by the signal between jobs, or done
    EXPECT_TRUE(stopped.exit_code == 0 || stopped.exit_code == 128 + SIGTERM) << stopped.out;
  }
  unsetenv("PGPASSWORD");

  // Both runs are in the one store, finished.
  CommandRun runs = Accelopt("runs --json --db '" + *uri + "'");
  ASSERT_EQ(runs.exit_code, 0) << runs.out;
  auto listed = Json::parse(runs.out, nullptr, false);
  ASSERT_TRUE(listed.is_array()) << runs.out;
  ASSERT_EQ(listed.size(), 2u) << runs.out;
  for (const Json& run : listed) EXPECT_EQ(run.value("status", ""), "finished") << run.dump();
  // The queue is drained, every job once, and only these workers served it.
  auto queue = service::OpenJobQueue(*uri);
  ASSERT_TRUE(queue.ok()) << queue.error().message;
  auto counts = (*queue)->Counts(3600);
  ASSERT_TRUE(counts.ok()) << counts.error().message;
  EXPECT_GE(counts->done, 3);
  EXPECT_EQ(counts->queued + counts->running + counts->failed, 0);
  for (const auto& w : counts->live_workers) EXPECT_TRUE(w.name == "local-1" || w.name == "local-2") << w.name;
  // The memory is one: its lessons name the runs that taught them, whichever engine ran them.
  CommandRun memory = Accelopt("memory export --memory demo --db '" + *uri + "'");
  ASSERT_EQ(memory.exit_code, 0) << memory.out;
  auto exported = Json::parse(memory.out, nullptr, false);
  ASSERT_TRUE(exported.is_array()) << memory.out;
  EXPECT_GE(exported.size(), 1u);
}

}  // namespace
}  // namespace accelopt
