#pragma once
/// store: everything a run produces, recorded as it happens (DESIGN.md section 7).
///
/// Runs, LLM calls, evaluations, candidates, per-iteration checkpoints and the
/// optimization memory's lessons. Each write is durable when the call returns,
/// so a run killed at any point resumes from what was recorded: a recorded LLM
/// call or evaluation is looked up by its key and never paid for twice.
/// Values are JSON documents; the store does not interpret them beyond the
/// columns named here. Implementations: SQLite (embedded, one file) and
/// PostgreSQL (a server a team shares).

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/candidate.h"
#include "core/json_io.h"
#include "core/lesson.h"
#include "core/result.h"

namespace accelopt::store {

struct RunInfo {
  int64_t id = 0;
  std::string created_at;  ///< ISO-8601 UTC
  std::string status;      ///< "running", "finished", "stopped" (budget), "failed"
  Json config;             ///< everything needed to resume: tasks, search settings, model config
  Json summary;            ///< filled when the run ends (per-task results, cost)
};

/// A candidate as a run keeps it: with the run and the task it belongs to.
/// Read back, its parent's hash and its side-by-side speedup are not known
/// (the run's lineage and checkpoints hold them).
struct StoredCandidate {
  int64_t run_id = 0;
  std::string task;
  Candidate candidate;  ///< its id is the store's
};

/// A lesson as a memory keeps it: the lesson, the memory it is in, and the pair it came from.
struct StoredLesson {
  Lesson lesson;
  std::string memory;  ///< memory name ("shared", a user's name, or "run-<id>" for fresh)
  int64_t run_id = 0, slow_candidate = 0, fast_candidate = 0;  ///< lineage
  std::string created_at;
};

class Store {
 public:
  virtual ~Store() = default;

  // Runs.
  virtual Result<int64_t> CreateRun(const Json& config) = 0;
  virtual Status SetRunStatus(int64_t run_id, const std::string& status, const Json& summary) = 0;
  virtual Result<std::optional<RunInfo>> GetRun(int64_t run_id) = 0;
  /// Newest first.
  virtual Result<std::vector<RunInfo>> ListRuns() = 0;

  // LLM calls, by a key the caller derives from everything that determines the request.
  virtual Result<std::optional<Json>> GetLlmCall(const std::string& key) = 0;
  virtual Status PutLlmCall(const std::string& key, int64_t run_id, const std::string& role, const Json& record) = 0;
  /// Notes in the call's record (field `rejected`) why its answer was not used.
  virtual Status RejectLlmCall(const std::string& key, const std::string& reason) = 0;
  /// All calls of a run, in the order they were recorded.
  virtual Result<std::vector<Json>> ListLlmCalls(int64_t run_id) = 0;

  // Evaluations, by a key derived from the task, shape and normalized code.
  virtual Result<std::optional<Json>> GetEvaluation(const std::string& key) = 0;
  virtual Status PutEvaluation(const std::string& key, int64_t run_id, const std::string& task,
                               const Json& profile) = 0;

  // Candidates.
  virtual Result<int64_t> AddCandidate(const StoredCandidate& stored) = 0;
  /// Records the side-by-side comparison of candidate `candidate_id` with its parent (read back as vs_parent).
  virtual Status SetVsParent(int64_t candidate_id, const PairedSpeedup& speedup) = 0;
  virtual Result<std::optional<StoredCandidate>> GetCandidate(int64_t id) = 0;
  /// A run's candidates for one task ("" = all tasks), in insertion order.
  virtual Result<std::vector<StoredCandidate>> ListCandidates(int64_t run_id, const std::string& task) = 0;

  // Checkpoints: the search state after each finished iteration of a task.
  virtual Status PutIteration(int64_t run_id, const std::string& task, int iteration, const Json& state) = 0;
  /// The latest checkpoint: (iteration, state), or nullopt when none.
  virtual Result<std::optional<std::pair<int, Json>>> LatestIteration(int64_t run_id, const std::string& task) = 0;

  // Optimization memory.
  virtual Result<int64_t> AddLesson(const StoredLesson& lesson) = 0;
  /// Newest first; at most `limit` (0 = all).
  virtual Result<std::vector<StoredLesson>> ListLessons(const std::string& memory, int limit) = 0;
  virtual Result<std::optional<StoredLesson>> GetLesson(int64_t id) = 0;
  /// Memory names with their lesson counts.
  virtual Result<std::vector<std::pair<std::string, int>>> ListMemories() = 0;

  // Hardware profiles, per target and machine (a fingerprint or a machine
  // class): what the workers of that machine score against.
  /// Replaces the profile kept for (target, machine).
  virtual Status PutHardware(const std::string& target, const std::string& machine, const Json& profile) = 0;
  virtual Result<std::optional<Json>> GetHardware(const std::string& target, const std::string& machine) = 0;

  // Live progress: what a run is doing now (its task, iteration, candidates
  // evaluated, what it waits for), one document per run that each write
  // replaces. Written a few times a second at most while a run goes, and read
  // by `serve`; not part of what a resume needs.
  /// Replaces run `run_id`'s progress document.
  virtual Status PutRunProgress(int64_t run_id, const Json& progress) = 0;
  /// The latest progress document of the run, or nullopt when none was written.
  virtual Result<std::optional<Json>> GetRunProgress(int64_t run_id) = 0;
};

struct SqliteOptions {
  std::string path = "accelopt.db";  ///< created with its schema when missing (and `create`)
  int busy_timeout_ms = 5000;        ///< wait this long for another writer
  bool create = true;                ///< false: a missing file is an error, nothing is created
  /// true: nothing is written through this connection (PRAGMA query_only), the
  /// schema is not migrated (an older or newer one is an error) and the
  /// journal mode is left as it is; implies `create` false.
  bool read_only = false;
};

/// Opens (or creates) the database and migrates its schema. Thread-safe: calls
/// are serialized. Errors name the file.
Result<std::unique_ptr<Store>> OpenSqliteStore(const SqliteOptions& options);

/// Opens (or creates) the store in a PostgreSQL database, `uri` being
/// postgresql://user:password@host:port/database (libpq's URI), and migrates
/// its schema (the SQL of src/store/postgres/, shared with the job queue that
/// lives in the same database). Errors name the URI without its password: a
/// server that is down, a wrong password, a schema newer than this program
/// knows. One connection, reset when found broken; calls serialized.
Result<std::unique_ptr<Store>> OpenPostgresStore(const std::string& uri);
/// The same, read-only: the schema must be this program's (nothing is
/// migrated) and the session's transactions are READ ONLY, so every write
/// through this store fails at the server.
Result<std::unique_ptr<Store>> OpenPostgresStoreReadOnly(const std::string& uri);

/// Where a store (or a queue) lives, as a user names it: a PostgreSQL URI
/// (postgresql://... or postgres://...), else an SQLite file.
bool IsPostgresUri(const std::string& location);
/// `uri` without its password, for messages and logs ("postgresql://me@host/db").
std::string RedactUri(const std::string& uri);
/// The password in `uri`, read the way libpq reads it ("" when it has none).
std::string UriPassword(const std::string& uri);

/// Opens the store at `location` (IsPostgresUri decides which); `create`
/// false makes a missing SQLite file an error.
Result<std::unique_ptr<Store>> OpenStore(const std::string& location, bool create = true);
/// Opens an existing store at `location` so that it cannot be written through
/// this connection (SqliteOptions::read_only, OpenPostgresStoreReadOnly).
Result<std::unique_ptr<Store>> OpenStoreReadOnly(const std::string& location);

}  // namespace accelopt::store
