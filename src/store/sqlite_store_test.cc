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
#include "store/store_contract.h"
#include "testing/temp_dir.h"

namespace accelopt::store {
namespace {

bool Contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

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

using testing::ContractCandidate;
using testing::ContractLesson;
using testing::StoreContract;
using testing::StoreFactory;

// Each test's store in a file of its own; another connection opens the file again.
std::unique_ptr<Store> OpenSqliteForTest(const std::string& place, std::string* opened_at, std::string* shown_as) {
  static std::vector<std::unique_ptr<accelopt::testing::TempDir>> dirs;  // live until the test program ends
  std::string path = place;
  if (path.empty()) {
    dirs.push_back(std::make_unique<accelopt::testing::TempDir>());
    path = dirs.back()->path() + "/accelopt.db";
  }
  *opened_at = path;
  *shown_as = path;
  auto store = OpenSqliteStore({.path = path});
  EXPECT_TRUE(store.ok()) << store.error().message;
  return store.ok() ? std::move(*store) : nullptr;
}

INSTANTIATE_TEST_SUITE_P(Sqlite, StoreContract, ::testing::Values(StoreFactory(&OpenSqliteForTest)));

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
  EXPECT_EQ(RawQuery(path_, "PRAGMA user_version"), "6");
  EXPECT_EQ(RawQuery(path_, "PRAGMA journal_mode"), "wal");
  for (const char* table :
       {"runs", "llm_calls", "evaluations", "candidates", "iterations", "lessons", "jobs", "hardware", "workers",
        "run_progress"}) {
    EXPECT_EQ(
        RawQuery(path_, std::string("SELECT name FROM sqlite_master WHERE type = 'table' AND name = '") + table + "'"),
        table);
  }
  store.reset();
  // Opening an up-to-date file again migrates nothing and keeps the version.
  ASSERT_TRUE(Open());
  EXPECT_EQ(RawQuery(path_, "PRAGMA user_version"), "6");
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
  EXPECT_EQ(RawQuery(path_, "PRAGMA user_version"), "6");
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

TEST_F(SqliteStoreTest, ReadOnlyCreatesNothingAndRefusesAnOlderSchema) {
  auto missing = OpenStoreReadOnly(path_);
  ASSERT_FALSE(missing.ok());
  EXPECT_TRUE(Contains(missing.error().message, path_ + ": no such store")) << missing.error().message;
  EXPECT_FALSE(std::filesystem::exists(path_));
  ASSERT_TRUE(Open());
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path_.c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, "PRAGMA user_version = 5", nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(db);
  // Reading it would need a migration, which is a write: it says how to migrate it.
  auto older = OpenStoreReadOnly(path_);
  ASSERT_FALSE(older.ok());
  EXPECT_TRUE(Contains(older.error().message, "schema version 5")) << older.error().message;
  EXPECT_EQ(RawQuery(path_, "PRAGMA user_version"), "5");
}

TEST_F(SqliteStoreTest, AddCandidateErrorNamesFileAndOperation) {
  auto store = Open();
  ASSERT_TRUE(store);
  auto id = store->AddCandidate(ContractCandidate(/*run_id=*/12345, "matmul", 0));
  ASSERT_FALSE(id.ok());
  EXPECT_TRUE(Contains(id.error().message, path_ + ": add candidate: FOREIGN KEY constraint failed"))
      << id.error().message;
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
    if (!(*store)->AddCandidate(ContractCandidate(*run, "matmul", 0)).ok()) _exit(4);
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

}  // namespace
}  // namespace accelopt::store
