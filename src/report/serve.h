#pragma once
/// `accelopt serve`: a local, read-only web view over a store (issue 28).
///
/// Routes (GET and HEAD only; any other method is 405, any other path 404,
/// whatever it holds: `..`, its encodings, absolute paths, files; nothing is
/// ever read from disk by path):
///   /                          the runs, newest first (HTML, every value escaped)
///   /runs/ID                   the run's report page, redrawn live from /api/runs/ID
///   /api/runs                  the runs (JSON)
///   /api/runs/ID               everything the run's page shows (JSON), with its live progress
///   /api/runs/ID/progress      the run's live progress alone (JSON; null when none was recorded)
/// No route writes; the CLI opens the store read-only (store::OpenStoreReadOnly).

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "core/json_io.h"
#include "core/result.h"
#include "store/store.h"

namespace accelopt::report {

/// What the run's page and its JSON are made of, so that routes are tested apart from the page.
struct RunPages {
  /// All of a run's data for its page (the report's RunReportData); the
  /// server adds "progress". An Error is the store's.
  std::function<Result<Json>(store::Store&, int64_t run_id)> data;
  /// The page over that data, re-fetching it from `live_api_url` (the report's RenderReportHtml).
  std::function<std::string(const Json& data, const std::string& live_api_url)> page;
};
/// The report's data and page (src/report), as `serve` shows them.
RunPages ReportPages();

struct ServeOptions {
  std::string bind = "127.0.0.1";  ///< loopback; anything else is asked for explicitly
  int port = 8765;                 ///< 0: any free port (tests)
  int threads = 16;                ///< requests answered at once; more wait in the kernel's queue
  RunPages pages = ReportPages();
};

/// One answer, before it is put on the wire.
struct Answer {
  int status = 200;
  std::string content_type;  ///< with its charset
  std::string body;
  bool html = false;     ///< sent with the HTML pages' security headers
  bool scripts = false;  ///< the page runs its own inline scripts (the report page)
};

/// The answer to `method` on `path` (decoded, without its query), reading
/// `store` only. Thread-safe when the store is.
Answer Route(store::Store& store, const RunPages& pages, const std::string& method, const std::string& path);

/// The runs as the index lists them: id, created, status, tasks, best % of peak (null: none scored).
Result<Json> RunsJson(store::Store& store);

/// Whether binding to `address` serves this machine only (localhost, ::1, 127.0.0.0/8).
bool IsLoopback(const std::string& address);

/// A server on its own threads. Stop (or the destructor) ends it.
class Server {
 public:
  /// Binds `options.bind`:`options.port` and starts answering. Errors: the
  /// address cannot be bound (a port in use, an address not of this machine),
  /// named with the address.
  static Result<std::unique_ptr<Server>> Start(store::Store& store, ServeOptions options);
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  int port() const;
  /// http://ADDRESS:PORT/
  std::string url() const;
  /// Blocks until the server stops (Stop from another thread, or a failure).
  /// Called by one thread at a time.
  void Wait();
  /// Stops answering; returns at once (Wait, or the destructor, waits for the threads).
  void Stop();

 private:
  struct Impl;
  explicit Server(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace accelopt::report
