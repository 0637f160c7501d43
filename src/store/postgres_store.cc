// The store in a PostgreSQL database that a team shares: the same contract as
// the SQLite store (store_contract.cc), one connection, calls serialized by a
// mutex. Each call is one statement, so each write is committed (and durable)
// when the call returns.

#include <mutex>

#include "store/postgres_connection.h"
#include "store/store.h"
#include "store/stored_values.h"

namespace accelopt::store {
namespace {

constexpr const char* kSelectRun = "SELECT id, created_at, status, config, summary FROM runs";
constexpr const char* kSelectCandidate =
    "SELECT id, run_id, task, iteration, parent_id, plan, code, code_hash, status, profile, vs_parent "
    "FROM candidates";
constexpr const char* kSelectLesson =
    "SELECT id, memory, task, target, speedup, title, text, run_id, slow_candidate, fast_candidate, created_at, "
    "speedup_low, speedup_high, tags, speedup_coverage FROM lessons";

class PostgresStore : public Store {
 public:
  explicit PostgresStore(std::unique_ptr<PgConnection> conn) : conn_(std::move(conn)) {}

  Result<int64_t> CreateRun(const Json& config) override {
    std::lock_guard lock(mu_);
    auto r = conn_->Exec("create run", "INSERT INTO runs (status, config) VALUES ('running', $1) RETURNING id",
                         {DumpJson(config)});
    if (!r) return r.error();
    return r->Int(0, 0);
  }

  Status SetRunStatus(int64_t run_id, const std::string& status, const Json& summary) override {
    std::lock_guard lock(mu_);
    auto r = conn_->Exec("set run status", "UPDATE runs SET status = $1, summary = $2 WHERE id = $3::bigint",
                         {status, DumpJson(summary), PgParam::Int(run_id)});
    if (!r) return r.error();
    if (r->Changed() == 0) return Fail("set run status", "no run " + std::to_string(run_id));
    return Ok{};
  }

  Result<std::optional<RunInfo>> GetRun(int64_t run_id) override {
    std::lock_guard lock(mu_);
    auto r = conn_->Exec("get run", std::string(kSelectRun) + " WHERE id = $1::bigint", {PgParam::Int(run_id)});
    return One<RunInfo>(r, &PostgresStore::ReadRun);
  }

  Result<std::vector<RunInfo>> ListRuns() override {
    std::lock_guard lock(mu_);
    auto r = conn_->Exec("list runs", std::string(kSelectRun) + " ORDER BY id DESC");
    return All<RunInfo>(r, &PostgresStore::ReadRun);
  }

  Result<std::optional<Json>> GetLlmCall(const std::string& key) override {
    std::lock_guard lock(mu_);
    auto r = conn_->Exec("get LLM call", "SELECT record FROM llm_calls WHERE key = $1", {key});
    return One<Json>(r, &PostgresStore::ReadFirstJson);
  }

  // Keeps the first record under a key, as the SQLite store does.
  Status PutLlmCall(const std::string& key, int64_t run_id, const std::string& role, const Json& record) override {
    std::lock_guard lock(mu_);
    return Done(conn_->Exec("put LLM call",
                            "INSERT INTO llm_calls (key, run_id, role, record) VALUES ($1, $2::bigint, $3, $4) "
                            "ON CONFLICT (key) DO NOTHING",
                            {key, PgParam::Id(run_id), role, DumpJson(record)}));
  }

  Status RejectLlmCall(const std::string& key, const std::string& reason) override {
    std::lock_guard lock(mu_);
    return Done(conn_->Exec(
        "reject LLM call",
        "UPDATE llm_calls SET record = jsonb_set(record::jsonb, '{rejected}', to_jsonb($1::text))::text WHERE key = $2",
        {reason, key}));
  }

  Result<std::vector<Json>> ListLlmCalls(int64_t run_id) override {
    std::lock_guard lock(mu_);
    auto r = conn_->Exec("list LLM calls", "SELECT record FROM llm_calls WHERE run_id = $1::bigint ORDER BY seq",
                         {PgParam::Int(run_id)});
    return All<Json>(r, &PostgresStore::ReadFirstJson);
  }

  Result<std::optional<Json>> GetEvaluation(const std::string& key) override {
    std::lock_guard lock(mu_);
    auto r = conn_->Exec("get evaluation", "SELECT profile FROM evaluations WHERE key = $1", {key});
    return One<Json>(r, &PostgresStore::ReadFirstJson);
  }

