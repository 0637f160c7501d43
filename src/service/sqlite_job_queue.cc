// The job queue in the store's SQLite file: workers on one machine share it
// (WAL mode lets readers go on while one writer commits). Every state change
// is one IMMEDIATE transaction, so two workers never claim one attempt.

#include <sqlite3.h>

#include <mutex>

#include "service/job_queue.h"
#include "store/sqlite_query.h"
#include "store/store.h"

namespace accelopt::service {
namespace {

// Unix seconds, fractional, by the database's clock.
#define ACCELOPT_UNIX_NOW "((julianday('now') - 2440587.5) * 86400.0)"

std::optional<JobState> StateFromName(const std::string& name) {
  if (name == "queued") return JobState::kQueued;
  if (name == "running") return JobState::kRunning;
  if (name == "done") return JobState::kDone;
  if (name == "failed") return JobState::kFailed;
  return std::nullopt;
}

class SqliteJobQueue : public JobQueue {
 public:
  SqliteJobQueue(std::string file, sqlite3* db, QueueOptions options)
      : file_(std::move(file)), db_(db), statements_(file_, db_), options_(options) {}
  ~SqliteJobQueue() override { sqlite3_close_v2(db_); }

  Status Init(int busy_timeout_ms) {
    std::lock_guard lock(mu_);
    sqlite3_busy_timeout(db_, busy_timeout_ms);
    // NORMAL, not the store's FULL: in WAL mode a commit still survives the
    // death of any process (a killed worker or engine loses nothing), and
    // only a power cut may lose the last commits, which costs a job measured
    // again, never a result recorded twice. The queue commits several times
    // per job; an fsync each would be most of its overhead.
    return Exec("set synchronous mode", "PRAGMA synchronous = NORMAL");
  }

  Result<int64_t> Enqueue(const EvalJob& job) override {
    std::lock_guard lock(mu_);
    const std::string key = job.Key();
    return InTransaction("enqueue " + key, [&]() -> Result<int64_t> {
      store::Query find = Prepare("enqueue: find", "SELECT id, state FROM jobs WHERE key = ?");
      find.BindText(key);
      auto row = find.Next();
      if (!row) return row.error();
      if (*row) {
        const int64_t id = find.Int(0);
        if (find.Text(1) != "failed") return id;
        store::Query again = Prepare("enqueue: queue a failed job again",
                                     "UPDATE jobs SET state = 'queued', attempts = 0, worker = NULL, device = NULL, "
                                     "lease_until = NULL, error = NULL, finished_at = NULL WHERE id = ?");
        again.BindInt(id);
        if (Status s = again.Run(); !s) return s.error();
        return id;
      }
      store::Query insert =
          Prepare("enqueue", "INSERT INTO jobs (key, machine_class, job, state) VALUES (?, ?, ?, 'queued')");
      insert.BindText(key).BindText(job.machine_class).BindJson(job.ToJson());
      if (Status s = insert.Run(); !s) return s.error();
      return sqlite3_last_insert_rowid(db_);
    });
  }

  Result<std::optional<ClaimedJob>> Claim(const WorkerInfo& worker) override {
    std::lock_guard lock(mu_);
    return InTransaction("claim", [&]() -> Result<std::optional<ClaimedJob>> {
      if (Status s = SeeWorker(worker); !s) return s.error();
      for (;;) {
        store::Query next = Prepare("claim: find",
                                    "SELECT id, job, attempts, state FROM jobs WHERE machine_class = ? AND "
                                    "(state = 'queued' OR (state = 'running' AND lease_until < " ACCELOPT_UNIX_NOW
                                    ")) ORDER BY id LIMIT 1");
        next.BindText(worker.machine_class);
        auto row = next.Next();
        if (!row) return row.error();
        if (!*row) return std::optional<ClaimedJob>();
        const int64_t id = next.Int(0);
        const int attempts = static_cast<int>(next.Int(2));
        const bool lapsed = next.Text(3) == "running";
        auto json = next.JsonAt(1);
        if (!json) return json.error();
        auto job = EvalJob::FromJson(*json);
        std::string failure;
        if (!job)
          failure = "the queued job cannot be read: " + job.error().message;
        else if (lapsed && attempts >= options_.max_attempts)
          failure = "its worker was lost " + std::to_string(attempts) + " times (its lease lapsed each time)";
        if (!failure.empty()) {
          store::Query fail = Prepare("claim: fail a job",
                                      "UPDATE jobs SET state = 'failed', error = ?, finished_at = "
                                      "strftime('%Y-%m-%dT%H:%M:%SZ', 'now') WHERE id = ?");
          fail.BindText(failure).BindInt(id);
          if (Status s = fail.Run(); !s) return s.error();
          continue;
        }
        store::Query take = Prepare("claim: take",
                                    "UPDATE jobs SET state = 'running', attempts = attempts + 1, worker = ?, "
                                    "device = ?, lease_until = " ACCELOPT_UNIX_NOW " + ? WHERE id = ?");
        take.BindText(worker.name).BindText(worker.device).BindReal(options_.lease_seconds).BindInt(id);
        if (Status s = take.Run(); !s) return s.error();
        return std::optional<ClaimedJob>(ClaimedJob{id, attempts + 1, std::move(*job)});
      }
    });
  }

