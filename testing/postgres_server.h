#pragma once
/// A throwaway PostgreSQL server for a test (tests only): initdb in a
/// temporary folder, a server on a free port of 127.0.0.1 (and a unix socket
/// in that folder) with password authentication, stopped and removed when the
/// object dies. Built for speed, not durability: fsync is off.
///
/// Run as root, the server's programs run as the `postgres` user (PostgreSQL
/// refuses root), which owns the folder.

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/result.h"
#include "testing/cleanup_watcher.h"

namespace accelopt::testing {

class PostgresServer {
 public:
  /// The folder with initdb, pg_ctl and postgres (/usr/lib/postgresql/N/bin,
  /// the newest N), or nullopt with the reason in `*why_not` when there is none.
  static std::optional<std::string> FindBinaries(std::string* why_not);

  /// Starts a server; blocks until it accepts connections (at most
  /// `timeout_seconds`). An Error names the step that failed with the
  /// program's output or the server's log.
  static Result<std::unique_ptr<PostgresServer>> Start(double timeout_seconds = 60);

  /// Stops the server at once (pg_ctl stop -m immediate) and removes its
  /// folder. A test program that dies without it (killed, crashed) leaves
  /// nothing behind either: a watcher process does the same when it dies.
  ~PostgresServer();
  PostgresServer(const PostgresServer&) = delete;
  PostgresServer& operator=(const PostgresServer&) = delete;

  /// Creates database `name` (letters, digits and '_'); its URI.
  Result<std::string> CreateDatabase(const std::string& name);

  /// postgresql://user:password@127.0.0.1:port/`database`.
  std::string Uri(const std::string& database) const;
  const std::string& user() const { return user_; }
  const std::string& password() const { return password_; }
  int port() const { return port_; }
  /// The folder holding the data directory, the log and the unix socket.
  const std::string& dir() const { return dir_; }

 private:
  PostgresServer() = default;
  Status Run(const std::string& step, const std::vector<std::string>& args, double timeout_seconds);
  Status StartWatcher();
  std::string Log() const;

  std::string bin_;
  std::string dir_;
  std::string user_ = "accelopt";
  std::string password_;
  int port_ = 0;
  CleanupWatcher watcher_;  // stops the server and removes the folder when this process ends it or dies
  int run_as_uid_ = -1, run_as_gid_ = -1;  // the postgres user when run as root
};

/// One server for the whole test program, started on first use and stopped
/// at exit. nullptr with the reason in `*why_not` when the PostgreSQL
/// programs are not installed (a test then skips); a server that is installed
/// but does not start fails the calling test with its log.
PostgresServer* SharedPostgresServer(std::string* why_not);

/// A new database named `<prefix>_<pid>_<n>` on the shared server, for one
/// test; "" when there is none, the calling test skipped (PostgreSQL is not
/// installed) or failed (it did not start, or the database was not made).
std::string NewTestDatabase(const std::string& prefix);

/// Runs `sql` (one or more statements) on `uri` with a connection of its own,
/// as another program would; "" when it succeeds, else the error message.
std::string Execute(const std::string& uri, const std::string& sql);

}  // namespace accelopt::testing
