// The embedded store: one SQLite file, one connection, calls serialized by a mutex.

#include <sqlite3.h>

#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <iterator>
#include <limits>
#include <map>
#include <mutex>
#include <thread>
#include <utility>

#include "store/sqlite_query.h"
#include "store/store.h"
#include "store/stored_values.h"

namespace accelopt::store {
namespace {

// SQL shared by several statements; macros so that literals concatenate at compile time.
// Timestamps are ISO-8601 UTC to the second, e.g. 2025-01-31T12:00:00Z.
#define ACCELOPT_NOW "strftime('%Y-%m-%dT%H:%M:%SZ', 'now')"
#define ACCELOPT_SELECT_CANDIDATE                                                                              \
  "SELECT id, run_id, task, iteration, parent_id, plan, code, code_hash, status, latency_s, percent_of_peak, " \
  "profile, vs_parent FROM candidates"
#define ACCELOPT_SELECT_LESSON                                                                                  \
  "SELECT id, memory, task, target, speedup, title, text, run_id, slow_candidate, fast_candidate, created_at, " \
  "speedup_low, speedup_high, tags, speedup_coverage FROM lessons"

// Schema migrations: kMigrations[v] takes a database at user_version v to v + 1.
// A later version appends a step here; never edit a step that has shipped.
//
// A run id of 0 ("no run") is stored as NULL so that foreign keys hold for real
// ids. Lessons carry their lineage without foreign keys: a memory outlives the
// runs that taught it and may be copied between project databases.
// Doubles are nullable because SQLite stores a bound NaN as NULL.
const char* const kMigrations[] = {
    R"sql(
CREATE TABLE runs (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  created_at TEXT NOT NULL DEFAULT ()sql" ACCELOPT_NOW R"sql(),
  status TEXT NOT NULL,
  config TEXT NOT NULL,
  summary TEXT NOT NULL DEFAULT 'null'
);
CREATE TABLE llm_calls (
  key TEXT PRIMARY KEY,
  seq INTEGER NOT NULL UNIQUE,
  run_id INTEGER REFERENCES runs(id),
  role TEXT NOT NULL,
  record TEXT NOT NULL,
  created_at TEXT NOT NULL DEFAULT ()sql" ACCELOPT_NOW R"sql()
);
CREATE INDEX llm_calls_by_run ON llm_calls(run_id, seq);
CREATE TABLE evaluations (
  key TEXT PRIMARY KEY,
  run_id INTEGER REFERENCES runs(id),
  task TEXT NOT NULL,
  profile TEXT NOT NULL,
  created_at TEXT NOT NULL DEFAULT ()sql" ACCELOPT_NOW R"sql()
);
CREATE TABLE candidates (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  run_id INTEGER REFERENCES runs(id),
  task TEXT NOT NULL,
  iteration INTEGER NOT NULL,
  parent_id INTEGER REFERENCES candidates(id),
  plan TEXT NOT NULL,
  code TEXT NOT NULL,
  code_hash TEXT NOT NULL,
  status TEXT NOT NULL,
  latency_s REAL,
  percent_of_peak REAL,
  profile TEXT NOT NULL,
  created_at TEXT NOT NULL DEFAULT ()sql" ACCELOPT_NOW R"sql()
);
CREATE INDEX candidates_by_run_task ON candidates(run_id, task);
CREATE TABLE iterations (
  run_id INTEGER NOT NULL REFERENCES runs(id),
  task TEXT NOT NULL,
  iteration INTEGER NOT NULL,
  state TEXT NOT NULL,
  updated_at TEXT NOT NULL DEFAULT ()sql" ACCELOPT_NOW R"sql(),
  PRIMARY KEY (run_id, task, iteration)
);
CREATE TABLE lessons (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  memory TEXT NOT NULL,
  task TEXT NOT NULL,
  target TEXT NOT NULL,
  speedup REAL,
  title TEXT NOT NULL,
  text TEXT NOT NULL,
  run_id INTEGER NOT NULL,
  slow_candidate INTEGER NOT NULL,
  fast_candidate INTEGER NOT NULL,
  created_at TEXT NOT NULL
);
CREATE INDEX lessons_by_memory ON lessons(memory);
)sql",
    // Lessons carry their verified interval and tags (family, bound, language, strategies).
    R"sql(
ALTER TABLE lessons ADD COLUMN speedup_low REAL;
ALTER TABLE lessons ADD COLUMN speedup_high REAL;
ALTER TABLE lessons ADD COLUMN tags TEXT NOT NULL DEFAULT '{}';
)sql",
    // The job queue (service/job_queue.h): one row per job key; times are Unix
    // seconds (REAL) by the database's clock, so every worker reads one clock.
    R"sql(
CREATE TABLE jobs (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  key TEXT NOT NULL UNIQUE,
  machine_class TEXT NOT NULL,
  job TEXT NOT NULL,
  state TEXT NOT NULL CHECK (state IN ('queued', 'running', 'done', 'failed')),
  attempts INTEGER NOT NULL DEFAULT 0,
  worker TEXT,
  device TEXT,
  lease_until REAL,
  outcome TEXT,
  error TEXT,
  created_at TEXT NOT NULL DEFAULT ()sql" ACCELOPT_NOW R"sql(),
  finished_at TEXT
);
CREATE INDEX jobs_claimable ON jobs(machine_class, state, id);
CREATE TABLE hardware (
  target TEXT NOT NULL,
  machine TEXT NOT NULL,
  profile TEXT NOT NULL,
  updated_at TEXT NOT NULL DEFAULT ()sql" ACCELOPT_NOW R"sql(),
  PRIMARY KEY (target, machine)
);
CREATE TABLE workers (
  name TEXT PRIMARY KEY,
  device TEXT NOT NULL,
  machine_class TEXT NOT NULL,
  seen REAL NOT NULL
);
)sql",
    // A lesson's interval keeps its coverage (PairedSpeedup::coverage); NULL: unknown.
    R"sql(