  Status PutEvaluation(const std::string& key, int64_t run_id, const std::string& task, const Json& profile) override {
    std::lock_guard lock(mu_);
    return Done(conn_->Exec("put evaluation",
                            "INSERT INTO evaluations (key, run_id, task, profile) VALUES ($1, $2::bigint, $3, $4) "
                            "ON CONFLICT (key) DO NOTHING",
                            {key, PgParam::Id(run_id), task, DumpJson(profile)}));
  }

  Result<int64_t> AddCandidate(const StoredCandidate& stored) override {
    std::lock_guard lock(mu_);
    const Candidate& c = stored.candidate;
    auto r = conn_->Exec(
        "add candidate",
        "INSERT INTO candidates (run_id, task, iteration, parent_id, plan, code, code_hash, status, latency_s, "
        "percent_of_peak, profile) VALUES ($1::bigint, $2, $3::integer, $4::bigint, $5, $6, $7, $8, $9::float8, "
        "$10::float8, $11) RETURNING id",
        {PgParam::Id(stored.run_id), stored.task, PgParam::Int(c.iteration), PgParam::Id(c.parent_id),
         PgParam::Bytes(c.plan), PgParam::Bytes(c.code), c.hash, VerdictName(c.profile.status),
         PgParam::Real(c.latency()), PgParam::Real(c.profile.percent_of_peak), DumpJson(c.profile.ToJson())});
    if (!r) return r.error();
    return r->Int(0, 0);
  }

  Status SetVsParent(int64_t candidate_id, const PairedSpeedup& speedup) override {
    std::lock_guard lock(mu_);
    auto r = conn_->Exec("set a candidate's comparison", "UPDATE candidates SET vs_parent = $1 WHERE id = $2::bigint",
                         {DumpJson(ToJson(speedup)), PgParam::Int(candidate_id)});
    if (!r) return r.error();
    if (r->Changed() == 0) return Fail("set a candidate's comparison", "no candidate " + std::to_string(candidate_id));
    return Ok{};
  }

  Result<std::optional<StoredCandidate>> GetCandidate(int64_t id) override {
    std::lock_guard lock(mu_);
    auto r = conn_->Exec("get candidate", std::string(kSelectCandidate) + " WHERE id = $1::bigint", {PgParam::Int(id)});
    return One<StoredCandidate>(r, &PostgresStore::ReadCandidate);
  }

  Result<std::vector<StoredCandidate>> ListCandidates(int64_t run_id, const std::string& task) override {
    std::lock_guard lock(mu_);
    auto r = task.empty()
                 ? conn_->Exec("list candidates", std::string(kSelectCandidate) + " WHERE run_id = $1::bigint ORDER BY id",
                               {PgParam::Int(run_id)})
                 : conn_->Exec("list candidates",
                               std::string(kSelectCandidate) + " WHERE run_id = $1::bigint AND task = $2 ORDER BY id",
                               {PgParam::Int(run_id), task});
    return All<StoredCandidate>(r, &PostgresStore::ReadCandidate);
  }

  Status PutIteration(int64_t run_id, const std::string& task, int iteration, const Json& state) override {
    std::lock_guard lock(mu_);
    return Done(conn_->Exec("put iteration",
                            "INSERT INTO iterations (run_id, task, iteration, state) VALUES ($1::bigint, $2, "
                            "$3::integer, $4) ON CONFLICT (run_id, task, iteration) DO UPDATE SET state = "
                            "excluded.state, updated_at = accelopt_now()",
                            {PgParam::Id(run_id), task, PgParam::Int(iteration), DumpJson(state)}));
  }

  Result<std::optional<std::pair<int, Json>>> LatestIteration(int64_t run_id, const std::string& task) override {
    std::lock_guard lock(mu_);
    auto r = conn_->Exec("latest iteration",
                         "SELECT iteration, state FROM iterations WHERE run_id = $1::bigint AND task = $2 "
                         "ORDER BY iteration DESC LIMIT 1",
                         {PgParam::Int(run_id), task});
    return One<std::pair<int, Json>>(r, [](const PgRows& rows, int row) -> Result<std::pair<int, Json>> {
      auto state = ParseJson(rows, row, 1, "state");
      if (!state) return state.error();
      return std::pair<int, Json>(static_cast<int>(rows.Int(row, 0)), std::move(*state));
    });
  }

