#pragma once
/// store: one use of a prepared SQLite statement, shared by the SQLite store
/// and the SQLite job queue (service/). Internal to SQLite implementations.

#include <sqlite3.h>

#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <string>

#include "core/json_io.h"
#include "core/result.h"

namespace accelopt::store {

// One use of a cached prepared statement: binds parameters left to right,
// steps, reads columns, and resets the statement when it goes out of scope (which
// also ends the implicit read transaction of a SELECT). Errors name the file and
// the operation. A failed prepare or bind is kept and reported by the next step.
class Query {
 public:
  Query(const std::string& file, sqlite3* db, sqlite3_stmt* stmt, const char* op, int rc)
      : file_(file), db_(db), stmt_(stmt), op_(op), rc_(rc) {}
  ~Query() {
    if (stmt_ == nullptr) return;
    sqlite3_reset(stmt_);
    sqlite3_clear_bindings(stmt_);
  }
  Query(const Query&) = delete;
  Query& operator=(const Query&) = delete;

  Query& BindInt(int64_t value) { return Check(stmt_ ? sqlite3_bind_int64(stmt_, ++index_, value) : SQLITE_OK); }
  Query& BindReal(double value) { return Check(stmt_ ? sqlite3_bind_double(stmt_, ++index_, value) : SQLITE_OK); }
  Query& BindText(const std::string& value) {
    return Check(stmt_ ? sqlite3_bind_text64(stmt_, ++index_, value.data(), value.size(), SQLITE_TRANSIENT, SQLITE_UTF8)
                       : SQLITE_OK);
  }
  /// 0 (none) becomes NULL.
  Query& BindId(int64_t id) {
    if (id != 0) return BindInt(id);
    return Check(stmt_ ? sqlite3_bind_null(stmt_, ++index_) : SQLITE_OK);
  }
  /// "" becomes NULL.
  Query& BindTextOrNull(const std::string& value) {
    if (!value.empty()) return BindText(value);
    return Check(stmt_ ? sqlite3_bind_null(stmt_, ++index_) : SQLITE_OK);
  }
  Query& BindJson(const Json& value) { return BindText(DumpJson(value)); }

  /// True when a row is ready to read, false when the statement is done.
  Result<bool> Next() {
    if (rc_ != SQLITE_OK) return Fail(rc_);
    int rc = sqlite3_step(stmt_);
    if (rc == SQLITE_ROW) return true;
    if (rc == SQLITE_DONE) return false;
    return Fail(rc);
  }
  /// Steps to the end; for a write in autocommit mode, the commit happens here.
  Status Run() {
    for (;;) {
      auto row = Next();
      if (!row) return row.error();
      if (!*row) return Ok{};
    }
  }

  int64_t Int(int col) const { return sqlite3_column_int64(stmt_, col); }
  // NULL is what SQLite made of a NaN.
  double Real(int col) const {
    if (sqlite3_column_type(stmt_, col) == SQLITE_NULL) return std::numeric_limits<double>::quiet_NaN();
    return sqlite3_column_double(stmt_, col);
  }
  std::string Text(int col) const {
    const auto* text = reinterpret_cast<const char*>(sqlite3_column_text(stmt_, col));
    if (text == nullptr) return "";
    return std::string(text, sqlite3_column_bytes(stmt_, col));
  }
  Result<Json> JsonAt(int col) const {
    try {
      return Json::parse(Text(col));
    } catch (const Json::exception& e) {
      return Fail(std::string("stored JSON in column '") + sqlite3_column_name(stmt_, col) +
                  "' is invalid: " + e.what());
    }
  }

  Error Fail(const std::string& message) const { return Error{file_ + ": " + op_ + ": " + message}; }
  Error Fail(int rc) const {
    // sqlite3_errmsg is specific ("FOREIGN KEY constraint failed") but only
    // describes the connection's latest failure; fall back to the code's text.
    bool current = (sqlite3_extended_errcode(db_) == rc || sqlite3_errcode(db_) == (rc & 0xff));
    return Fail(current ? sqlite3_errmsg(db_) : sqlite3_errstr(rc));
  }

 private:
  Query& Check(int rc) {
    if (rc != SQLITE_OK && rc_ == SQLITE_OK) rc_ = rc;
    return *this;
  }

  const std::string& file_;
  sqlite3* db_;
  sqlite3_stmt* stmt_;
  const char* op_;
  int rc_;
  int index_ = 0;
};

/// The prepared statements of one connection, prepared once and reused. Not
/// thread-safe: its owner serializes the connection's use.
class StatementCache {
 public:
  StatementCache(const std::string& file, sqlite3* db) : file_(file), db_(db) {}
  ~StatementCache() {
    for (auto& [sql, stmt] : statements_) sqlite3_finalize(stmt);
  }
  StatementCache(const StatementCache&) = delete;
  StatementCache& operator=(const StatementCache&) = delete;

  Query Prepare(const char* op, const char* sql) {
    auto it = statements_.find(sql);
    if (it != statements_.end()) return Query(file_, db_, it->second, op, SQLITE_OK);
    sqlite3_stmt* stmt = nullptr;
    int rc = sqlite3_prepare_v3(db_, sql, -1, SQLITE_PREPARE_PERSISTENT, &stmt, nullptr);
    if (rc != SQLITE_OK) {
      sqlite3_finalize(stmt);
      return Query(file_, db_, nullptr, op, rc);
    }
    statements_.emplace(sql, stmt);
    return Query(file_, db_, stmt, op, SQLITE_OK);
  }

 private:
  const std::string& file_;
  sqlite3* db_;
  std::map<std::string, sqlite3_stmt*, std::less<>> statements_;
};

}  // namespace accelopt::store