ALTER TABLE lessons ADD COLUMN speedup_coverage REAL;
)sql",
    // A candidate's side-by-side comparison with its parent (PairedSpeedup as
    // JSON; NULL: not compared), set when the search compares them.
    R"sql(
ALTER TABLE candidates ADD COLUMN vs_parent TEXT;
)sql",
    // A run's live progress (Store::PutRunProgress): one document per run, replaced as the run goes.
    R"sql(
CREATE TABLE run_progress (
  run_id INTEGER PRIMARY KEY REFERENCES runs(id),
  progress TEXT NOT NULL,
  updated_at TEXT NOT NULL DEFAULT ()sql" ACCELOPT_NOW R"sql()
);
)sql",
};
constexpr int kSchemaVersion = static_cast<int>(std::size(kMigrations));


class SqliteStore : public Store {
 public:
  SqliteStore(std::string file, sqlite3* db) : file_(std::move(file)), db_(db), statements_(file_, db_) {}
  // close_v2: the connection closes once the cache (destroyed after this body) has finalized its statements.
  ~SqliteStore() override { sqlite3_close_v2(db_); }

  Status Init(int busy_timeout_ms, bool read_only) {
    std::lock_guard lock(mu_);
    sqlite3_busy_timeout(db_, busy_timeout_ms);
    if (read_only) return InitReadOnly();
    if (Status s = Exec("enable foreign keys", "PRAGMA foreign_keys = ON"); !s) return s;
    // The first statement that reads the file: a corrupt file fails here.
    // Changing the journal mode takes a lock that SQLite does not wait for
    // through the busy handler, so when another process is creating the same
    // store at this moment it fails at once with SQLITE_BUSY: wait here instead.
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(busy_timeout_ms);
    for (;;) {
      Query q = Prepare("set WAL journal mode", "PRAGMA journal_mode = WAL");
      auto row = q.Next();
      if (!row && (sqlite3_errcode(db_) & 0xff) == SQLITE_BUSY && std::chrono::steady_clock::now() < deadline) {
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
        continue;
      }
      if (!row) return row.error();
      std::string mode = *row ? q.Text(0) : "";
      if (mode != "wal" && mode != "memory") return q.Fail("journal mode is '" + mode + "', not 'wal'");
      break;
    }
    // FULL rather than NORMAL: with WAL, NORMAL already survives kill -9 (a
    // committed transaction is in the WAL file, the OS writes it out later), but
    // a power cut or kernel crash may lose the last commits. FULL syncs the WAL
    // on every commit so the header's promise (durable when the call returns)
    // holds there too. Writes are rare next to the LLM calls and evaluations they
    // record, so one fsync each costs nothing that matters.
    if (Status s = Exec("set synchronous mode", "PRAGMA synchronous = FULL"); !s) return s;
    return Migrate();
  }

