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

#include <memory>
#include <mutex>

#include "service/job_queue.h"
#include "store/postgres_connection.h"

namespace accelopt::service {
namespace {

std::optional<JobState> StateFromName(const std::string& name) {
  if (name == "queued") return JobState::kQueued;
  if (name == "running") return JobState::kRunning;
  if (name == "done") return JobState::kDone;
  if (name == "failed") return JobState::kFailed;
  return std::nullopt;
}


class PostgresJobQueue : public JobQueue {
 public:
  PostgresJobQueue(std::unique_ptr<store::PgConnection> conn, QueueOptions options)
      : where_(conn->where()), conn_(std::move(conn)), options_(options) {}

  Result<int64_t> Enqueue(const EvalJob& job) override {
    std::lock_guard lock(mu_);
    const std::string key = job.Key();
    const std::string op = "enqueue " + key;
    // One statement: a new key is inserted, a failed job of that key queued
    // again; any other state leaves the row as it is and returns nothing.
    auto r = conn_->Exec(op,
                  "INSERT INTO jobs (key, machine_class, job, state) VALUES ($1, $2, $3, 'queued') "
                  "ON CONFLICT (key) DO UPDATE SET state = 'queued', attempts = 0, worker = NULL, device = NULL, "
                  "lease_until = NULL, error = NULL, finished_at = NULL WHERE jobs.state = 'failed' RETURNING id",
                  {key, job.machine_class, DumpJson(job.ToJson())});
    if (!r) return r.error();
    if (r->size() == 1) return r->Int(0, 0);
    auto found = conn_->Exec(op, "SELECT id FROM jobs WHERE key = $1", {key});
    if (!found) return found.error();
    if (found->size() != 1) return Error{where_ + ": " + op + ": the job vanished while it was enqueued"};
    return found->Int(0, 0);
  }

