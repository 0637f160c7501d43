#include <gtest/gtest.h>
#include <signal.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>
#include <thread>

#include "store/store.h"
#include "testing/temp_dir.h"

namespace accelopt::store {
namespace {

bool Contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// YYYY-MM-DDTHH:MM:SSZ
bool IsIsoUtc(const std::string& s) {
  const std::string shape = "dddd-dd-ddTdd:dd:ddZ";
  if (s.size() != shape.size()) return false;
  for (size_t i = 0; i < s.size(); ++i) {
    if (shape[i] == 'd' ? !std::isdigit(static_cast<unsigned char>(s[i])) : s[i] != shape[i]) return false;
  }
  return true;
}

// Reads one integer or text from the file with a separate connection, as another tool would.
std::string RawQuery(const std::string& path, const std::string& sql) {
  sqlite3* db = nullptr;
  std::string out;
  if (sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK) {
    sqlite3_stmt* stmt = nullptr;
    if (sqlite3_prepare_v2(db, sql.c_str(), -1, &stmt, nullptr) == SQLITE_OK && sqlite3_step(stmt) == SQLITE_ROW) {
      out = reinterpret_cast<const char*>(sqlite3_column_text(stmt, 0));
    }
    sqlite3_finalize(stmt);
  }
  sqlite3_close(db);
  return out;
}

StoredCandidate MakeCandidate(int64_t run_id, const std::string& task, int iteration, int64_t parent_id = 0) {
  Profile profile;
  profile.task = task;
  profile.latency = LatencyStats{.median_s = 1.5e-4, .min_s = 1.4e-4, .max_s = 1.7e-4, .calls = 10, .series = 1};
  profile.percent_of_peak = 42.5;
  return StoredCandidate{.run_id = run_id,
                         .task = task,
                         .candidate = {.iteration = iteration,
                                       .parent_id = parent_id,
                                       .plan = "tile by 32",
                                       .code = "__global__ void k() {}",
                                       .hash = "h" + std::to_string(iteration),
                                       .profile = profile}};
}

StoredLesson MakeLesson(const std::string& memory, const std::string& title) {
  Lesson l{.tags = {.task = "matmul",
                    .family = "matmul",
                    .bound = "mm",
                    .target = "host",
                    .language = "c++",
                    .strategies = {"tiling", "threading"}},
           .speedup = 2.5,
           .low = 2.25,
           .high = 2.75,
           .title = title,
           .text = "**" + title + "**\nbefore/after"};
  return StoredLesson{.lesson = l, .memory = memory, .run_id = 7, .slow_candidate = 3, .fast_candidate = 4};
}

class SqliteStoreTest : public ::testing::Test {
 protected:
  std::unique_ptr<Store> Open() {
    auto store = OpenSqliteStore({.path = path_});
    EXPECT_TRUE(store.ok()) << store.error().message;
    return store.ok() ? std::move(*store) : nullptr;
  }