  Result<int64_t> CreateRun(const Json& config) override {
    std::lock_guard lock(mu_);
    Query q = Prepare("create run", "INSERT INTO runs (status, config) VALUES ('running', ?)");
    q.BindJson(config);
    if (Status s = q.Run(); !s) return s.error();
    return sqlite3_last_insert_rowid(db_);
  }

  Status SetRunStatus(int64_t run_id, const std::string& status, const Json& summary) override {
    std::lock_guard lock(mu_);
    Query q = Prepare("set run status", "UPDATE runs SET status = ?, summary = ? WHERE id = ?");
    q.BindText(status).BindJson(summary).BindInt(run_id);
    if (Status s = q.Run(); !s) return s;
    if (sqlite3_changes(db_) == 0) return q.Fail("no run " + std::to_string(run_id));
    return Ok{};
  }

  Result<std::optional<RunInfo>> GetRun(int64_t run_id) override {
    std::lock_guard lock(mu_);
    Query q = Prepare("get run", "SELECT id, created_at, status, config, summary FROM runs WHERE id = ?");
    q.BindInt(run_id);
    return ReadOne<RunInfo>(q, &SqliteStore::ReadRun);
  }

  Result<std::vector<RunInfo>> ListRuns() override {
    std::lock_guard lock(mu_);
    Query q = Prepare("list runs", "SELECT id, created_at, status, config, summary FROM runs ORDER BY id DESC");
    return ReadAll<RunInfo>(q, &SqliteStore::ReadRun);
  }

  Result<std::optional<Json>> GetLlmCall(const std::string& key) override {
    std::lock_guard lock(mu_);
    Query q = Prepare("get LLM call", "SELECT record FROM llm_calls WHERE key = ?");
    q.BindText(key);
    return ReadOne<Json>(q, &SqliteStore::ReadJson);
  }

  // Keeps the first record under a key: a second call with the same key is the
  // same request answered again (a resumed run racing its own cache), and the
  // answer already recorded is the one earlier decisions were based on.
  Status PutLlmCall(const std::string& key, int64_t run_id, const std::string& role, const Json& record) override {
    std::lock_guard lock(mu_);
    // seq orders a run's calls; computed inside the INSERT, under the write lock.
    Query q = Prepare("put LLM call",
                      "INSERT INTO llm_calls (key, seq, run_id, role, record) "
                      "VALUES (?, (SELECT COALESCE(MAX(seq), 0) + 1 FROM llm_calls), ?, ?, ?) "
                      "ON CONFLICT (key) DO NOTHING");
    q.BindText(key).BindId(run_id).BindText(role).BindJson(record);
    return q.Run();
  }

  Status RejectLlmCall(const std::string& key, const std::string& reason) override {
    std::lock_guard lock(mu_);
    Query q =
        Prepare("reject LLM call", "UPDATE llm_calls SET record = json_set(record, '$.rejected', ?) WHERE key = ?");
    q.BindText(reason).BindText(key);
    return q.Run();
  }

  Result<std::vector<Json>> ListLlmCalls(int64_t run_id) override {
    std::lock_guard lock(mu_);
    Query q = Prepare("list LLM calls", "SELECT record FROM llm_calls WHERE run_id = ? ORDER BY seq");
    q.BindInt(run_id);
    return ReadAll<Json>(q, &SqliteStore::ReadJson);
  }

  Result<std::optional<Json>> GetEvaluation(const std::string& key) override {
    std::lock_guard lock(mu_);
    Query q = Prepare("get evaluation", "SELECT profile FROM evaluations WHERE key = ?");
    q.BindText(key);
    return ReadOne<Json>(q, &SqliteStore::ReadJson);
  }