  Result<int64_t> AddLesson(const StoredLesson& stored) override {
    std::lock_guard lock(mu_);
    const Lesson& l = stored.lesson;
    auto r = conn_->Exec(
        "add lesson",
        "INSERT INTO lessons (memory, task, target, speedup, title, text, run_id, slow_candidate, fast_candidate, "
        "created_at, speedup_low, speedup_high, tags, speedup_coverage) VALUES ($1, $2, $3, $4::float8, $5, $6, "
        "$7::bigint, $8::bigint, $9::bigint, coalesce($10, accelopt_now()), $11::float8, $12::float8, $13, "
        "$14::float8) RETURNING id",
        {stored.memory, l.tags.task, l.tags.target, PgParam::Real(l.speedup), PgParam::Bytes(l.title),
         PgParam::Bytes(l.text), PgParam::Int(stored.run_id), PgParam::Int(stored.slow_candidate),
         PgParam::Int(stored.fast_candidate), PgParam::TextOrNull(stored.created_at), PgParam::Real(l.low),
         PgParam::Real(l.high), DumpJson(LessonTagsToJson(l.tags)), PgParam::Real(l.coverage)});
    if (!r) return r.error();
    return r->Int(0, 0);
  }

  Result<std::vector<StoredLesson>> ListLessons(const std::string& memory, int limit) override {
    std::lock_guard lock(mu_);
    // LIMIT NULL is no limit.
    auto r = conn_->Exec("list lessons", std::string(kSelectLesson) + " WHERE memory = $1 ORDER BY id DESC LIMIT $2::bigint",
                         {memory, limit > 0 ? PgParam::Int(limit) : PgParam::Null()});
    return All<StoredLesson>(r, &PostgresStore::ReadLesson);
  }

  Result<std::optional<StoredLesson>> GetLesson(int64_t id) override {
    std::lock_guard lock(mu_);
    auto r = conn_->Exec("get lesson", std::string(kSelectLesson) + " WHERE id = $1::bigint", {PgParam::Int(id)});
    return One<StoredLesson>(r, &PostgresStore::ReadLesson);
  }

  Result<std::vector<std::pair<std::string, int>>> ListMemories() override {
    std::lock_guard lock(mu_);
    auto r = conn_->Exec("list memories", "SELECT memory, count(*) FROM lessons GROUP BY memory ORDER BY memory");
    return All<std::pair<std::string, int>>(
        r, [](const PgRows& rows, int row) -> Result<std::pair<std::string, int>> {
          return std::pair<std::string, int>(rows.Text(row, 0), static_cast<int>(rows.Int(row, 1)));
        });
  }

  Status PutHardware(const std::string& target, const std::string& machine, const Json& profile) override {
    std::lock_guard lock(mu_);
    return Done(conn_->Exec("put hardware profile",
                            "INSERT INTO hardware (target, machine, profile) VALUES ($1, $2, $3) "
                            "ON CONFLICT (target, machine) DO UPDATE SET profile = excluded.profile, "
                            "updated_at = accelopt_now()",
                            {target, machine, DumpJson(profile)}));
  }

  Result<std::optional<Json>> GetHardware(const std::string& target, const std::string& machine) override {
    std::lock_guard lock(mu_);
    auto r = conn_->Exec("get hardware profile", "SELECT profile FROM hardware WHERE target = $1 AND machine = $2",
                         {target, machine});
    return One<Json>(r, &PostgresStore::ReadFirstJson);
  }

  Status PutRunProgress(int64_t run_id, const Json& progress) override {
    std::lock_guard lock(mu_);
    return Done(conn_->Exec("put run progress",
                            "INSERT INTO run_progress (run_id, progress) VALUES ($1::bigint, $2) ON CONFLICT (run_id) "
                            "DO UPDATE SET progress = excluded.progress, updated_at = accelopt_now()",
                            {PgParam::Int(run_id), DumpJson(progress)}));
  }

  Result<std::optional<Json>> GetRunProgress(int64_t run_id) override {
    std::lock_guard lock(mu_);
    auto r = conn_->Exec("get run progress", "SELECT progress FROM run_progress WHERE run_id = $1::bigint",
                         {PgParam::Int(run_id)});
    return One<Json>(r, &PostgresStore::ReadFirstJson);
  }

 private:
  Error Fail(const std::string& op, const std::string& message) const {
    return Error{conn_->where() + ": " + op + ": " + message};
  }
  static Status Done(const Result<PgRows>& r) {
    if (!r) return r.error();
    return Ok{};
  }

