// Starting a PostgreSQL server for a test: initdb, pg_ctl start, a first
// connection. The programs run as children with their output in a file of the
// server's folder, so that a failure can show it.

#include "testing/postgres_server.h"
#include "testing/shared_server.h"


#include <arpa/inet.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <grp.h>
#include <libpq-fe.h>
#include <netinet/in.h>
#include <pwd.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <random>
#include <sstream>
#include <thread>

namespace accelopt::testing {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

std::string ReadAll(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// The last `n` bytes of `text`: a log's end says why.
std::string Tail(const std::string& text, size_t n = 4000) {
  return text.size() <= n ? text : "..." + text.substr(text.size() - n);
}

// A port of 127.0.0.1 that nothing listens on now (another process may take
// it before the server binds it: Start tries again with another).
Result<int> FreePort() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return Error{std::string("find a free port: socket: ") + strerror(errno)};
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  socklen_t len = sizeof addr;
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
      getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    std::string why = strerror(errno);
    close(fd);
    return Error{"find a free port: " + why};
  }
  close(fd);
  return static_cast<int>(ntohs(addr.sin_port));
}

std::string RandomPassword() {
  std::random_device random;
  std::string out;
  const char* digits = "0123456789abcdef";
  for (int i = 0; i < 24; ++i) out.push_back(digits[random() % 16]);
  return out;
}

}  // namespace

std::optional<std::string> PostgresServer::FindBinaries(std::string* why_not) {
  const fs::path root = "/usr/lib/postgresql";
  std::error_code ec;
  int best = -1;
  std::string found;
  for (const auto& entry : fs::directory_iterator(root, ec)) {
    const fs::path bin = entry.path() / "bin";
    if (!fs::exists(bin / "initdb") || !fs::exists(bin / "pg_ctl") || !fs::exists(bin / "postgres")) continue;
    int version = atoi(entry.path().filename().c_str());
    if (version > best) {
      best = version;
      found = bin.string();
    }
  }
  if (best < 0) {
    *why_not = "PostgreSQL is not installed (no initdb, pg_ctl and postgres under " + root.string() +
               "/*/bin; scripts/setup.sh installs them)";
    return std::nullopt;
  }
  return found;
}

