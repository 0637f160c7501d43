#pragma once
/// store: one connection to a PostgreSQL database through libpq, shared by
/// the PostgreSQL store and the PostgreSQL job queue (service/), which keep
/// their tables in one database under one schema (the SQL of
/// src/store/postgres/NNN_*.sql, applied in order). Internal to PostgreSQL
/// implementations.
///
/// Errors name the database by its URI without the password, say which
/// operation failed, and are one line; the password is never in them.

#include <libpq-fe.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/result.h"
#include "store/store.h"  // IsPostgresUri, RedactUri, UriPassword

namespace accelopt::store {

/// A statement parameter: text, raw bytes (a bytea column: any bytes, NULs
/// and invalid UTF-8 included), or NULL.
struct PgParam {
  PgParam(std::string text) : value(std::move(text)) {}  // NOLINT: text is the common case
  PgParam(const char* text) : value(text) {}             // NOLINT
  static PgParam Int(int64_t v) { return PgParam(std::to_string(v)); }
  /// 0 (none) becomes NULL.
  static PgParam Id(int64_t id);
  /// NaN and the infinities as PostgreSQL's float8 spells them.
  static PgParam Real(double v);
  static PgParam Bytes(std::string bytes);
  /// "" becomes NULL.
  static PgParam TextOrNull(std::string text);
  static PgParam Null();

  std::string value;
  bool null = false;
  bool binary = false;
};

/// The rows a statement returned (text format).
class PgRows {
 public:
  explicit PgRows(PGresult* result) : result_(result, &PQclear) {}
  int size() const { return PQntuples(result_.get()); }
  bool Null(int row, int col) const { return PQgetisnull(result_.get(), row, col) != 0; }
  /// "" for NULL.
  std::string Text(int row, int col) const;
  /// 0 for NULL.
  int64_t Int(int row, int col) const;
  /// NaN for NULL.
  double Real(int row, int col) const;
  /// A bytea column's bytes.
  std::string Bytes(int row, int col) const;
  /// Rows an INSERT, UPDATE or DELETE changed.
  int64_t Changed() const;
  PGresult* get() const { return result_.get(); }

 private:
  std::unique_ptr<PGresult, decltype(&PQclear)> result_;
};

/// One connection, migrated to the schema this program knows when opened.
/// Not thread-safe: its owner serializes its use. A connection found broken
/// is reset once before the next statement.
class PgConnection {
 public:
  /// Connects and migrates the schema (openers of a new database take turns).
  /// Errors: not a URI, a server that is down, a wrong password, a schema
  /// newer than this program knows.
  /// `read_only`: nothing is migrated (a schema other than this program's is
  /// an error) and every transaction of the session, after a reconnect too,
  /// is READ ONLY.
  static Result<std::unique_ptr<PgConnection>> Open(const std::string& uri, bool read_only = false);
  ~PgConnection();
  PgConnection(const PgConnection&) = delete;
  PgConnection& operator=(const PgConnection&) = delete;

  /// Runs one statement with parameters $1, $2, ...
  Result<PgRows> Exec(const std::string& op, const std::string& sql, const std::vector<PgParam>& params = {});
  /// Runs several statements without parameters (a migration).
  Status Script(const std::string& op, const std::string& sql);

  /// Runs `body` in one transaction; rolled back when it fails.
  template <typename F>
  auto InTransaction(const std::string& op, F body) -> decltype(body()) {
    if (auto r = Exec(op + ": begin", "BEGIN"); !r) return r.error();
    auto result = body();
    if (!result) {
      Rollback();
      return result;
    }
    if (auto r = Exec(op + ": commit", "COMMIT"); !r) {
      Rollback();
      return r.error();
    }
    return result;
  }

  /// The URI without its password.
  const std::string& where() const { return where_; }
  /// The schema version this program migrates to.
  static int SchemaVersion();

 private:
  PgConnection(std::string uri, PGconn* conn, bool read_only);
  Status Migrate();
  /// Checks the schema is this program's and makes the session's transactions READ ONLY.
  Status StartReadOnly();
  Status SetSessionReadOnly(const std::string& op);
  Status Reconnect(const std::string& op);
  void Rollback();
  std::string OneLine(const std::string& text) const;

  const std::string where_;
  const std::string password_;
  PGconn* conn_;
  const bool read_only_;
};

}  // namespace accelopt::store
