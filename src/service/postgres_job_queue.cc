// The job queue in a PostgreSQL database: workers on many machines share it.
// A claim locks the oldest claimable row with FOR UPDATE SKIP LOCKED, so
// concurrent claims never wait on one another and never take one attempt
// twice; every other change is one UPDATE guarded by the attempt it names.
// Leases are measured by the server's clock (now()), never a worker's.
//
// One connection per queue object, calls serialized by a mutex (as the SQLite
// queue): a worker makes a few calls a second at most, so a connection per
// call would pay a TCP and authentication handshake for each heartbeat for
// no gain, and parallelism comes from separate queue objects (one per worker
// process). A connection found broken is reset once before the next call.

#include <libpq-fe.h>

#include <memory>
#include <mutex>

#include "service/job_queue.h"
#include "service/postgres_migrations.h"

namespace accelopt::service {
namespace {

std::optional<JobState> StateFromName(const std::string& name) {
  if (name == "queued") return JobState::kQueued;
  if (name == "running") return JobState::kRunning;
  if (name == "done") return JobState::kDone;
  if (name == "failed") return JobState::kFailed;
  return std::nullopt;
}


// libpq's messages are multi-line ("...failed: FATAL:  ...\n\tIs the server
// running...?"): one line, single spaces; and never the password, should a
// server or library ever echo it.
std::string OneLine(std::string text, const std::string& password) {
  if (!password.empty()) {
    for (size_t at = text.find(password); at != std::string::npos; at = text.find(password, at))
      text.replace(at, password.size(), "***");
  }
  std::string out;
  for (char c : text) {
    if (c == '\n' || c == '\t' || c == '\r') c = ' ';
    if (c == ' ' && (out.empty() || out.back() == ' ')) continue;
    out.push_back(c);
  }
  while (!out.empty() && out.back() == ' ') out.pop_back();
  return out;
}

struct PgResultDeleter {
  void operator()(PGresult* r) const { PQclear(r); }
};
using PgResult = std::unique_ptr<PGresult, PgResultDeleter>;

struct PgConnDeleter {
  void operator()(PGconn* c) const { PQfinish(c); }
};
using PgConn = std::unique_ptr<PGconn, PgConnDeleter>;


void IgnoreNotice(void*, const char*) {}

class PostgresJobQueue : public JobQueue {
 public:
  PostgresJobQueue(std::string uri, PgConn conn, QueueOptions options)
      : where_(RedactUri(uri)), password_(UriPassword(uri)), conn_(std::move(conn)), options_(options) {}

  Status Migrate() {
    std::lock_guard lock(mu_);
    return InTransaction("migrate schema", [&]() -> Status {
      // Openers of a new database take turns: the second sees the version move on.
      if (auto r = Exec("migrate schema: lock", "SELECT pg_advisory_xact_lock(7420154031)", {}); !r)
        return r.error();
      if (auto r = Exec("migrate schema: version table",
                        "CREATE TABLE IF NOT EXISTS schema_version (version integer PRIMARY KEY, "
                        "applied_at timestamptz NOT NULL DEFAULT now())",
                        {});
          !r)
        return r.error();
      auto r = Exec("read schema version", "SELECT coalesce(max(version), 0) FROM schema_version", {});
      if (!r) return r.error();
      const int version = std::stoi(PQgetvalue(r->get(), 0, 0));
      const int known = static_cast<int>(std::size(kPostgresMigrations));
      if (version > known) {
        return Error{where_ + ": schema version " + std::to_string(version) +
                     " is newer than this program knows (" + std::to_string(known) +
                     "): a newer accelopt migrated this database"};
      }
      for (int v = version; v < known; ++v) {
        const std::string op = "migrate schema to version " + std::to_string(v + 1);
        if (auto m = Exec(op, kPostgresMigrations[v], {}, /*script=*/true); !m) return m.error();
        if (auto m = Exec(op, "INSERT INTO schema_version (version) VALUES ($1::integer)", {std::to_string(v + 1)});
            !m)
          return m.error();
      }
      return Ok{};
    });
  }

  Result<int64_t> Enqueue(const EvalJob& job) override {
    std::lock_guard lock(mu_);
    const std::string key = job.Key();
    const std::string op = "enqueue " + key;
    // One statement: a new key is inserted, a failed job of that key queued
    // again; any other state leaves the row as it is and returns nothing.
    auto r = Exec(op,
                  "INSERT INTO jobs (key, machine_class, job, state) VALUES ($1, $2, $3, 'queued') "
                  "ON CONFLICT (key) DO UPDATE SET state = 'queued', attempts = 0, worker = NULL, device = NULL, "
                  "lease_until = NULL, error = NULL, finished_at = NULL WHERE jobs.state = 'failed' RETURNING id",
                  {key, job.machine_class, DumpJson(job.ToJson())});
    if (!r) return r.error();
    if (PQntuples(r->get()) == 1) return Int(*r, 0, 0);
    auto found = Exec(op, "SELECT id FROM jobs WHERE key = $1", {key});
    if (!found) return found.error();
    if (PQntuples(found->get()) != 1) return Error{where_ + ": " + op + ": the job vanished while it was enqueued"};
    return Int(*found, 0, 0);
  }