  // Keeps the first profile under a key, as PutLlmCall does: the same code on
  // the same task was measured already, and candidates refer to that result.
  Status PutEvaluation(const std::string& key, int64_t run_id, const std::string& task, const Json& profile) override {
    std::lock_guard lock(mu_);
    Query q = Prepare("put evaluation",
                      "INSERT INTO evaluations (key, run_id, task, profile) VALUES (?, ?, ?, ?) "
                      "ON CONFLICT (key) DO NOTHING");
    q.BindText(key).BindId(run_id).BindText(task).BindJson(profile);
    return q.Run();
  }

  // Status, median latency and percentage of peak are kept in columns of
  // their own too, for queries.
  Result<int64_t> AddCandidate(const StoredCandidate& stored) override {
    std::lock_guard lock(mu_);
    const Candidate& c = stored.candidate;
    Query q = Prepare("add candidate",
                      "INSERT INTO candidates (run_id, task, iteration, parent_id, plan, code, code_hash, status, "
                      "latency_s, percent_of_peak, profile) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
    q.BindId(stored.run_id).BindText(stored.task).BindInt(c.iteration).BindId(c.parent_id).BindText(c.plan);
    q.BindText(c.code).BindText(c.hash).BindText(VerdictName(c.profile.status)).BindReal(c.latency());
    q.BindReal(c.profile.percent_of_peak).BindJson(c.profile.ToJson());
    if (Status s = q.Run(); !s) return s.error();
    return sqlite3_last_insert_rowid(db_);
  }

  Status SetVsParent(int64_t candidate_id, const PairedSpeedup& speedup) override {
    std::lock_guard lock(mu_);
    Query q = Prepare("set a candidate's comparison", "UPDATE candidates SET vs_parent = ? WHERE id = ?");
    q.BindJson(ToJson(speedup)).BindInt(candidate_id);
    if (Status s = q.Run(); !s) return s;
    if (sqlite3_changes(db_) == 0) return Error{file_ + ": no candidate " + std::to_string(candidate_id)};
    return Ok{};
  }

  Result<std::optional<StoredCandidate>> GetCandidate(int64_t id) override {
    std::lock_guard lock(mu_);
    Query q = Prepare("get candidate", ACCELOPT_SELECT_CANDIDATE " WHERE id = ?");
    q.BindInt(id);
    return ReadOne<StoredCandidate>(q, &SqliteStore::ReadCandidate);
  }

  Result<std::vector<StoredCandidate>> ListCandidates(int64_t run_id, const std::string& task) override {
    std::lock_guard lock(mu_);
    if (task.empty()) {
      Query q = Prepare("list candidates", ACCELOPT_SELECT_CANDIDATE " WHERE run_id = ? ORDER BY id");
      q.BindInt(run_id);
      return ReadAll<StoredCandidate>(q, &SqliteStore::ReadCandidate);
    }
    Query q = Prepare("list candidates", ACCELOPT_SELECT_CANDIDATE " WHERE run_id = ? AND task = ? ORDER BY id");
    q.BindInt(run_id).BindText(task);
    return ReadAll<StoredCandidate>(q, &SqliteStore::ReadCandidate);
  }

  // Replaces the state of an iteration already recorded (the iteration was redone).
  Status PutIteration(int64_t run_id, const std::string& task, int iteration, const Json& state) override {
    std::lock_guard lock(mu_);
    Query q = Prepare("put iteration",
                      "INSERT INTO iterations (run_id, task, iteration, state) VALUES (?, ?, ?, ?) "
                      "ON CONFLICT (run_id, task, iteration) DO UPDATE SET state = excluded.state, "
                      "updated_at = " ACCELOPT_NOW);
    q.BindId(run_id).BindText(task).BindInt(iteration).BindJson(state);
    return q.Run();
  }

  Result<std::optional<std::pair<int, Json>>> LatestIteration(int64_t run_id, const std::string& task) override {
    std::lock_guard lock(mu_);
    Query q = Prepare("latest iteration",
                      "SELECT iteration, state FROM iterations WHERE run_id = ? AND task = ? "
                      "ORDER BY iteration DESC LIMIT 1");
    q.BindInt(run_id).BindText(task);
    return ReadOne<std::pair<int, Json>>(q, [](const Query& r) -> Result<std::pair<int, Json>> {
      auto state = r.JsonAt(1);
      if (!state) return state.error();
      return std::pair<int, Json>(static_cast<int>(r.Int(0)), std::move(*state));
    });
  }

  // created_at is kept when the caller sets it (a lesson copied from another
  // memory), else it is now.
  Result<int64_t> AddLesson(const StoredLesson& stored) override {
    std::lock_guard lock(mu_);
    const Lesson& lesson = stored.lesson;
    Query q = Prepare("add lesson",
                      "INSERT INTO lessons (memory, task, target, speedup, title, text, run_id, slow_candidate, "
                      "fast_candidate, created_at, speedup_low, speedup_high, tags, speedup_coverage) VALUES (?, ?, ?, ?, "
                      "?, ?, ?, ?, ?, COALESCE(?, " ACCELOPT_NOW "), ?, ?, ?, ?)");
    q.BindText(stored.memory).BindText(lesson.tags.task).BindText(lesson.tags.target).BindReal(lesson.speedup);
    q.BindText(lesson.title).BindText(lesson.text).BindInt(stored.run_id).BindInt(stored.slow_candidate);
    q.BindInt(stored.fast_candidate).BindTextOrNull(stored.created_at);
    q.BindReal(lesson.low).BindReal(lesson.high);
    q.BindJson(LessonTagsToJson(lesson.tags));
    q.BindReal(lesson.coverage);
    if (Status s = q.Run(); !s) return s.error();
    return sqlite3_last_insert_rowid(db_);
  }

  Result<std::vector<StoredLesson>> ListLessons(const std::string& memory, int limit) override {
    std::lock_guard lock(mu_);
    // LIMIT -1 is SQLite's "no limit".
    Query q = Prepare("list lessons", ACCELOPT_SELECT_LESSON " WHERE memory = ? ORDER BY id DESC LIMIT ?");
    q.BindText(memory).BindInt(limit > 0 ? limit : -1);
    return ReadAll<StoredLesson>(q, &SqliteStore::ReadLesson);
  }

  Result<std::optional<StoredLesson>> GetLesson(int64_t id) override {
    std::lock_guard lock(mu_);
    Query q = Prepare("get lesson", ACCELOPT_SELECT_LESSON " WHERE id = ?");
    q.BindInt(id);
    return ReadOne<StoredLesson>(q, &SqliteStore::ReadLesson);
  }

  Status PutHardware(const std::string& target, const std::string& machine, const Json& profile) override {
    std::lock_guard lock(mu_);
    Query q = Prepare("put hardware profile",
                      "INSERT INTO hardware (target, machine, profile) VALUES (?, ?, ?) ON CONFLICT(target, machine) "
                      "DO UPDATE SET profile = excluded.profile, updated_at = excluded.updated_at");
    q.BindText(target).BindText(machine).BindJson(profile);
    return q.Run();
  }

  Result<std::optional<Json>> GetHardware(const std::string& target, const std::string& machine) override {
    std::lock_guard lock(mu_);
    Query q = Prepare("get hardware profile", "SELECT profile FROM hardware WHERE target = ? AND machine = ?");
    q.BindText(target).BindText(machine);
    auto row = q.Next();
    if (!row) return row.error();
    if (!*row) return std::optional<Json>();
    auto json = q.JsonAt(0);
    if (!json) return json.error();
    return std::optional<Json>(std::move(*json));
  }

  Status PutRunProgress(int64_t run_id, const Json& progress) override {
    std::lock_guard lock(mu_);
    Query q = Prepare("put run progress",
                      "INSERT INTO run_progress (run_id, progress) VALUES (?, ?) ON CONFLICT (run_id) DO UPDATE SET "
                      "progress = excluded.progress, updated_at = excluded.updated_at");
    q.BindInt(run_id).BindJson(progress);
    return q.Run();
  }

  Result<std::optional<Json>> GetRunProgress(int64_t run_id) override {
    std::lock_guard lock(mu_);
    Query q = Prepare("get run progress", "SELECT progress FROM run_progress WHERE run_id = ?");
    q.BindInt(run_id);
    return ReadOne<Json>(q, &SqliteStore::ReadJson);
  }

  Result<std::vector<std::pair<std::string, int>>> ListMemories() override {
    std::lock_guard lock(mu_);
    Query q = Prepare("list memories", "SELECT memory, COUNT(*) FROM lessons GROUP BY memory ORDER BY memory");
    return ReadAll<std::pair<std::string, int>>(q, [](const Query& r) -> Result<std::pair<std::string, int>> {
      return std::pair<std::string, int>(r.Text(0), static_cast<int>(r.Int(1)));
    });
  }

 private:
  static Result<RunInfo> ReadRun(const Query& r) {
    RunInfo run{.id = r.Int(0), .created_at = r.Text(1), .status = r.Text(2)};
    auto config = r.JsonAt(3);
    if (!config) return config.error();
    auto summary = r.JsonAt(4);
    if (!summary) return summary.error();
    run.config = std::move(*config);
    run.summary = std::move(*summary);
    return run;
  }

  static Result<Json> ReadJson(const Query& r) { return r.JsonAt(0); }

  static Result<StoredCandidate> ReadCandidate(const Query& r) {
    StoredCandidate stored{.run_id = r.Int(1), .task = r.Text(2)};
    Candidate& c = stored.candidate;
    c.id = r.Int(0);
    c.iteration = static_cast<int>(r.Int(3));
    c.parent_id = r.Int(4);
    c.plan = r.Text(5);
    c.code = r.Text(6);
    c.hash = r.Text(7);
    auto json = r.JsonAt(11);
    if (!json) return json.error();
    std::optional<Json> vs;
    if (!r.Text(12).empty()) {
      auto read = r.JsonAt(12);
      if (!read) return read.error();
      vs = std::move(*read);
    }
    if (Status s = ReadCandidateValues(*json, vs, c); !s) return r.Fail(s.error().message);
    return stored;
  }

  static Result<StoredLesson> ReadLesson(const Query& r) {
    StoredLesson stored{.memory = r.Text(1),
                        .run_id = r.Int(7),
                        .slow_candidate = r.Int(8),
                        .fast_candidate = r.Int(9),
                        .created_at = r.Text(10)};
    Lesson& l = stored.lesson;
    l.id = r.Int(0);
    l.tags.task = r.Text(2);
    l.tags.target = r.Text(3);
    l.speedup = r.Real(4);
    l.title = r.Text(5);
    l.text = r.Text(6);
    // Recorded before intervals were kept (NULL): the estimate is all there is.
    l.low = std::isnan(r.Real(11)) ? l.speedup : r.Real(11);
    l.high = std::isnan(r.Real(12)) ? l.speedup : r.Real(12);
    l.coverage = std::isnan(r.Real(14)) ? 0 : r.Real(14);
    auto tags = r.JsonAt(13);
    if (!tags) return tags.error();
    if (Status s = LessonTagsFromJson(*tags, l.tags); !s)
      return r.Fail("lesson " + std::to_string(l.id) + " " + s.error().message);
    return stored;
  }

  template <typename T, typename Reader>
  static Result<std::optional<T>> ReadOne(Query& q, Reader read) {
    auto row = q.Next();
    if (!row) return row.error();
    if (!*row) return std::optional<T>();
    auto value = read(q);
    if (!value) return value.error();
    return std::optional<T>(std::move(*value));
  }

  template <typename T, typename Reader>
  static Result<std::vector<T>> ReadAll(Query& q, Reader read) {
    std::vector<T> out;
    for (;;) {
      auto row = q.Next();
      if (!row) return row.error();
      if (!*row) return out;
      auto value = read(q);
      if (!value) return value.error();
      out.push_back(std::move(*value));
    }
  }

  // Statements are prepared once per connection and reused; mu_ must be held.
  Query Prepare(const char* op, const char* sql) { return statements_.Prepare(op, sql); }

  // For fixed SQL without parameters (pragmas, schema scripts, transactions).
  Status Exec(const std::string& op, const std::string& sql) {
    int rc = sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, nullptr);
    if (rc != SQLITE_OK) return Error{file_ + ": " + op + ": " + sqlite3_errmsg(db_)};
    return Ok{};
  }

