// One libpq connection, its errors and the schema's migrations.

#include "store/postgres_connection.h"

#include <cmath>
#include <cstdio>
#include <iterator>

#include "store/postgres_migrations.h"

namespace accelopt::store {
namespace {

void IgnoreNotice(void*, const char*) {}

// libpq's messages are multi-line ("...failed: FATAL:  ...\n\tIs the server
// running...?"): one line, single spaces; and never the password, should a
// server or library ever echo it.
std::string OneLine(const std::string& message, const std::string& password) {
  std::string text = message;
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

// Any fixed number: openers of one database take turns migrating it.
constexpr const char* kMigrationLock = "SELECT pg_advisory_xact_lock(7420154031)";

}  // namespace

bool IsPostgresUri(const std::string& location) {
  return location.rfind("postgresql://", 0) == 0 || location.rfind("postgres://", 0) == 0;
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

PgParam PgParam::Id(int64_t id) { return id == 0 ? Null() : Int(id); }

PgParam PgParam::Real(double v) {
  if (std::isnan(v)) return PgParam("NaN");
  if (std::isinf(v)) return PgParam(v > 0 ? "Infinity" : "-Infinity");
  char buf[64];
  snprintf(buf, sizeof buf, "%.17g", v);
  return PgParam(buf);
}

PgParam PgParam::Bytes(std::string bytes) {
  PgParam p(std::move(bytes));
  p.binary = true;
  return p;
}

PgParam PgParam::TextOrNull(std::string text) { return text.empty() ? Null() : PgParam(std::move(text)); }

PgParam PgParam::Null() {
  PgParam p("");
  p.null = true;
  return p;
}

std::string PgRows::Text(int row, int col) const {
  return Null(row, col) ? std::string() : std::string(PQgetvalue(result_.get(), row, col));
}

int64_t PgRows::Int(int row, int col) const { return Null(row, col) ? 0 : std::stoll(PQgetvalue(result_.get(), row, col)); }

double PgRows::Real(int row, int col) const {
  // strtod reads PostgreSQL's NaN, Infinity and -Infinity.
  return Null(row, col) ? std::nan("") : std::strtod(PQgetvalue(result_.get(), row, col), nullptr);
}

std::string PgRows::Bytes(int row, int col) const {
  if (Null(row, col)) return "";
  size_t n = 0;
  unsigned char* bytes =
      PQunescapeBytea(reinterpret_cast<const unsigned char*>(PQgetvalue(result_.get(), row, col)), &n);
  if (bytes == nullptr) return "";
  std::string out(reinterpret_cast<const char*>(bytes), n);
  PQfreemem(bytes);
  return out;
}

int64_t PgRows::Changed() const {
  const char* n = PQcmdTuples(result_.get());
  return (n && *n) ? std::stoll(n) : 0;
}

int PgConnection::SchemaVersion() { return static_cast<int>(std::size(kPostgresMigrations)); }

PgConnection::PgConnection(std::string uri, PGconn* conn, bool read_only)
    : where_(RedactUri(uri)), password_(UriPassword(uri)), conn_(conn), read_only_(read_only) {}

PgConnection::~PgConnection() { PQfinish(conn_); }

std::string PgConnection::OneLine(const std::string& message) const { return store::OneLine(message, password_); }

Result<std::unique_ptr<PgConnection>> PgConnection::Open(const std::string& uri, bool read_only) {
  const std::string where = RedactUri(uri);
  {
    char* err = nullptr;
    PQconninfoOption* parsed = PQconninfoParse(uri.c_str(), &err);
    if (!parsed) {
      std::string message = err ? store::OneLine(err, UriPassword(uri)) : "out of memory";
      if (err) PQfreemem(err);
      return Error{"cannot connect to " + where + ": not a PostgreSQL URI: " + message};
    }
    PQconninfoFree(parsed);
  }
  std::unique_ptr<PgConnection> c(new PgConnection(uri, PQconnectdb(uri.c_str()), read_only));
  if (!c->conn_) return Error{"cannot connect to " + where + ": out of memory"};
  if (PQstatus(c->conn_) != CONNECTION_OK)
    return Error{"cannot connect to " + where + ": " + c->OneLine(PQerrorMessage(c->conn_))};
  PQsetNoticeProcessor(c->conn_, &IgnoreNotice, nullptr);
  if (Status s = read_only ? c->StartReadOnly() : c->Migrate(); !s) return s.error();
  return c;
}

Status PgConnection::SetSessionReadOnly(const std::string& op) {
  PgRows set(PQexec(conn_, "SET SESSION CHARACTERISTICS AS TRANSACTION READ ONLY"));
  if (!set.get() || PQresultStatus(set.get()) != PGRES_COMMAND_OK)
    return Error{where_ + ": " + op + ": make the session read-only: " + OneLine(PQerrorMessage(conn_))};
  return Ok{};
}

Status PgConnection::StartReadOnly() {
  if (Status s = SetSessionReadOnly("open"); !s) return s;
  auto r = Exec("read schema version", "SELECT coalesce(max(version), 0) FROM schema_version");
  if (!r) return r.error();
  const int version = static_cast<int>(r->Int(0, 0));
  if (version != SchemaVersion())
    return Error{where_ + ": schema version " + std::to_string(version) + ", where this program reads version " +
                 std::to_string(SchemaVersion()) +
                 (version < SchemaVersion() ? ": open it once with a command that writes to migrate it"
                                            : ": a newer accelopt migrated it")};
  return Ok{};
}

Status PgConnection::Reconnect(const std::string& op) {
  if (PQstatus(conn_) == CONNECTION_OK) return Ok{};
  PQreset(conn_);
  if (PQstatus(conn_) != CONNECTION_OK)
    return Error{where_ + ": " + op + ": reconnect: " + OneLine(PQerrorMessage(conn_))};
  // A new session: READ ONLY again before any statement runs in it.
  if (read_only_) return SetSessionReadOnly(op + ": reconnect");
  return Ok{};
}

Result<PgRows> PgConnection::Exec(const std::string& op, const std::string& sql, const std::vector<PgParam>& params) {
  if (Status s = Reconnect(op); !s) return s.error();
  std::vector<const char*> values;
  std::vector<int> lengths, formats;
  for (const PgParam& p : params) {
    values.push_back(p.null ? nullptr : p.value.data());
    lengths.push_back(static_cast<int>(p.value.size()));
    formats.push_back(p.binary ? 1 : 0);
  }
  PGresult* r = PQexecParams(conn_, sql.c_str(), static_cast<int>(values.size()), nullptr, values.data(),
                             lengths.data(), formats.data(), 0);
  PgRows rows(r);
  const ExecStatusType status = r ? PQresultStatus(r) : PGRES_FATAL_ERROR;
  if (status != PGRES_COMMAND_OK && status != PGRES_TUPLES_OK)
    return Error{where_ + ": " + op + ": " + OneLine(r ? PQresultErrorMessage(r) : PQerrorMessage(conn_))};
  return rows;
}

Status PgConnection::Script(const std::string& op, const std::string& sql) {
  if (Status s = Reconnect(op); !s) return s;
  PgRows rows(PQexec(conn_, sql.c_str()));
  PGresult* r = rows.get();
  const ExecStatusType status = r ? PQresultStatus(r) : PGRES_FATAL_ERROR;
  if (status != PGRES_COMMAND_OK && status != PGRES_TUPLES_OK)
    return Error{where_ + ": " + op + ": " + OneLine(r ? PQresultErrorMessage(r) : PQerrorMessage(conn_))};
  return Ok{};
}

void PgConnection::Rollback() { PgRows ignored(PQexec(conn_, "ROLLBACK")); }

Status PgConnection::Migrate() {
  return InTransaction("migrate schema", [&]() -> Status {
    // Openers of a new database take turns: the second sees the version move on.
    if (auto r = Exec("migrate schema: lock", kMigrationLock); !r) return r.error();
    if (auto r = Exec("migrate schema: version table",
                      "CREATE TABLE IF NOT EXISTS schema_version (version integer PRIMARY KEY, "
                      "applied_at timestamptz NOT NULL DEFAULT now())");
        !r)
      return r.error();
    auto r = Exec("read schema version", "SELECT coalesce(max(version), 0) FROM schema_version");
    if (!r) return r.error();
    const int version = static_cast<int>(r->Int(0, 0));
    const int known = SchemaVersion();
    if (version > known) {
      return Error{where_ + ": schema version " + std::to_string(version) + " is newer than this program knows (" +
                   std::to_string(known) + "): a newer accelopt migrated this database"};
    }
    for (int v = version; v < known; ++v) {
      const std::string op = "migrate schema to version " + std::to_string(v + 1);
      if (Status s = Script(op, kPostgresMigrations[v]); !s) return s;
      if (auto m = Exec(op, "INSERT INTO schema_version (version) VALUES ($1::integer)", {PgParam::Int(v + 1)}); !m)
        return m.error();
    }
    return Ok{};
  });
}

}  // namespace accelopt::store