  Result<std::optional<ClaimedJob>> Claim(const WorkerInfo& worker) override {
    std::lock_guard lock(mu_);
    return InTransaction("claim", [&]() -> Result<std::optional<ClaimedJob>> {
      if (Status s = SeeWorker(worker); !s) return s.error();
      for (;;) {
        // SKIP LOCKED: a row another claim is taking is passed over, not
        // waited for; once locked, the row is checked again against the
        // WHERE clause, so a job just taken is never taken twice.
        auto next = Exec("claim: find",
                         "SELECT id, job, attempts, state FROM jobs WHERE machine_class = $1 AND "
                         "(state = 'queued' OR (state = 'running' AND lease_until < now())) "
                         "ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED",
                         {worker.machine_class});
        if (!next) return next.error();
        if (PQntuples(next->get()) == 0) return std::optional<ClaimedJob>();
        const int64_t id = Int(*next, 0, 0);
        const int attempts = static_cast<int>(Int(*next, 0, 2));
        const bool lapsed = Text(*next, 0, 3) == "running";
        std::string failure;
        Result<EvalJob> job = Error{""};
        try {
          job = EvalJob::FromJson(Json::parse(Text(*next, 0, 1)));
        } catch (const Json::exception& e) {
          job = Error{std::string("invalid JSON: ") + e.what()};
        }
        if (!job)
          failure = "the queued job cannot be read: " + job.error().message;
        else if (lapsed && attempts >= options_.max_attempts)
          failure = "its worker was lost " + std::to_string(attempts) + " times (its lease lapsed each time)";
        if (!failure.empty()) {
          auto fail = Exec("claim: fail a job",
                           "UPDATE jobs SET state = 'failed', error = $1, lease_until = NULL, finished_at = now() "
                           "WHERE id = $2::bigint",
                           {failure, std::to_string(id)});
          if (!fail) return fail.error();
          continue;
        }
        auto take = Exec("claim: take",
                         "UPDATE jobs SET state = 'running', attempts = attempts + 1, worker = $1, device = $2, "
                         "lease_until = now() + make_interval(secs => $3::float8) WHERE id = $4::bigint",
                         {worker.name, worker.device, Seconds(options_.lease_seconds), std::to_string(id)});
        if (!take) return take.error();
        return std::optional<ClaimedJob>(ClaimedJob{id, attempts + 1, std::move(*job)});
      }
    });
  }

  Status Heartbeat(const ClaimedJob& claimed, const WorkerInfo& worker) override {
    std::lock_guard lock(mu_);
    auto held = InTransaction("heartbeat", [&]() -> Result<bool> {
      if (Status s = SeeWorker(worker); !s) return s.error();
      auto renew = Exec("heartbeat",
                        "UPDATE jobs SET lease_until = now() + make_interval(secs => $1::float8) "
                        "WHERE id = $2::bigint AND state = 'running' AND worker = $3 AND attempts = $4::integer",
                        {Seconds(options_.lease_seconds), std::to_string(claimed.id), worker.name,
                         std::to_string(claimed.attempt)});
      if (!renew) return renew.error();
      return Changed(*renew);
    });
    if (!held) return held.error();
    if (!*held) return Lost(claimed);
    return Ok{};
  }

  Status Complete(const ClaimedJob& claimed, const WorkerInfo& worker, const EvalOutcome& outcome) override {
    std::lock_guard lock(mu_);
    // The lease is not checked: an attempt whose lease lapsed but that no
    // other worker took yet still holds the job (as in the SQLite queue).
    auto done = Exec("complete",
                     "UPDATE jobs SET state = 'done', outcome = $1, lease_until = NULL, finished_at = now() "
                     "WHERE id = $2::bigint AND state = 'running' AND worker = $3 AND attempts = $4::integer",
                     {DumpJson(outcome.ToJson()), std::to_string(claimed.id), worker.name,
                      std::to_string(claimed.attempt)});
    if (!done) return done.error();
    if (!Changed(*done)) return Lost(claimed);
    return Ok{};
  }