  Status Heartbeat(const ClaimedJob& claimed, const WorkerInfo& worker) override {
    std::lock_guard lock(mu_);
    auto held = InTransaction("heartbeat", [&]() -> Result<bool> {
      if (Status s = SeeWorker(worker); !s) return s.error();
      store::Query renew = Prepare("heartbeat",
                                   "UPDATE jobs SET lease_until = " ACCELOPT_UNIX_NOW
                                   " + ? WHERE id = ? AND state = 'running' AND worker = ? AND attempts = ?");
      renew.BindReal(options_.lease_seconds).BindInt(claimed.id).BindText(worker.name).BindInt(claimed.attempt);
      if (Status s = renew.Run(); !s) return s.error();
      return sqlite3_changes(db_) > 0;
    });
    if (!held) return held.error();
    if (!*held) return Lost(claimed);
    return Ok{};
  }

  Status Complete(const ClaimedJob& claimed, const WorkerInfo& worker, const EvalOutcome& outcome) override {
    std::lock_guard lock(mu_);
    auto held = InTransaction("complete", [&]() -> Result<bool> {
      store::Query done = Prepare("complete",
                                  "UPDATE jobs SET state = 'done', outcome = ?, lease_until = NULL, finished_at = "
                                  "strftime('%Y-%m-%dT%H:%M:%SZ', 'now') "
                                  "WHERE id = ? AND state = 'running' AND worker = ? AND attempts = ?");
      done.BindJson(outcome.ToJson()).BindInt(claimed.id).BindText(worker.name).BindInt(claimed.attempt);
      if (Status s = done.Run(); !s) return s.error();
      return sqlite3_changes(db_) > 0;
    });
    if (!held) return held.error();
    if (!*held) return Lost(claimed);
    return Ok{};
  }

  Status Fail(const ClaimedJob& claimed, const WorkerInfo& worker, const JobError& error) override {
    std::lock_guard lock(mu_);
    const bool again = error.retryable && claimed.attempt < options_.max_attempts;
    auto held = InTransaction("fail", [&]() -> Result<bool> {
      store::Query fail = Prepare("fail",
                                  "UPDATE jobs SET state = ?, error = ?, lease_until = NULL, finished_at = "
                                  "CASE WHEN ? THEN NULL ELSE strftime('%Y-%m-%dT%H:%M:%SZ', 'now') END "
                                  "WHERE id = ? AND state = 'running' AND worker = ? AND attempts = ?");
      fail.BindText(again ? "queued" : "failed")
          .BindText(error.message)
          .BindInt(again ? 1 : 0)
          .BindInt(claimed.id)
          .BindText(worker.name)
          .BindInt(claimed.attempt);
      if (Status s = fail.Run(); !s) return s.error();
      return sqlite3_changes(db_) > 0;
    });
    if (!held) return held.error();
    if (!*held) return Lost(claimed);
    return Ok{};
  }

  Result<std::vector<JobStatus>> Poll(std::span<const int64_t> ids) override {
    std::lock_guard lock(mu_);
    return InTransaction("poll", [&]() -> Result<std::vector<JobStatus>> {
      std::vector<JobStatus> out;
      for (int64_t id : ids) {
        store::Query q = Prepare("poll", "SELECT key, state, attempts, worker, outcome, error FROM jobs WHERE id = ?");
        q.BindInt(id);
        auto row = q.Next();
        if (!row) return row.error();
        if (!*row) return q.Fail("no job " + std::to_string(id));
        JobStatus status;
        status.id = id;
        status.key = q.Text(0);
        auto state = StateFromName(q.Text(1));
        if (!state) return q.Fail("job " + std::to_string(id) + " has an unknown state '" + q.Text(1) + "'");
        status.state = *state;
        status.attempts = static_cast<int>(q.Int(2));
        status.worker = q.Text(3);
        if (status.state == JobState::kDone) {
          auto outcome = q.JsonAt(4);
          if (!outcome) return outcome.error();
          status.outcome = std::move(*outcome);
        }
        status.error = q.Text(5);
        out.push_back(std::move(status));
      }
      return out;
    }, /*write=*/false);
  }