Result<std::unique_ptr<PostgresServer>> PostgresServer::Start(double timeout_seconds) {
  std::string why_not;
  auto bin = FindBinaries(&why_not);
  if (!bin) return Error{why_not};
  std::unique_ptr<PostgresServer> server(new PostgresServer());
  server->bin_ = *bin;
  std::string pattern = (fs::temp_directory_path() / "accelopt-pg-XXXXXX").string();
  if (!mkdtemp(pattern.data())) return Error{"postgres server: mkdtemp " + pattern + ": " + strerror(errno)};
  server->dir_ = pattern;
  server->password_ = RandomPassword();
  const std::string& dir = server->dir_;

  if (geteuid() == 0) {
    const passwd* pw = getpwnam("postgres");
    if (!pw)
      return Error{"postgres server: run as root, the server needs the user 'postgres' (PostgreSQL refuses root; "
                   "the Debian package creates it)"};
    server->run_as_uid_ = static_cast<int>(pw->pw_uid);
    server->run_as_gid_ = static_cast<int>(pw->pw_gid);
    if (chown(dir.c_str(), pw->pw_uid, pw->pw_gid) != 0)
      return Error{"postgres server: chown " + dir + " to postgres: " + strerror(errno)};
  }
  if (Status s = server->StartWatcher(); !s) return s.error();
  const std::string pwfile = dir + "/pwfile";
  {
    std::ofstream out(pwfile);
    out << server->password_ << "\n";
    if (!out) return Error{"postgres server: write " + pwfile};
  }
  chmod(pwfile.c_str(), 0600);
  if (server->run_as_uid_ >= 0 &&
      chown(pwfile.c_str(), static_cast<uid_t>(server->run_as_uid_), static_cast<gid_t>(server->run_as_gid_)) != 0)
    return Error{"postgres server: chown " + pwfile + ": " + strerror(errno)};

  const auto deadline = Clock::now() + std::chrono::duration<double>(timeout_seconds);
  auto left = [&] { return std::chrono::duration<double>(deadline - Clock::now()).count(); };
  if (Status s = server->Run("initdb",
                             {server->bin_ + "/initdb", "-D", dir + "/data", "-U", server->user_,
                              "--pwfile=" + pwfile, "--auth-host=scram-sha-256", "--auth-local=trust", "--no-sync",
                              "--no-instructions", "-E", "UTF8", "--locale=C"},
                             left());
      !s)
    return s.error();
  fs::remove(pwfile);

  // The port may be taken between FreePort and the server's bind: try again.
  for (int tries = 0;; ++tries) {
    auto port = FreePort();
    if (!port) return port.error();
    server->port_ = *port;
    const std::string options = "-c listen_addresses=127.0.0.1 -p " + std::to_string(*port) + " -k " + dir +
                                " -c fsync=off -c synchronous_commit=off -c full_page_writes=off";
    Status s = server->Run("pg_ctl start",
                           {server->bin_ + "/pg_ctl", "start", "-w", "-t",
                            std::to_string(std::max(1, static_cast<int>(left()))), "-D", dir + "/data", "-l",
                            dir + "/server.log", "-o", options},
                           left() + 5);
    if (s) break;
    if (tries < 3 && server->Log().find("could not bind") != std::string::npos && left() > 1) continue;
    return s.error();
  }

  // pg_ctl -w waits for the server; a first connection with the password proves it.
  const std::string uri = server->Uri("postgres");
  for (;;) {
    PGconn* conn = PQconnectdb(uri.c_str());
    const bool ok = PQstatus(conn) == CONNECTION_OK;
    std::string why = PQerrorMessage(conn);
    PQfinish(conn);
    if (ok) break;
    if (left() <= 0)
      return Error{"postgres server on port " + std::to_string(server->port_) + " does not accept connections: " +
                   why + "\nserver log:\n" + Tail(server->Log())};
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return server;
}

PostgresServer::~PostgresServer() {
  watcher_.Finish();
  std::error_code ec;
  if (!dir_.empty()) fs::remove_all(dir_, ec);
}

// Stops the server (pg_ctl stop -m immediate, harmless when none runs) and
// removes the folder: at the destructor, or when this process dies however it dies.
Status PostgresServer::StartWatcher() {
  const std::string as_postgres =
      run_as_uid_ >= 0 ? "setpriv --reuid=postgres --regid=postgres --init-groups " : "";
  return watcher_.Start("postgres server", as_postgres + "'" + bin_ + "/pg_ctl' stop -m immediate -w -D '" + dir_ +
                                               "/data' >/dev/null 2>&1; rm -rf '" + dir_ + "'");
}

std::string PostgresServer::Uri(const std::string& database) const {
  return "postgresql://" + user_ + ":" + password_ + "@127.0.0.1:" + std::to_string(port_) + "/" + database;
}

std::string PostgresServer::Log() const { return ReadAll(dir_ + "/server.log"); }

Result<std::string> PostgresServer::CreateDatabase(const std::string& name) {
  for (char c : name)
    if (!isalnum(static_cast<unsigned char>(c)) && c != '_') return Error{"not a database name: '" + name + "'"};
  PGconn* conn = PQconnectdb(Uri("postgres").c_str());
  std::string why;
  if (PQstatus(conn) != CONNECTION_OK) {
    why = PQerrorMessage(conn);
  } else {
    PGresult* r = PQexec(conn, ("CREATE DATABASE " + name).c_str());
    if (PQresultStatus(r) != PGRES_COMMAND_OK) why = PQresultErrorMessage(r);
    PQclear(r);
  }
  PQfinish(conn);
  if (!why.empty()) return Error{"create database " + name + " on port " + std::to_string(port_) + ": " + why};
  return Uri(name);
}

// Runs `args` in the server's folder (as the postgres user when root), its
// output appended to commands.log; an Error with that output when it fails
// or outlives `timeout_seconds`.
Status PostgresServer::Run(const std::string& step, const std::vector<std::string>& args, double timeout_seconds) {
  const std::string log = dir_ + "/commands.log";
  const std::string out_path = dir_ + "/" + std::to_string(getpid()) + ".out";
  std::vector<char*> argv;
  for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  const pid_t pid = fork();
  if (pid < 0) return Error{"postgres server: " + step + ": fork: " + strerror(errno)};
  if (pid == 0) {
    // Only async-signal-safe calls between fork and exec.
    int fd = open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd >= 0) {
      dup2(fd, 1);
      dup2(fd, 2);
    }
    int null = open("/dev/null", O_RDONLY);
    if (null >= 0) dup2(null, 0);
    close_range(3, ~0U, 0);
    if (chdir(dir_.c_str()) != 0) _exit(126);
    if (run_as_uid_ >= 0) {
      if (fd >= 0 && fchown(1, static_cast<uid_t>(run_as_uid_), static_cast<gid_t>(run_as_gid_)) != 0) _exit(126);
      if (setgroups(0, nullptr) != 0 || setgid(static_cast<gid_t>(run_as_gid_)) != 0 ||
          setuid(static_cast<uid_t>(run_as_uid_)) != 0)
        _exit(126);
    }
    execv(argv[0], argv.data());
    _exit(127);
  }
  const auto deadline = Clock::now() + std::chrono::duration<double>(std::max(timeout_seconds, 1.0));
  int status = 0;
  bool timed_out = false;
  for (;;) {
    const pid_t done = waitpid(pid, &status, WNOHANG);
    if (done == pid) break;
    if (Clock::now() > deadline) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      timed_out = true;
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  const std::string output = ReadAll(out_path);
  fs::remove(out_path);
  {
    std::ofstream(log, std::ios::app) << "$ " << step << "\n" << output;
  }
  if (!timed_out && WIFEXITED(status) && WEXITSTATUS(status) == 0) return Ok{};
  std::string how = timed_out                ? "timed out after " + std::to_string(timeout_seconds) + " s"
                    : WIFEXITED(status)      ? "exit code " + std::to_string(WEXITSTATUS(status))
                    : WIFSIGNALED(status)    ? "killed by signal " + std::to_string(WTERMSIG(status))
                                             : "failed";
  std::string message = "postgres server: " + step + " (" + args[0] + ") " + how + ":\n" + Tail(output);
  const std::string server_log = Log();
  if (!server_log.empty()) message += "\nserver log:\n" + Tail(server_log);
  return Error{message};
}

PostgresServer* SharedPostgresServer(std::string* why_not) {
  return SharedServer<PostgresServer>(
      "PostgreSQL", why_not, [](std::string* why) { return PostgresServer::FindBinaries(why).has_value(); },
      [] { return PostgresServer::Start(); });
}

std::string NewTestDatabase(const std::string& prefix) {
  std::string why_not;
  PostgresServer* server = SharedPostgresServer(&why_not);
  if (!server) {
    if (!::testing::Test::HasFailure()) [&] { GTEST_SKIP() << why_not; }();
    return "";
  }
  static std::atomic<int> next{0};
  auto uri = server->CreateDatabase(prefix + "_" + std::to_string(getpid()) + "_" + std::to_string(next++));
  EXPECT_TRUE(uri.ok()) << uri.error().message;
  return uri.ok() ? *uri : "";
}

std::string Execute(const std::string& uri, const std::string& sql) {
  PGconn* conn = PQconnectdb(uri.c_str());
  std::string why;
  if (PQstatus(conn) != CONNECTION_OK) {
    why = PQerrorMessage(conn);
  } else {
    PGresult* r = PQexec(conn, sql.c_str());
    if (PQresultStatus(r) != PGRES_COMMAND_OK && PQresultStatus(r) != PGRES_TUPLES_OK) why = PQresultErrorMessage(r);
    PQclear(r);
  }
  PQfinish(conn);
  return why;
}

}  // namespace accelopt::testing