  Status Fail(const ClaimedJob& claimed, const WorkerInfo& worker, const JobError& error) override {
    std::lock_guard lock(mu_);
    const bool again = error.retryable && claimed.attempt < options_.max_attempts;
    auto fail = Exec("fail",
                     "UPDATE jobs SET state = $1, error = $2, lease_until = NULL, "
                     "finished_at = CASE WHEN $3::boolean THEN NULL ELSE now() END "
                     "WHERE id = $4::bigint AND state = 'running' AND worker = $5 AND attempts = $6::integer",
                     {again ? "queued" : "failed", error.message, again ? "true" : "false", std::to_string(claimed.id),
                      worker.name, std::to_string(claimed.attempt)});
    if (!fail) return fail.error();
    if (!Changed(*fail)) return Lost(claimed);
    return Ok{};
  }

  Result<std::vector<JobStatus>> Poll(std::span<const int64_t> ids) override {
    std::lock_guard lock(mu_);
    // One snapshot for all of them.
    return InTransaction("poll", [&]() -> Result<std::vector<JobStatus>> {
      std::vector<JobStatus> out;
      for (int64_t id : ids) {
        auto r = Exec("poll", "SELECT key, state, attempts, worker, outcome, error FROM jobs WHERE id = $1::bigint",
                      {std::to_string(id)});
        if (!r) return r.error();
        if (PQntuples(r->get()) == 0) return Error{where_ + ": poll: no job " + std::to_string(id)};
        JobStatus status;
        status.id = id;
        status.key = Text(*r, 0, 0);
        auto state = StateFromName(Text(*r, 0, 1));
        if (!state) return Error{where_ + ": poll: job " + std::to_string(id) + " has an unknown state '" +
                                 Text(*r, 0, 1) + "'"};
        status.state = *state;
        status.attempts = static_cast<int>(Int(*r, 0, 2));
        status.worker = Text(*r, 0, 3);
        if (status.state == JobState::kDone) {
          try {
            status.outcome = Json::parse(Text(*r, 0, 4));
          } catch (const Json::exception& e) {
            return Error{where_ + ": poll: the outcome of job " + std::to_string(id) + " is invalid JSON: " +
                         e.what()};
          }
        }
        status.error = Text(*r, 0, 5);
        out.push_back(std::move(status));
      }
      return out;
    });
  }

  Result<QueueCounts> Counts(double alive_within) override {
    std::lock_guard lock(mu_);
    return InTransaction("count jobs", [&]() -> Result<QueueCounts> {
      QueueCounts counts;
      auto r = Exec("count jobs", "SELECT state, count(*) FROM jobs GROUP BY state", {});
      if (!r) return r.error();
      for (int row = 0; row < PQntuples(r->get()); ++row) {
        const int n = static_cast<int>(Int(*r, row, 1));
        switch (StateFromName(Text(*r, row, 0)).value_or(JobState::kFailed)) {
          case JobState::kQueued: counts.queued = n; break;
          case JobState::kRunning: counts.running = n; break;
          case JobState::kDone: counts.done = n; break;
          case JobState::kFailed: counts.failed = n; break;
        }
      }
      auto w = Exec("list workers",
                    "SELECT name, device, machine_class FROM workers "
                    "WHERE seen > now() - make_interval(secs => $1::float8) ORDER BY name",
                    {Seconds(alive_within)});
      if (!w) return w.error();
      for (int row = 0; row < PQntuples(w->get()); ++row)
        counts.live_workers.push_back({Text(*w, row, 0), Text(*w, row, 1), Text(*w, row, 2)});
      return counts;
    });
  }

  Result<int> Outstanding(const std::string& machine_class) override {
    std::lock_guard lock(mu_);
    return InTransaction("count outstanding jobs", [&]() -> Result<int> {
      auto r = Exec("count outstanding jobs",
                    "SELECT count(*) FROM jobs WHERE machine_class = $1 AND state IN ('queued', 'running')",
                    {machine_class});
      if (!r) return r.error();
      return static_cast<int>(Int(*r, 0, 0));
    });
  }

 private:
  static std::string Seconds(double seconds) {
    char buf[64];
    snprintf(buf, sizeof buf, "%.17g", seconds);
    return buf;
  }
  static std::string Text(const PgResult& r, int row, int col) {
    return PQgetisnull(r.get(), row, col) ? std::string() : std::string(PQgetvalue(r.get(), row, col));
  }
  static int64_t Int(const PgResult& r, int row, int col) { return std::stoll(PQgetvalue(r.get(), row, col)); }
  static bool Changed(const PgResult& r) {
    const char* n = PQcmdTuples(r.get());
    return n && *n && std::stoll(n) > 0;
  }