  accelopt::testing::TempDir dir_;
  std::string path_ = dir_.path() + "/accelopt.db";
};

TEST_F(SqliteStoreTest, CreatesSchemaWithVersionInWalMode) {
  auto store = Open();
  ASSERT_TRUE(store);
  EXPECT_EQ(RawQuery(path_, "PRAGMA user_version"), "5");
  EXPECT_EQ(RawQuery(path_, "PRAGMA journal_mode"), "wal");
  for (const char* table :
       {"runs", "llm_calls", "evaluations", "candidates", "iterations", "lessons", "jobs", "hardware", "workers"}) {
    EXPECT_EQ(
        RawQuery(path_, std::string("SELECT name FROM sqlite_master WHERE type = 'table' AND name = '") + table + "'"),
        table);
  }
  store.reset();
  // Opening an up-to-date file again migrates nothing and keeps the version.
  ASSERT_TRUE(Open());
  EXPECT_EQ(RawQuery(path_, "PRAGMA user_version"), "5");
}

TEST_F(SqliteStoreTest, LessonsOfAVersionOneStoreReadWithoutIntervalOrTags) {
  // The lessons table as version 1 made it, with one lesson (and the candidates table later versions change).
  sqlite3* raw = nullptr;
  ASSERT_EQ(sqlite3_open(path_.c_str(), &raw), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(raw,
                         "CREATE TABLE candidates (id INTEGER PRIMARY KEY AUTOINCREMENT);"
                         "CREATE TABLE lessons (id INTEGER PRIMARY KEY AUTOINCREMENT, memory TEXT NOT NULL, task TEXT "
                         "NOT NULL, target TEXT NOT NULL, speedup REAL, title TEXT NOT NULL, text TEXT NOT NULL, "
                         "run_id INTEGER NOT NULL, slow_candidate INTEGER NOT NULL, fast_candidate INTEGER NOT NULL, "
                         "created_at TEXT NOT NULL);"
                         "INSERT INTO lessons VALUES (1, 'shared', 'silu', 'cpu', 1.5, 't', '**t**', 2, 3, 4, "
                         "'2026-01-01T00:00:00Z');"
                         "PRAGMA user_version = 1;",
                         nullptr, nullptr, nullptr),
            SQLITE_OK);
  sqlite3_close(raw);
  auto store = Open();
  ASSERT_TRUE(store);
  EXPECT_EQ(RawQuery(path_, "PRAGMA user_version"), "5");
  auto lesson = store->GetLesson(1);
  ASSERT_TRUE(lesson.ok() && lesson->has_value()) << (lesson.ok() ? "none" : lesson.error().message);
  EXPECT_EQ((*lesson)->lesson.low, 1.5);
  EXPECT_EQ((*lesson)->lesson.high, 1.5);
  EXPECT_EQ((*lesson)->lesson.coverage, 0);  // unknown
  EXPECT_EQ((*lesson)->lesson.tags.family, "");
  EXPECT_TRUE((*lesson)->lesson.tags.strategies.empty());
}

TEST_F(SqliteStoreTest, CreatesAMissingFolder) {
  std::string nested = dir_.path() + "/a/b/c/project.db";
  auto store = OpenSqliteStore({.path = nested});
  ASSERT_TRUE(store.ok()) << store.error().message;
  EXPECT_TRUE((*store)->CreateRun(Json::object()).ok());
  EXPECT_TRUE(std::filesystem::exists(nested));
}

TEST_F(SqliteStoreTest, UnwritablePathIsAnErrorNamingIt) {
  // Running as root defeats permission bits, so use paths nobody can create.
  std::string file = dir_.path() + "/plain-file";
  std::ofstream(file) << "x";
  std::string under_file = file + "/accelopt.db";
  auto store = OpenSqliteStore({.path = under_file});
  ASSERT_FALSE(store.ok());
  EXPECT_TRUE(Contains(store.error().message, under_file)) << store.error().message;

  auto folder = OpenSqliteStore({.path = dir_.path()});
  ASSERT_FALSE(folder.ok());
  EXPECT_TRUE(Contains(folder.error().message, dir_.path() + ": open: ")) << folder.error().message;
}

TEST_F(SqliteStoreTest, CorruptFileIsAnErrorNamingIt) {
  {
    std::ofstream out(path_, std::ios::binary);
    for (int i = 0; i < 8192; ++i) out.put(static_cast<char>((i * 131 + 7) & 0xff));
  }
  auto store = OpenSqliteStore({.path = path_});
  ASSERT_FALSE(store.ok());
  EXPECT_TRUE(Contains(store.error().message, path_ + ": ")) << store.error().message;
  EXPECT_TRUE(Contains(store.error().message, "not a database")) << store.error().message;
}

TEST_F(SqliteStoreTest, NewerSchemaIsAnError) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path_.c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, "PRAGMA user_version = 99", nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(db);
  auto store = OpenSqliteStore({.path = path_});
  ASSERT_FALSE(store.ok());
  EXPECT_TRUE(Contains(store.error().message, path_)) << store.error().message;
  EXPECT_TRUE(Contains(store.error().message, "schema version 99")) << store.error().message;
}

TEST_F(SqliteStoreTest, RunRoundTrip) {
  auto store = Open();
  ASSERT_TRUE(store);
  Json config = {{"tasks", {"matmul", "softmax"}}, {"search", {{"iterations", 16}}}};
  auto id = store->CreateRun(config);
  ASSERT_TRUE(id.ok()) << id.error().message;

  auto run = store->GetRun(*id);
  ASSERT_TRUE(run.ok()) << run.error().message;
  ASSERT_TRUE(run->has_value());
  EXPECT_EQ((*run)->id, *id);
  EXPECT_EQ((*run)->status, "running");
  EXPECT_EQ((*run)->config, config);
  EXPECT_TRUE((*run)->summary.is_null());
  EXPECT_TRUE(IsIsoUtc((*run)->created_at)) << (*run)->created_at;

  Json summary = {{"cost_usd", 1.25}, {"tasks", {{"matmul", {{"speedup", 3.1}}}}}};
  ASSERT_TRUE(store->SetRunStatus(*id, "finished", summary).ok());
  run = store->GetRun(*id);
  ASSERT_TRUE(run.ok() && run->has_value());
  EXPECT_EQ((*run)->status, "finished");
  EXPECT_EQ((*run)->summary, summary);
  EXPECT_EQ((*run)->config, config);

  auto missing = store->GetRun(*id + 100);
  ASSERT_TRUE(missing.ok());
  EXPECT_FALSE(missing->has_value());
  Status no_run = store->SetRunStatus(*id + 100, "failed", Json());
  ASSERT_FALSE(no_run.ok());
  EXPECT_TRUE(Contains(no_run.error().message, path_ + ": set run status: no run")) << no_run.error().message;
}

TEST_F(SqliteStoreTest, ListRunsNewestFirst) {
  auto store = Open();
  ASSERT_TRUE(store);
  std::vector<int64_t> ids;
  for (int i = 0; i < 3; ++i) ids.push_back(*store->CreateRun(Json{{"n", i}}));
  auto runs = store->ListRuns();
  ASSERT_TRUE(runs.ok()) << runs.error().message;
  ASSERT_EQ(runs->size(), 3u);
  EXPECT_EQ((*runs)[0].id, ids[2]);
  EXPECT_EQ((*runs)[1].id, ids[1]);
  EXPECT_EQ((*runs)[2].id, ids[0]);
  EXPECT_EQ((*runs)[0].config["n"], 2);
}

TEST_F(SqliteStoreTest, LlmCallsRoundTripInRecordedOrder) {
  auto store = Open();
  ASSERT_TRUE(store);
  int64_t run = *store->CreateRun(Json::object());
  int64_t other = *store->CreateRun(Json::object());
  // Keys deliberately out of alphabetical order, interleaved with another run.
  ASSERT_TRUE(store->PutLlmCall("zz", run, "planner", Json{{"n", 0}}).ok());
  ASSERT_TRUE(store->PutLlmCall("mm", other, "executor", Json{{"n", 100}}).ok());
  ASSERT_TRUE(store->PutLlmCall("aa", run, "executor", Json{{"n", 1}}).ok());
  ASSERT_TRUE(store->PutLlmCall("kk", run, "summarizer", Json{{"n", 2}}).ok());

  auto calls = store->ListLlmCalls(run);
  ASSERT_TRUE(calls.ok()) << calls.error().message;
  ASSERT_EQ(calls->size(), 3u);
  for (int i = 0; i < 3; ++i) EXPECT_EQ((*calls)[i]["n"], i);
  EXPECT_EQ(store->ListLlmCalls(other)->size(), 1u);

  auto got = store->GetLlmCall("aa");
  ASSERT_TRUE(got.ok() && got->has_value());
  EXPECT_EQ(**got, (Json{{"n", 1}}));
  auto missing = store->GetLlmCall("nope");
  ASSERT_TRUE(missing.ok());
  EXPECT_FALSE(missing->has_value());
}

TEST_F(SqliteStoreTest, PutLlmCallKeepsTheFirstRecord) {
  auto store = Open();
  ASSERT_TRUE(store);
  int64_t run = *store->CreateRun(Json::object());
  ASSERT_TRUE(store->PutLlmCall("k", run, "planner", Json{{"answer", "first"}}).ok());
  ASSERT_TRUE(store->PutLlmCall("k", run, "planner", Json{{"answer", "second"}}).ok());
  EXPECT_EQ((**store->GetLlmCall("k"))["answer"], "first");
  EXPECT_EQ(store->ListLlmCalls(run)->size(), 1u);
}

TEST_F(SqliteStoreTest, LlmCallOutsideARunIsKept) {
  auto store = Open();
  ASSERT_TRUE(store);
  ASSERT_TRUE(store->PutLlmCall("ping", 0, "ping", Json{{"ok", true}}).ok());
  EXPECT_TRUE(store->GetLlmCall("ping")->has_value());
}

TEST_F(SqliteStoreTest, EvaluationRoundTripKeepsTheFirst) {
  auto store = Open();
  ASSERT_TRUE(store);
  int64_t run = *store->CreateRun(Json::object());
  Json profile = {{"status", "ok"}, {"latency_s", {1e-3, 1.1e-3}}, {"log", "compiled"}};
  ASSERT_TRUE(store->PutEvaluation("task|shape|hash", run, "matmul", profile).ok());
  ASSERT_TRUE(store->PutEvaluation("task|shape|hash", run, "matmul", Json{{"status", "timeout"}}).ok());
  auto got = store->GetEvaluation("task|shape|hash");
  ASSERT_TRUE(got.ok() && got->has_value());
  EXPECT_EQ(**got, profile);
  EXPECT_FALSE(store->GetEvaluation("other")->has_value());
}

TEST_F(SqliteStoreTest, HardwareProfilesAreKeptPerTargetAndMachineAndReplaced) {
  auto store = Open();
  ASSERT_TRUE(store);
  EXPECT_FALSE(store->GetHardware("toy", "machine-a")->has_value());
  ASSERT_TRUE(store->PutHardware("toy", "machine-a", Json{{"bandwidth_gbs", 10}}).ok());
  ASSERT_TRUE(store->PutHardware("toy", "machine-b", Json{{"bandwidth_gbs", 20}}).ok());
  ASSERT_TRUE(store->PutHardware("toy", "machine-a", Json{{"bandwidth_gbs", 11}}).ok());
  EXPECT_EQ((**store->GetHardware("toy", "machine-a"))["bandwidth_gbs"], 11);
  EXPECT_EQ((**store->GetHardware("toy", "machine-b"))["bandwidth_gbs"], 20);
  EXPECT_FALSE(store->GetHardware("other", "machine-a")->has_value());
}

TEST_F(SqliteStoreTest, CandidateRoundTripWithLineage) {
  auto store = Open();
  ASSERT_TRUE(store);
  int64_t run = *store->CreateRun(Json::object());
  auto base = store->AddCandidate(MakeCandidate(run, "matmul", 0));
  ASSERT_TRUE(base.ok()) << base.error().message;
  StoredCandidate child = MakeCandidate(run, "matmul", 1, *base);
  child.candidate.profile.status = Verdict::kWrongAnswer;
  child.candidate.profile.message = "output 'out': relative L2 error 0.5 exceeds 2e-05";
  child.candidate.profile.latency.reset();
  auto child_id = store->AddCandidate(child);
  ASSERT_TRUE(child_id.ok()) << child_id.error().message;
  EXPECT_NE(*child_id, *base);

  auto got = store->GetCandidate(*child_id);
  ASSERT_TRUE(got.ok()) << got.error().message;
  ASSERT_TRUE(got->has_value());
  const StoredCandidate& stored = **got;
  EXPECT_EQ(stored.run_id, run);
  EXPECT_EQ(stored.task, "matmul");
  EXPECT_EQ(stored.candidate.id, *child_id);
  child.candidate.id = *child_id;
  EXPECT_EQ(ToJson(stored.candidate), ToJson(child.candidate));
  EXPECT_FALSE(stored.candidate.ok());
  EXPECT_EQ((*store->GetCandidate(*base))->candidate.parent_id, 0);
  EXPECT_DOUBLE_EQ((*store->GetCandidate(*base))->candidate.latency(), 1.5e-4);
  EXPECT_FALSE(store->GetCandidate(*child_id + 100)->has_value());
}

TEST_F(SqliteStoreTest, AddCandidateErrorNamesFileAndOperation) {
  auto store = Open();
  ASSERT_TRUE(store);
  auto id = store->AddCandidate(MakeCandidate(/*run_id=*/12345, "matmul", 0));
  ASSERT_FALSE(id.ok());
  EXPECT_TRUE(Contains(id.error().message, path_ + ": add candidate: FOREIGN KEY constraint failed"))
      << id.error().message;
}

TEST_F(SqliteStoreTest, ListCandidatesInInsertionOrderFilteredByTask) {
  auto store = Open();
  ASSERT_TRUE(store);
  int64_t run = *store->CreateRun(Json::object());
  int64_t other = *store->CreateRun(Json::object());
  std::vector<int64_t> all, softmax;
  for (int i = 0; i < 6; ++i) {
    std::string task = i % 2 ? "softmax" : "matmul";
    int64_t id = *store->AddCandidate(MakeCandidate(run, task, i));
    all.push_back(id);
    if (task == "softmax") softmax.push_back(id);
    store->AddCandidate(MakeCandidate(other, task, i));
  }
  auto listed = store->ListCandidates(run, "");
  ASSERT_TRUE(listed.ok()) << listed.error().message;
  std::vector<int64_t> ids;
  for (const auto& stored : *listed) ids.push_back(stored.candidate.id);
  EXPECT_EQ(ids, all);

  listed = store->ListCandidates(run, "softmax");
  ASSERT_TRUE(listed.ok());
  ids.clear();
  for (const auto& stored : *listed) ids.push_back(stored.candidate.id);
  EXPECT_EQ(ids, softmax);
  EXPECT_TRUE(store->ListCandidates(run, "conv")->empty());
}

TEST_F(SqliteStoreTest, PutIterationReplacesAndLatestPicksTheHighest) {
  auto store = Open();
  ASSERT_TRUE(store);
  int64_t run = *store->CreateRun(Json::object());
  auto none = store->LatestIteration(run, "matmul");
  ASSERT_TRUE(none.ok()) << none.error().message;
  EXPECT_FALSE(none->has_value());

  // Written out of order: the latest is the highest iteration, not the last write.
  ASSERT_TRUE(store->PutIteration(run, "matmul", 2, Json{{"v", "two"}}).ok());
  ASSERT_TRUE(store->PutIteration(run, "matmul", 10, Json{{"v", "ten"}}).ok());
  ASSERT_TRUE(store->PutIteration(run, "matmul", 3, Json{{"v", "three"}}).ok());
  ASSERT_TRUE(store->PutIteration(run, "softmax", 50, Json{{"v", "other task"}}).ok());
  auto latest = store->LatestIteration(run, "matmul");
  ASSERT_TRUE(latest.ok() && latest->has_value());
  EXPECT_EQ((*latest)->first, 10);
  EXPECT_EQ((*latest)->second["v"], "ten");

  ASSERT_TRUE(store->PutIteration(run, "matmul", 10, Json{{"v", "ten again"}}).ok());
  latest = store->LatestIteration(run, "matmul");
  ASSERT_TRUE(latest.ok() && latest->has_value());
  EXPECT_EQ((*latest)->first, 10);
  EXPECT_EQ((*latest)->second["v"], "ten again");
  EXPECT_EQ(RawQuery(path_, "SELECT COUNT(*) FROM iterations"), "4");
}

TEST_F(SqliteStoreTest, LessonsRoundTripNewestFirstWithLimit) {
  auto store = Open();
  ASSERT_TRUE(store);
  std::vector<int64_t> ids;
  for (int i = 0; i < 5; ++i) ids.push_back(*store->AddLesson(MakeLesson("shared", "lesson " + std::to_string(i))));
  store->AddLesson(MakeLesson("alice", "hers"));
  StoredLesson imported = MakeLesson("run-3", "old");
  imported.created_at = "2024-01-02T03:04:05Z";
  int64_t imported_id = *store->AddLesson(imported);

  auto all = store->ListLessons("shared", 0);
  ASSERT_TRUE(all.ok()) << all.error().message;
  ASSERT_EQ(all->size(), 5u);
  for (int i = 0; i < 5; ++i) EXPECT_EQ((*all)[i].lesson.id, ids[4 - i]);
  auto two = store->ListLessons("shared", 2);
  ASSERT_TRUE(two.ok());
  ASSERT_EQ(two->size(), 2u);
  EXPECT_EQ((*two)[0].lesson.title, "lesson 4");
  EXPECT_EQ((*two)[1].lesson.title, "lesson 3");
  EXPECT_TRUE(store->ListLessons("nobody", 0)->empty());

  auto got = store->GetLesson(ids[1]);
  ASSERT_TRUE(got.ok() && got->has_value());
  StoredLesson want = MakeLesson("shared", "lesson 1");
  EXPECT_EQ((*got)->lesson.id, ids[1]);
  want.lesson.id = ids[1];
  EXPECT_EQ(ToJson((*got)->lesson), ToJson(want.lesson));
  EXPECT_EQ((*got)->memory, want.memory);
  EXPECT_EQ((*got)->run_id, want.run_id);
  EXPECT_EQ((*got)->slow_candidate, want.slow_candidate);
  EXPECT_EQ((*got)->fast_candidate, want.fast_candidate);
  EXPECT_TRUE(IsIsoUtc((*got)->created_at)) << (*got)->created_at;
  EXPECT_EQ((*store->GetLesson(imported_id))->created_at, "2024-01-02T03:04:05Z");
  EXPECT_FALSE(store->GetLesson(imported_id + 100)->has_value());

  auto memories = store->ListMemories();
  ASSERT_TRUE(memories.ok()) << memories.error().message;
  std::vector<std::pair<std::string, int>> want_memories = {{"alice", 1}, {"run-3", 1}, {"shared", 5}};
  EXPECT_EQ(*memories, want_memories);
}

TEST_F(SqliteStoreTest, ReopenFindsEverything) {
  int64_t run = 0, candidate = 0, lesson = 0;
  {
    auto store = Open();
    ASSERT_TRUE(store);
    run = *store->CreateRun(Json{{"tasks", {"matmul"}}});
    ASSERT_TRUE(store->SetRunStatus(run, "stopped", Json{{"why", "budget"}}).ok());
    ASSERT_TRUE(store->PutLlmCall("call", run, "planner", Json{{"text", "plan"}}).ok());
    ASSERT_TRUE(store->PutEvaluation("eval", run, "matmul", Json{{"status", "ok"}}).ok());
    candidate = *store->AddCandidate(MakeCandidate(run, "matmul", 0));
    ASSERT_TRUE(store->PutIteration(run, "matmul", 4, Json{{"beam", {candidate}}}).ok());
    lesson = *store->AddLesson(MakeLesson("shared", "keep me"));
  }
  auto store = Open();
  ASSERT_TRUE(store);
  auto got_run = store->GetRun(run);
  ASSERT_TRUE(got_run.ok() && got_run->has_value());
  EXPECT_EQ((*got_run)->status, "stopped");
  EXPECT_EQ((*got_run)->summary["why"], "budget");
  EXPECT_EQ((**store->GetLlmCall("call"))["text"], "plan");
  EXPECT_EQ(store->ListLlmCalls(run)->size(), 1u);
  EXPECT_EQ((**store->GetEvaluation("eval"))["status"], "ok");
  EXPECT_EQ((*store->GetCandidate(candidate))->candidate.hash, "h0");
  EXPECT_EQ(store->ListCandidates(run, "matmul")->size(), 1u);
  EXPECT_EQ((*store->LatestIteration(run, "matmul"))->first, 4);
  EXPECT_EQ((*store->GetLesson(lesson))->lesson.title, "keep me");
  // Ids keep counting after a reopen.
  EXPECT_GT(*store->CreateRun(Json::object()), run);
}

TEST_F(SqliteStoreTest, WritesSurviveKillNine) {
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    // The child writes and dies without closing anything.
    auto store = OpenSqliteStore({.path = path_});
    if (!store.ok()) _exit(2);
    auto run = (*store)->CreateRun(Json{{"who", "child"}});
    if (!run.ok() || !(*store)->PutLlmCall("paid", *run, "planner", Json{{"cost", 0.01}}).ok()) _exit(3);
    if (!(*store)->AddCandidate(MakeCandidate(*run, "matmul", 0)).ok()) _exit(4);
    if (!(*store)->PutIteration(*run, "matmul", 1, Json{{"done", true}}).ok()) _exit(5);
    kill(getpid(), SIGKILL);
    _exit(6);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) << "child status " << status;