  Result<QueueCounts> Counts(double alive_within) override {
    std::lock_guard lock(mu_);
    return InTransaction("count jobs", [&]() -> Result<QueueCounts> {
      QueueCounts counts;
      store::Query q = Prepare("count jobs", "SELECT state, count(*) FROM jobs GROUP BY state");
      for (;;) {
        auto row = q.Next();
        if (!row) return row.error();
        if (!*row) break;
        const int n = static_cast<int>(q.Int(1));
        switch (StateFromName(q.Text(0)).value_or(JobState::kFailed)) {
          case JobState::kQueued: counts.queued = n; break;
          case JobState::kRunning: counts.running = n; break;
          case JobState::kDone: counts.done = n; break;
          case JobState::kFailed: counts.failed = n; break;
        }
      }
      store::Query w = Prepare("list workers", "SELECT name, device, machine_class FROM workers WHERE seen > "
                                               ACCELOPT_UNIX_NOW " - ? ORDER BY name");
      w.BindReal(alive_within);
      for (;;) {
        auto row = w.Next();
        if (!row) return row.error();
        if (!*row) break;
        counts.live_workers.push_back({w.Text(0), w.Text(1), w.Text(2)});
      }
      return counts;
    }, /*write=*/false);
  }

  Result<int> Outstanding(const std::string& machine_class) override {
    std::lock_guard lock(mu_);
    return InTransaction("count outstanding jobs", [&]() -> Result<int> {
      store::Query q = Prepare("count outstanding jobs",
                               "SELECT count(*) FROM jobs WHERE machine_class = ? AND state IN ('queued', 'running')");
      q.BindText(machine_class);
      auto row = q.Next();
      if (!row) return row.error();
      return *row ? static_cast<int>(q.Int(0)) : 0;
    }, /*write=*/false);
  }

 private:
  store::Query Prepare(const char* op, const char* sql) { return statements_.Prepare(op, sql); }

  Status Exec(const std::string& op, const std::string& sql) {
    if (sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, nullptr) != SQLITE_OK)
      return Error{file_ + ": " + op + ": " + sqlite3_errmsg(db_)};
    return Ok{};
  }

  // Runs `body` in one transaction (IMMEDIATE when it writes: the write lock
  // first, so a claim never reads a row another claim is taking); rolled back
  // when it fails.
  template <typename F>
  auto InTransaction(const std::string& op, F body, bool write = true) -> decltype(body()) {
    if (Status s = Exec(op, write ? "BEGIN IMMEDIATE" : "BEGIN"); !s) return s.error();
    auto result = body();
    if (!result) {
      sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
      return result;
    }
    if (Status s = Exec(op, "COMMIT"); !s) {
      sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
      return s.error();
    }
    return result;
  }

  Status SeeWorker(const WorkerInfo& worker) {
    store::Query seen = Prepare("record a worker",
                                "INSERT INTO workers (name, device, machine_class, seen) VALUES (?, ?, ?, " ACCELOPT_UNIX_NOW
                                ") ON CONFLICT(name) DO UPDATE SET device = excluded.device, "
                                "machine_class = excluded.machine_class, seen = excluded.seen");
    seen.BindText(worker.name).BindText(worker.device).BindText(worker.machine_class);
    return seen.Run();
  }

  Error Lost(const ClaimedJob& claimed) const {
    return Error{file_ + ": job " + std::to_string(claimed.id) + " attempt " + std::to_string(claimed.attempt) +
                 " no longer holds the job (its lease lapsed and another worker took it, or it is finished)"};
  }

  const std::string file_;
  std::mutex mu_;
  sqlite3* db_;
  store::StatementCache statements_;
  QueueOptions options_;
};

#undef ACCELOPT_UNIX_NOW

}  // namespace

const char* JobStateName(JobState state) {
  switch (state) {
    case JobState::kQueued: return "queued";
    case JobState::kRunning: return "running";
    case JobState::kDone: return "done";
    case JobState::kFailed: return "failed";
  }
  return "?";
}

Result<std::unique_ptr<JobQueue>> OpenSqliteJobQueue(const SqliteQueueOptions& options) {
  // The store creates the file when missing and brings its schema (the queue's tables among it) up to date.
  {
    store::SqliteOptions store_options;
    store_options.path = options.path;
    store_options.busy_timeout_ms = options.busy_timeout_ms;
    auto store = store::OpenSqliteStore(store_options);
    if (!store) return store.error();
  }
  sqlite3* db = nullptr;
  int rc = sqlite3_open_v2(options.path.c_str(), &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, nullptr);
  if (rc != SQLITE_OK) {
    std::string message = db ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
    sqlite3_close_v2(db);
    return Error{options.path + ": open the job queue: " + message};
  }
  auto queue = std::make_unique<SqliteJobQueue>(options.path, db, options.queue);
  if (Status s = queue->Init(options.busy_timeout_ms); !s) return s.error();
  return std::unique_ptr<JobQueue>(std::move(queue));
}

}  // namespace accelopt::service