  // Runs `sql` with text parameters (or, for a `script`, several statements
  // without parameters). A connection found broken is reset first, once.
  Result<PgResult> Exec(const std::string& op, const std::string& sql, const std::vector<std::string>& params,
                        bool script = false) {
    if (PQstatus(conn_.get()) != CONNECTION_OK) {
      PQreset(conn_.get());
      if (PQstatus(conn_.get()) != CONNECTION_OK)
        return Error{where_ + ": " + op + ": reconnect: " + OneLine(PQerrorMessage(conn_.get()), password_)};
    }
    std::vector<const char*> values;
    for (const std::string& p : params) values.push_back(p.c_str());
    PgResult r(script ? PQexec(conn_.get(), sql.c_str())
                      : PQexecParams(conn_.get(), sql.c_str(), static_cast<int>(values.size()), nullptr,
                                     values.data(), nullptr, nullptr, 0));
    const ExecStatusType status = r ? PQresultStatus(r.get()) : PGRES_FATAL_ERROR;
    if (status != PGRES_COMMAND_OK && status != PGRES_TUPLES_OK)
      return Error{where_ + ": " + op + ": " +
                   OneLine(r ? PQresultErrorMessage(r.get()) : PQerrorMessage(conn_.get()), password_)};
    return r;
  }

  // Runs `body` in one transaction; rolled back when it fails.
  template <typename F>
  auto InTransaction(const std::string& op, F body) -> decltype(body()) {
    if (auto r = Exec(op + ": begin", "BEGIN", {}); !r) return r.error();
    auto result = body();
    if (!result) {
      PgResult rollback(PQexec(conn_.get(), "ROLLBACK"));
      return result;
    }
    if (auto r = Exec(op + ": commit", "COMMIT", {}); !r) {
      PgResult rollback(PQexec(conn_.get(), "ROLLBACK"));
      return r.error();
    }
    return result;
  }

  Status SeeWorker(const WorkerInfo& worker) {
    auto r = Exec("record a worker",
                  "INSERT INTO workers (name, device, machine_class, seen) VALUES ($1, $2, $3, now()) "
                  "ON CONFLICT (name) DO UPDATE SET device = excluded.device, "
                  "machine_class = excluded.machine_class, seen = excluded.seen",
                  {worker.name, worker.device, worker.machine_class});
    if (!r) return r.error();
    return Ok{};
  }

  Error Lost(const ClaimedJob& claimed) const {
    return Error{where_ + ": job " + std::to_string(claimed.id) + " attempt " + std::to_string(claimed.attempt) +
                 " no longer holds the job (its lease lapsed and another worker took it, or it is finished)"};
  }

  const std::string where_;     // the URI without its password
  const std::string password_;  // kept out of every message
  std::mutex mu_;
  PgConn conn_;
  QueueOptions options_;
};

}  // namespace

Result<std::unique_ptr<JobQueue>> OpenPostgresJobQueue(const PostgresQueueOptions& options) {
  const std::string where = RedactUri(options.uri);
  const std::string password = UriPassword(options.uri);
  {
    char* err = nullptr;
    PQconninfoOption* parsed = PQconninfoParse(options.uri.c_str(), &err);
    if (!parsed) {
      std::string message = err ? OneLine(err, password) : "out of memory";
      if (err) PQfreemem(err);
      return Error{"cannot connect to " + where + ": not a PostgreSQL URI: " + message};
    }
    PQconninfoFree(parsed);
  }
  PgConn conn(PQconnectdb(options.uri.c_str()));
  if (!conn) return Error{"cannot connect to " + where + ": out of memory"};
  if (PQstatus(conn.get()) != CONNECTION_OK)
    return Error{"cannot connect to " + where + ": " + OneLine(PQerrorMessage(conn.get()), password)};
  PQsetNoticeProcessor(conn.get(), &IgnoreNotice, nullptr);
  auto queue = std::make_unique<PostgresJobQueue>(options.uri, std::move(conn), options.queue);
  if (Status s = queue->Migrate(); !s) return s.error();
  return std::unique_ptr<JobQueue>(std::move(queue));
}

std::string RedactUri(const std::string& uri) {
  const size_t scheme = uri.find("://");
  if (scheme == std::string::npos) return uri;
  const size_t start = scheme + 3;
  const size_t at = uri.find('@', start);
  const size_t slash = uri.find('/', start);
  if (at == std::string::npos || (slash != std::string::npos && slash < at)) return uri;
  const size_t colon = uri.find(':', start);
  if (colon == std::string::npos || colon > at) return uri;
  return uri.substr(0, colon) + uri.substr(at);
}

std::string UriPassword(const std::string& uri) {
  char* err = nullptr;
  PQconninfoOption* options = PQconninfoParse(uri.c_str(), &err);
  if (err) PQfreemem(err);
  if (!options) return "";
  std::string password;
  for (PQconninfoOption* o = options; o->keyword; ++o)
    if (std::string(o->keyword) == "password" && o->val) password = o->val;
  PQconninfoFree(options);
  return password;
}

}  // namespace accelopt::service