  Result<std::optional<ClaimedJob>> Claim(const WorkerInfo& worker) override {
    std::lock_guard lock(mu_);
    return conn_->InTransaction("claim", [&]() -> Result<std::optional<ClaimedJob>> {
      if (Status s = SeeWorker(worker); !s) return s.error();
      for (;;) {
        // SKIP LOCKED: a row another claim is taking is passed over, not
        // waited for; once locked, the row is checked again against the
        // WHERE clause, so a job just taken is never taken twice.
        auto next = conn_->Exec("claim: find",
                         "SELECT id, job, attempts, state FROM jobs WHERE machine_class = $1 AND "
                         "(state = 'queued' OR (state = 'running' AND lease_until < now())) "
                         "ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED",
                         {worker.machine_class});
        if (!next) return next.error();
        if (next->size() == 0) return std::optional<ClaimedJob>();
        const int64_t id = next->Int(0, 0);
        const int attempts = static_cast<int>(next->Int(0, 2));
        const bool lapsed = next->Text(0, 3) == "running";
        std::string failure;
        Result<EvalJob> job = Error{""};
        try {
          job = EvalJob::FromJson(Json::parse(next->Text(0, 1)));
        } catch (const Json::exception& e) {
          job = Error{std::string("invalid JSON: ") + e.what()};
        }
        if (!job)
          failure = "the queued job cannot be read: " + job.error().message;
        else if (lapsed && attempts >= options_.max_attempts)
          failure = "its worker was lost " + std::to_string(attempts) + " times (its lease lapsed each time)";
        if (!failure.empty()) {
          auto fail = conn_->Exec("claim: fail a job",
                           "UPDATE jobs SET state = 'failed', error = $1, lease_until = NULL, finished_at = now() "
                           "WHERE id = $2::bigint",
                           {failure, std::to_string(id)});
          if (!fail) return fail.error();
          continue;
        }
        auto take = conn_->Exec("claim: take",
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
    auto held = conn_->InTransaction("heartbeat", [&]() -> Result<bool> {
      if (Status s = SeeWorker(worker); !s) return s.error();
      auto renew = conn_->Exec("heartbeat",
                        "UPDATE jobs SET lease_until = now() + make_interval(secs => $1::float8) "
                        "WHERE id = $2::bigint AND state = 'running' AND worker = $3 AND attempts = $4::integer",
                        {Seconds(options_.lease_seconds), std::to_string(claimed.id), worker.name,
                         std::to_string(claimed.attempt)});
      if (!renew) return renew.error();
      return (renew->Changed() > 0);
    });
    if (!held) return held.error();
    if (!*held) return Lost(claimed);
    return Ok{};
  }

  Status Complete(const ClaimedJob& claimed, const WorkerInfo& worker, const EvalOutcome& outcome) override {
    std::lock_guard lock(mu_);
    // The lease is not checked: an attempt whose lease lapsed but that no
    // other worker took yet still holds the job (as in the SQLite queue).
    auto done = conn_->Exec("complete",
                     "UPDATE jobs SET state = 'done', outcome = $1, lease_until = NULL, finished_at = now() "
                     "WHERE id = $2::bigint AND state = 'running' AND worker = $3 AND attempts = $4::integer",
                     {DumpJson(outcome.ToJson()), std::to_string(claimed.id), worker.name,
                      std::to_string(claimed.attempt)});
    if (!done) return done.error();
    if (!(done->Changed() > 0)) return Lost(claimed);
    return Ok{};
  }

  Status Fail(const ClaimedJob& claimed, const WorkerInfo& worker, const JobError& error) override {
    std::lock_guard lock(mu_);
    const bool again = error.retryable && claimed.attempt < options_.max_attempts;
    auto fail = conn_->Exec("fail",
                     "UPDATE jobs SET state = $1, error = $2, lease_until = NULL, "
                     "finished_at = CASE WHEN $3::boolean THEN NULL ELSE now() END "
                     "WHERE id = $4::bigint AND state = 'running' AND worker = $5 AND attempts = $6::integer",
                     {again ? "queued" : "failed", error.message, again ? "true" : "false", std::to_string(claimed.id),
                      worker.name, std::to_string(claimed.attempt)});
    if (!fail) return fail.error();
    if (!(fail->Changed() > 0)) return Lost(claimed);
    return Ok{};
  }

  Result<std::vector<JobStatus>> Poll(std::span<const int64_t> ids) override {
    std::lock_guard lock(mu_);
    // One snapshot for all of them.
    return conn_->InTransaction("poll", [&]() -> Result<std::vector<JobStatus>> {
      std::vector<JobStatus> out;
      for (int64_t id : ids) {
        auto r = conn_->Exec("poll", "SELECT key, state, attempts, worker, outcome, error FROM jobs WHERE id = $1::bigint",
                      {std::to_string(id)});
        if (!r) return r.error();
        if (r->size() == 0) return Error{where_ + ": poll: no job " + std::to_string(id)};
        JobStatus status;
        status.id = id;
        status.key = r->Text(0, 0);
        auto state = StateFromName(r->Text(0, 1));
        if (!state) return Error{where_ + ": poll: job " + std::to_string(id) + " has an unknown state '" +
                                 r->Text(0, 1) + "'"};
        status.state = *state;
        status.attempts = static_cast<int>(r->Int(0, 2));
        status.worker = r->Text(0, 3);
        if (status.state == JobState::kDone) {
          try {
            status.outcome = Json::parse(r->Text(0, 4));
          } catch (const Json::exception& e) {
            return Error{where_ + ": poll: the outcome of job " + std::to_string(id) + " is invalid JSON: " +
                         e.what()};
          }
        }
        status.error = r->Text(0, 5);
        out.push_back(std::move(status));
      }
      return out;
    });
  }

  Result<QueueCounts> Counts(double alive_within) override {
    std::lock_guard lock(mu_);
    return conn_->InTransaction("count jobs", [&]() -> Result<QueueCounts> {
      QueueCounts counts;
      auto r = conn_->Exec("count jobs", "SELECT state, count(*) FROM jobs GROUP BY state");
      if (!r) return r.error();
      for (int row = 0; row < r->size(); ++row) {
        const int n = static_cast<int>(r->Int(row, 1));
        switch (StateFromName(r->Text(row, 0)).value_or(JobState::kFailed)) {
          case JobState::kQueued: counts.queued = n; break;
          case JobState::kRunning: counts.running = n; break;
          case JobState::kDone: counts.done = n; break;
          case JobState::kFailed: counts.failed = n; break;
        }
      }
      auto w = conn_->Exec("list workers",
                    "SELECT name, device, machine_class FROM workers "
                    "WHERE seen > now() - make_interval(secs => $1::float8) ORDER BY name",
                    {Seconds(alive_within)});
      if (!w) return w.error();
      for (int row = 0; row < w->size(); ++row)
        counts.live_workers.push_back({w->Text(row, 0), w->Text(row, 1), w->Text(row, 2)});
      return counts;
    });
  }

  Result<int> Outstanding(const std::string& machine_class) override {
    std::lock_guard lock(mu_);
    auto r = conn_->Exec("count outstanding jobs",
                         "SELECT count(*) FROM jobs WHERE machine_class = $1 AND state IN ('queued', 'running')",
                         {machine_class});
    if (!r) return r.error();
    return static_cast<int>(r->Int(0, 0));
  }

 private:
  static std::string Seconds(double seconds) {
    char buf[64];
    snprintf(buf, sizeof buf, "%.17g", seconds);
    return buf;
  }
  Status SeeWorker(const WorkerInfo& worker) {
    auto r = conn_->Exec("record a worker",
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

  const std::string where_;  // the URI without its password
  std::mutex mu_;
  std::unique_ptr<store::PgConnection> conn_;
  QueueOptions options_;
};

}  // namespace

Result<std::unique_ptr<JobQueue>> OpenPostgresJobQueue(const PostgresQueueOptions& options) {
  auto conn = store::PgConnection::Open(options.uri);
  if (!conn) return conn.error();
  return std::unique_ptr<JobQueue>(std::make_unique<PostgresJobQueue>(std::move(*conn), options.queue));
}

}  // namespace accelopt::service