  auto store = Open();
  ASSERT_TRUE(store);
  auto runs = store->ListRuns();
  ASSERT_TRUE(runs.ok() && runs->size() == 1u);
  int64_t run = (*runs)[0].id;
  EXPECT_EQ((*runs)[0].config["who"], "child");
  EXPECT_TRUE(store->GetLlmCall("paid")->has_value());
  EXPECT_EQ(store->ListCandidates(run, "")->size(), 1u);
  EXPECT_EQ((*store->LatestIteration(run, "matmul"))->first, 1);
}

TEST_F(SqliteStoreTest, ConcurrentWritersAllLand) {
  auto store = Open();
  ASSERT_TRUE(store);
  int64_t run = *store->CreateRun(Json::object());
  constexpr int kThreads = 4, kPerThread = 50;
  std::vector<std::vector<int64_t>> ids(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kPerThread; ++i) {
        auto id = store->AddCandidate(MakeCandidate(run, "task" + std::to_string(t), i));
        if (id.ok()) ids[t].push_back(*id);
        store->PutLlmCall("t" + std::to_string(t) + "-" + std::to_string(i), run, "executor", Json{{"i", i}});
      }
    });
  }
  for (auto& thread : threads) thread.join();

  std::set<int64_t> distinct;
  for (int t = 0; t < kThreads; ++t) {
    EXPECT_EQ(ids[t].size(), static_cast<size_t>(kPerThread));
    EXPECT_TRUE(std::is_sorted(ids[t].begin(), ids[t].end()));
    distinct.insert(ids[t].begin(), ids[t].end());
  }
  EXPECT_EQ(distinct.size(), static_cast<size_t>(kThreads * kPerThread));
  EXPECT_EQ(store->ListCandidates(run, "")->size(), static_cast<size_t>(kThreads * kPerThread));
  EXPECT_EQ(store->ListCandidates(run, "task2")->size(), static_cast<size_t>(kPerThread));
  EXPECT_EQ(store->ListLlmCalls(run)->size(), static_cast<size_t>(kThreads * kPerThread));
}