  // Reads a store some other process keeps (WAL already set, schema already
  // migrated): query_only makes SQLite refuse every write on this connection.
  Status InitReadOnly() {
    if (Status s = Exec("refuse writes", "PRAGMA query_only = ON"); !s) return s;
    auto version = UserVersion();
    if (!version) return version.error();
    if (*version != kSchemaVersion)
      return Error{file_ + ": schema version " + std::to_string(*version) + ", where this program reads version " +
                   std::to_string(kSchemaVersion) +
                   (*version < kSchemaVersion ? ": open it once with a command that writes (`accelopt runs --db " +
                                                    file_ + "`) to migrate it"
                                              : ": a newer accelopt wrote it")};
    return Ok{};
  }

  Result<int> UserVersion() {
    Query q = Prepare("read schema version", "PRAGMA user_version");
    auto row = q.Next();
    if (!row) return row.error();
    return *row ? static_cast<int>(q.Int(0)) : 0;
  }

  // Brings the schema to kSchemaVersion, all pending steps in one transaction.
  // BEGIN IMMEDIATE takes the write lock first, so two processes opening a new
  // file at once do not both run a step: the second sees the version move on.
  Status Migrate() {
    auto version = UserVersion();
    if (!version) return version.error();
    if (*version == kSchemaVersion) return Ok{};
    if (Status s = Exec("migrate schema", "BEGIN IMMEDIATE"); !s) return s;
    Status s = MigrateInTransaction();
    if (!s) {
      sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
      return s;
    }
    return Exec("migrate schema", "COMMIT");
  }