  // A stored JSON document; an invalid one names its column.
  static Result<Json> ParseJson(const PgRows& rows, int row, int col, const char* column) {
    try {
      return Json::parse(rows.Text(row, col));
    } catch (const Json::exception& e) {
      return Error{std::string("stored JSON in column '") + column + "' is invalid: " + e.what()};
    }
  }
  static Result<Json> ReadFirstJson(const PgRows& rows, int row) {
    return ParseJson(rows, row, 0, PQfname(rows.get(), 0));
  }

  static Result<RunInfo> ReadRun(const PgRows& rows, int row) {
    RunInfo run{.id = rows.Int(row, 0), .created_at = rows.Text(row, 1), .status = rows.Text(row, 2)};
    auto config = ParseJson(rows, row, 3, "config");
    if (!config) return config.error();
    auto summary = ParseJson(rows, row, 4, "summary");
    if (!summary) return summary.error();
    run.config = std::move(*config);
    run.summary = std::move(*summary);
    return run;
  }

  static Result<StoredCandidate> ReadCandidate(const PgRows& rows, int row) {
    StoredCandidate stored{.run_id = rows.Int(row, 1), .task = rows.Text(row, 2)};
    Candidate& c = stored.candidate;
    c.id = rows.Int(row, 0);
    c.iteration = static_cast<int>(rows.Int(row, 3));
    c.parent_id = rows.Int(row, 4);
    c.plan = rows.Bytes(row, 5);
    c.code = rows.Bytes(row, 6);
    c.hash = rows.Text(row, 7);
    auto profile = ParseJson(rows, row, 9, "profile");
    if (!profile) return profile.error();
    std::optional<Json> vs;
    if (!rows.Null(row, 10)) {
      auto read = ParseJson(rows, row, 10, "vs_parent");
      if (!read) return read.error();
      vs = std::move(*read);
    }
    if (Status s = ReadCandidateValues(*profile, vs, c); !s) return s.error();
    return stored;
  }

  static Result<StoredLesson> ReadLesson(const PgRows& rows, int row) {
    StoredLesson stored{.memory = rows.Text(row, 1),
                        .run_id = rows.Int(row, 7),
                        .slow_candidate = rows.Int(row, 8),
                        .fast_candidate = rows.Int(row, 9),
                        .created_at = rows.Text(row, 10)};
    Lesson& l = stored.lesson;
    l.id = rows.Int(row, 0);
    l.tags.task = rows.Text(row, 2);
    l.tags.target = rows.Text(row, 3);
    l.speedup = rows.Real(row, 4);
    l.title = rows.Bytes(row, 5);
    l.text = rows.Bytes(row, 6);
    l.low = rows.Null(row, 11) ? l.speedup : rows.Real(row, 11);
    l.high = rows.Null(row, 12) ? l.speedup : rows.Real(row, 12);
    l.coverage = rows.Null(row, 14) ? 0 : rows.Real(row, 14);
    auto tags = ParseJson(rows, row, 13, "tags");
    if (!tags) return tags.error();
    if (Status s = LessonTagsFromJson(*tags, l.tags); !s)
      return Error{"lesson " + std::to_string(l.id) + " " + s.error().message};
    return stored;
  }

  // Reading a row that is not what this program wrote names the database.
  template <typename T, typename Reader>
  Result<std::optional<T>> One(const Result<PgRows>& r, Reader read) const {
    if (!r) return r.error();
    if (r->size() == 0) return std::optional<T>();
    auto value = read(*r, 0);
    if (!value) return Error{conn_->where() + ": " + value.error().message};
    return std::optional<T>(std::move(*value));
  }

  template <typename T, typename Reader>
  Result<std::vector<T>> All(const Result<PgRows>& r, Reader read) const {
    if (!r) return r.error();
    std::vector<T> out;
    for (int row = 0; row < r->size(); ++row) {
      auto value = read(*r, row);
      if (!value) return Error{conn_->where() + ": " + value.error().message};
      out.push_back(std::move(*value));
    }
    return out;
  }

  std::mutex mu_;
  std::unique_ptr<PgConnection> conn_;
};

}  // namespace

Result<std::unique_ptr<Store>> OpenPostgresStore(const std::string& uri) {
  auto conn = PgConnection::Open(uri);
  if (!conn) return conn.error();
  return std::unique_ptr<Store>(std::make_unique<PostgresStore>(std::move(*conn)));
}

Result<std::unique_ptr<Store>> OpenPostgresStoreReadOnly(const std::string& uri) {
  auto conn = PgConnection::Open(uri, /*read_only=*/true);
  if (!conn) return conn.error();
  return std::unique_ptr<Store>(std::make_unique<PostgresStore>(std::move(*conn)));
}

}  // namespace accelopt::store