TEST_F(SqliteStoreTest, TwoConnectionsShareTheFile) {
  auto first = Open();
  auto second = Open();
  ASSERT_TRUE(first && second);
  int64_t run = *first->CreateRun(Json::object());
  std::thread a([&] {
    for (int i = 0; i < 50; ++i) EXPECT_TRUE(first->AddCandidate(MakeCandidate(run, "a", i)).ok());
  });
  std::thread b([&] {
    for (int i = 0; i < 50; ++i) EXPECT_TRUE(second->AddCandidate(MakeCandidate(run, "b", i)).ok());
  });
  a.join();
  b.join();
  EXPECT_EQ(first->ListCandidates(run, "")->size(), 100u);
  EXPECT_EQ(second->ListCandidates(run, "")->size(), 100u);
}

TEST_F(SqliteStoreTest, UnicodeAndLargeValuesSurvive) {
  auto store = Open();
  ASSERT_TRUE(store);
  Json config = {{"name", "naïve π ∑ 日本語 🚀"}, {"nul", std::string("a\0b", 3)}, {"ключ", {1, 2.5, nullptr, true}}};
  int64_t run = *store->CreateRun(config);
  EXPECT_EQ((*store->GetRun(run))->config, config);

  std::string code;
  code.reserve(1 << 20);
  while (code.size() < (1u << 20)) code += "float x = 1.0f; // ünïcödé ✓ line " + std::to_string(code.size()) + "\n";
  code += std::string("tail\0with nul", 13);
  StoredCandidate row = MakeCandidate(run, "matmul", 0);
  row.candidate.code = code;
  row.candidate.plan = "計画: unroll ×4";
  row.candidate.profile.run_log = code;
  int64_t id = *store->AddCandidate(row);
  auto got = store->GetCandidate(id);
  ASSERT_TRUE(got.ok() && got->has_value());
  EXPECT_EQ((*got)->candidate.code.size(), code.size());
  EXPECT_TRUE((*got)->candidate.code == code);
  EXPECT_EQ((*got)->candidate.plan, row.candidate.plan);
  EXPECT_TRUE((*got)->candidate.profile.run_log == code);

  Json record = {{"response", code}, {"emoji", "😀"}};
  ASSERT_TRUE(store->PutLlmCall("big", run, "executor", record).ok());
  EXPECT_TRUE(**store->GetLlmCall("big") == record);
}

TEST_F(SqliteStoreTest, InvalidUtf8InJsonIsStoredReplaced) {
  auto store = Open();
  ASSERT_TRUE(store);
  int64_t run = *store->CreateRun(Json::object());
  // A crash log with raw bytes is still a verdict to record.
  Json profile = {{"status", "crash"}, {"log", std::string("bad \xff\xfe bytes")}};
  ASSERT_TRUE(store->PutEvaluation("k", run, "matmul", profile).ok());
  auto got = store->GetEvaluation("k");
  ASSERT_TRUE(got.ok() && got->has_value()) << (got.ok() ? "" : got.error().message);
  EXPECT_EQ((**got)["status"], "crash");
  EXPECT_EQ((**got)["log"], "bad \xEF\xBF\xBD\xEF\xBF\xBD bytes");
}

}  // namespace
}  // namespace accelopt::store