  Status MigrateInTransaction() {
    auto version = UserVersion();
    if (!version) return version.error();
    if (*version > kSchemaVersion) {
      return Error{file_ + ": open: schema version " + std::to_string(*version) +
                   " is newer than this program knows (" + std::to_string(kSchemaVersion) + ")"};
    }
    for (int v = *version; v < kSchemaVersion; ++v) {
      std::string op = "migrate schema to version " + std::to_string(v + 1);
      if (Status s = Exec(op, kMigrations[v]); !s) return s;
      // A pragma takes no bound parameters; the value is our own integer.
      if (Status s = Exec(op, "PRAGMA user_version = " + std::to_string(v + 1)); !s) return s;
    }
    return Ok{};
  }

  const std::string file_;
  std::mutex mu_;
  sqlite3* db_;
  StatementCache statements_;
};

#undef ACCELOPT_NOW
#undef ACCELOPT_SELECT_CANDIDATE
#undef ACCELOPT_SELECT_LESSON

}  // namespace

Result<std::unique_ptr<Store>> OpenSqliteStore(const SqliteOptions& options) {
  const std::string& path = options.path;
  bool on_disk = path != ":memory:" && !path.empty() && path.rfind("file:", 0) != 0;
  if (on_disk && (!options.create || options.read_only)) {
    std::error_code ec;
    if (!std::filesystem::exists(path, ec))
      return Error{path + ": no such store (runs are recorded by `accelopt optimize`; --db names another store)"};
    if (std::filesystem::is_directory(path, ec)) return Error{path + ": is a directory, not a store"};
  }
  if (on_disk && options.create && !options.read_only) {
    auto parent = std::filesystem::path(path).parent_path();
    std::error_code ec;
    if (!parent.empty()) std::filesystem::create_directories(parent, ec);
    if (ec) return Error{path + ": open: cannot create folder " + parent.string() + ": " + ec.message()};
  }
  sqlite3* db = nullptr;
  // NOMUTEX: the store's own mutex serializes every use of the connection.
  // Read-only stays READWRITE without CREATE: a reader of a WAL file needs its
  // shared-memory index, which a READONLY connection cannot make; query_only
  // (InitReadOnly) then refuses every write.
  const int mode = options.read_only ? SQLITE_OPEN_READWRITE : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE;
  int rc = sqlite3_open_v2(path.c_str(), &db, mode | SQLITE_OPEN_NOMUTEX, nullptr);
  if (rc != SQLITE_OK) {
    std::string message = db ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
    if (int err = db ? sqlite3_system_errno(db) : 0; err != 0) message += std::string(" (") + std::strerror(err) + ")";
    sqlite3_close_v2(db);
    return Error{path + ": open: " + message};
  }
  auto store = std::make_unique<SqliteStore>(path, db);
  if (Status s = store->Init(options.busy_timeout_ms, options.read_only); !s) return s.error();
  return std::unique_ptr<Store>(std::move(store));
}

}  // namespace accelopt::store
