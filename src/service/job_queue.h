#pragma once
/// service: the durable job queue that workers serve (DESIGN.md section 7).
///
/// The engine enqueues jobs; `accelopt worker` processes claim them with a
/// lease, renew it with heartbeats while they measure, and complete them.
/// A worker that dies stops renewing: once its lease expires the job is
/// claimed again by another worker (a new attempt). Only the holder of the
/// current attempt can complete a job, and a job is completed once, so a
/// result is never lost and never recorded twice. Implementations: SQLite
/// (workers on one machine, sharing the store's file) and PostgreSQL (workers
/// on many machines, one server); every implementation
/// passes the contract suite in job_queue_contract.h.

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/json_io.h"
#include "core/result.h"
#include "service/eval_job.h"
#include "store/store.h"

namespace accelopt::service {

/// Who claims: a worker's name, the device it owns and the machine class it serves.
struct WorkerInfo {
  std::string name;
  std::string device;
  std::string machine_class;
};

/// A job as a worker holds it: the attempt it must name when it reports.
struct ClaimedJob {
  int64_t id = 0;
  int attempt = 0;  ///< 1 for the first claim; each expired lease adds one
  EvalJob job;
};

enum class JobState { kQueued, kRunning, kDone, kFailed };
const char* JobStateName(JobState state);

/// What the queue knows of a job.
struct JobStatus {
  int64_t id = 0;
  std::string key;
  JobState state = JobState::kQueued;
  int attempts = 0;
  std::string worker;  ///< the last to claim it
  Json outcome;        ///< EvalOutcome::ToJson when done
  std::string error;   ///< why it failed (kFailed)
};

/// The queue at a glance: what a waiting engine tells its user.
struct QueueCounts {
  int queued = 0, running = 0, done = 0, failed = 0;
  /// Workers that claimed or renewed within the last `alive_within` seconds of Counts.
  std::vector<WorkerInfo> live_workers;
};

struct QueueOptions {
  double lease_seconds = 30;  ///< a claim lapses this long after its last heartbeat
  int max_attempts = 3;       ///< claims of one job (workers lost) before it fails
};

class JobQueue {
 public:
  virtual ~JobQueue() = default;
  /// Adds `job`, or returns the id of the job with the same key already in the
  /// queue (queued, running or done): asking twice never measures twice. A
  /// failed job of that key is queued again. Durable when it returns.
  virtual Result<int64_t> Enqueue(const EvalJob& job) = 0;
  /// The oldest job for `worker`'s machine class that is queued, or running
  /// with an expired lease, now leased to `worker`; nullopt when none. Atomic:
  /// no two callers get the same attempt.
  virtual Result<std::optional<ClaimedJob>> Claim(const WorkerInfo& worker) = 0;
  /// Renews the lease of `claimed`'s attempt; an Error when it was lost (the
  /// lease expired and another worker took the job, or it is finished).
  virtual Status Heartbeat(const ClaimedJob& claimed, const WorkerInfo& worker) = 0;
  /// Records the outcome of `claimed`'s attempt; an Error, recording nothing,
  /// when that attempt no longer holds the job.
  virtual Status Complete(const ClaimedJob& claimed, const WorkerInfo& worker, const EvalOutcome& outcome) = 0;
  /// The attempt could not measure: a retryable error queues the job again
  /// (until max_attempts), a permanent one fails it. An Error when the
  /// attempt no longer holds the job.
  virtual Status Fail(const ClaimedJob& claimed, const WorkerInfo& worker, const JobError& error) = 0;
  /// The state of each job, in order; an unknown id is an Error.
  virtual Result<std::vector<JobStatus>> Poll(std::span<const int64_t> ids) = 0;
  virtual Result<QueueCounts> Counts(double alive_within = 60) = 0;
  /// Jobs for `machine_class` queued or running (a lapsed lease included):
  /// the work its workers have now, which a launcher of workers sizes them by.
  virtual Result<int> Outstanding(const std::string& machine_class) = 0;
};

struct SqliteQueueOptions {
  std::string path = "accelopt.db";  ///< the store's file: the queue's tables live beside the store's
  int busy_timeout_ms = 10000;       ///< wait this long for another writer
  QueueOptions queue;
};

/// Opens the queue in an SQLite file (creating its tables when missing). One
/// connection; thread-safe (calls serialized). Errors name the file.
Result<std::unique_ptr<JobQueue>> OpenSqliteJobQueue(const SqliteQueueOptions& options);

struct PostgresQueueOptions {
  std::string uri;  ///< postgresql://user:password@host:port/database (libpq's URI or key=value form)
  QueueOptions queue;
};

/// Opens the queue in a PostgreSQL database, creating its tables or migrating
/// them (the SQL of src/service/postgres/); a database whose schema is newer
/// than this program knows is an Error naming both versions. Leases are
/// measured by the server's clock. One connection, reset when found broken;
/// thread-safe (calls serialized). Errors name the URI without its password.
Result<std::unique_ptr<JobQueue>> OpenPostgresJobQueue(const PostgresQueueOptions& options);

/// Opens the queue at `location` (IsPostgresUri decides which), with `options`.
Result<std::unique_ptr<JobQueue>> OpenJobQueue(const std::string& location, const QueueOptions& options = {});

// Where a queue lives: a PostgreSQL URI, else an SQLite file (the store's).
using store::IsPostgresUri;
using store::RedactUri;
using store::UriPassword;

}  // namespace accelopt::service
