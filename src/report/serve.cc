// The read-only web view: one routing function over the store (Route), and a
// cpp-httplib server that hands it every request before httplib's own routing.

#include "report/serve.h"

#include <fmt/core.h>
#include <httplib.h>

#include <chrono>
#include <cmath>
#include <cstring>
#include <thread>

#include <sys/socket.h>

#include "core/check.h"

namespace accelopt::report {
namespace {

// Connections the kernel holds for the server while its threads are busy.
constexpr int kBacklog = 1024;

// Longer paths are not ours: answered 404 without being looked at further.
constexpr size_t kMaxPath = 64;

// A run id as the routes take it: 1 to 18 decimal digits, nothing else.
std::optional<int64_t> RunId(std::string_view text) {
  if (text.empty() || text.size() > 18) return std::nullopt;
  int64_t id = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return std::nullopt;
    id = id * 10 + (c - '0');
  }
  if (id <= 0) return std::nullopt;
  return id;
}

// Bytes that are not UTF-8 become U+FFFD, one per byte, so that text from a
// kernel or a model cannot make the page's encoding ambiguous.
std::string ValidUtf8(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    const auto b = static_cast<unsigned char>(s[i]);
    size_t n = b < 0x80 ? 1 : (b >> 5) == 0x6 ? 2 : (b >> 4) == 0xE ? 3 : (b >> 3) == 0x1E ? 4 : 0;
    bool ok = n > 0 && i + n <= s.size();
    for (size_t k = 1; ok && k < n; ++k) ok = (static_cast<unsigned char>(s[i + k]) & 0xC0) == 0x80;
    if (ok && n > 1) {
      // Overlong forms, surrogates and code points past U+10FFFF are not UTF-8 either.
      uint32_t cp = b & (0x7F >> n);
      for (size_t k = 1; k < n; ++k) cp = (cp << 6) | (static_cast<unsigned char>(s[i + k]) & 0x3F);
      static constexpr uint32_t kMin[] = {0, 0, 0x80, 0x800, 0x10000};
      ok = cp >= kMin[n] && cp <= 0x10FFFF && !(cp >= 0xD800 && cp <= 0xDFFF);
    }
    if (!ok) {
      out += "\xEF\xBF\xBD";
      ++i;
      continue;
    }
    out.append(s.substr(i, n));
    i += n;
  }
  return out;
}

std::string EscapeHtml(std::string_view text) {
  std::string out;
  for (char c : ValidUtf8(text)) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

Answer JsonAnswer(int status, const Json& value) {
  return {status, "application/json; charset=utf-8", DumpJson(value) + "\n"};
}

Answer ErrorAnswer(int status, const std::string& message) { return JsonAnswer(status, {{"error", message}}); }

// The best % of peak a run shows: its finished tasks' best, else the live
// progress's best so far; null when nothing was scored.
Json BestPercent(const store::RunInfo& run, const Json& progress) {
  double best = -1;
  if (run.summary.is_array())
    for (const Json& t : run.summary)
      if (t.is_object() && t.contains("percent_after") && t["percent_after"].is_number())
        best = std::max(best, t["percent_after"].get<double>());
  if (best < 0 && progress.is_object() && progress.contains("best_percent_of_peak") &&
      progress["best_percent_of_peak"].is_number())
    best = progress["best_percent_of_peak"].get<double>();
  return best >= 0 && std::isfinite(best) ? Json(best) : Json(nullptr);
}

Json TasksOf(const store::RunInfo& run) {
  Json tasks = Json::array();
  if (run.config.is_object() && run.config.contains("tasks") && run.config["tasks"].is_array())
    for (const Json& t : run.config["tasks"])
      if (t.is_string()) tasks.push_back(t);
  return tasks;
}

std::string PercentText(const Json& percent) {
  return percent.is_number() ? fmt::format("{:.2f}%", percent.get<double>()) : "-";
}

Answer IndexPage(store::Store& store) {
  auto runs = RunsJson(store);
  if (!runs) return ErrorAnswer(500, runs.error().message);
  std::string rows;
  for (const Json& r : *runs) {
    std::string tasks;
    for (const Json& t : r["tasks"]) tasks += (tasks.empty() ? "" : ", ") + t.get<std::string>();
    const std::string id = std::to_string(r["id"].get<int64_t>());
    rows += "<tr><td><a href=\"/runs/" + id + "\">" + id + "</a></td><td>" +
            EscapeHtml(r["created_at"].get<std::string>()) + "</td><td>" + EscapeHtml(r["status"].get<std::string>()) +
            "</td><td>" + EscapeHtml(tasks) + "</td><td class=\"n\">" + PercentText(r["best_percent_of_peak"]) +
            "</td></tr>\n";
  }
  std::string body =
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>accelopt runs</title>\n"
      "<style>body{font-family:sans-serif;margin:2em}table{border-collapse:collapse}"
      "td,th{padding:.3em .8em;border-bottom:1px solid #ddd;text-align:left}td.n{text-align:right}</style>"
      "</head><body>\n<h1>Runs</h1>\n";
  if (runs->empty())
    body += "<p>No runs in this store yet: <code>accelopt optimize</code> records them.</p>\n";
  else
    body +=
        "<table><thead><tr><th>run</th><th>created</th><th>status</th><th>tasks</th><th>best % of peak</th></tr>"
        "</thead><tbody>\n" +
        rows + "</tbody></table>\n";
  body += "<p><a href=\"/api/runs\">JSON</a></p>\n</body></html>\n";
  Answer a{200, "text/html; charset=utf-8", std::move(body)};
  a.html = true;
  return a;
}

// The run's data for its page and its JSON, with its live progress; nullopt: no such run.
Result<std::optional<Json>> RunData(store::Store& store, const RunPages& pages, int64_t id) {
  auto run = store.GetRun(id);
  if (!run) return run.error();
  if (!*run) return std::optional<Json>();
  auto data = pages.data(store, id);
  if (!data) return data.error();
  auto progress = store.GetRunProgress(id);
  if (!progress) return progress.error();
  (*data)["progress"] = *progress ? **progress : Json(nullptr);
  return std::optional<Json>(std::move(*data));
}

Answer RunRoute(store::Store& store, const RunPages& pages, int64_t id, bool page) {
  auto data = RunData(store, pages, id);
  if (!data) return ErrorAnswer(500, data.error().message);
  if (!*data) return ErrorAnswer(404, "no run " + std::to_string(id) + " in this store");
  if (!page) return JsonAnswer(200, **data);
  Answer a{200, "text/html; charset=utf-8", pages.page(**data, "/api/runs/" + std::to_string(id))};
  a.html = true;
  a.scripts = true;
  return a;
}

Answer ProgressRoute(store::Store& store, int64_t id) {
  auto run = store.GetRun(id);
  if (!run) return ErrorAnswer(500, run.error().message);
  if (!*run) return ErrorAnswer(404, "no run " + std::to_string(id) + " in this store");
  auto progress = store.GetRunProgress(id);
  if (!progress) return ErrorAnswer(500, progress.error().message);
  return JsonAnswer(200, {{"run", id}, {"status", (*run)->status}, {"progress", *progress ? **progress : Json()}});
}

// Bound to loopback, a request must name a loopback host: a web page that
// points some name of its own at 127.0.0.1 (DNS rebinding) gets nothing.
bool HostAllowed(const std::string& host, bool loopback_only) {
  if (!loopback_only || host.empty()) return true;
  std::string name = host;
  if (name.front() == '[') {
    const size_t end = name.find(']');
    name = end == std::string::npos ? name : name.substr(1, end - 1);
  } else if (const size_t colon = name.rfind(':'); colon != std::string::npos) {
    name = name.substr(0, colon);
  }
  return name == "127.0.0.1" || name == "localhost" || name == "::1";
}

// The headers every answer carries; the HTML pages' policy lets them load
// nothing from anywhere and run only their own inline scripts.
void SetHeaders(const Answer& a, httplib::Response& res) {
  res.set_header("Cache-Control", "no-store");
  res.set_header("X-Content-Type-Options", "nosniff");
  res.set_header("Referrer-Policy", "no-referrer");
  if (a.html) {
    res.set_header("X-Frame-Options", "DENY");
    res.set_header("Content-Security-Policy",
                   std::string("default-src 'none'; style-src 'unsafe-inline'; img-src data:; connect-src 'self'; "
                               "frame-ancestors 'none'; base-uri 'none'; form-action 'none'") +
                       (a.scripts ? "; script-src 'unsafe-inline'" : ""));
  }
}

}  // namespace

bool IsLoopback(const std::string& address) {
  return address == "localhost" || address == "::1" || address.rfind("127.", 0) == 0;
}

Result<Json> RunsJson(store::Store& store) {
  auto runs = store.ListRuns();
  if (!runs) return runs.error();
  Json out = Json::array();
  for (const store::RunInfo& r : *runs) {
    Json progress;
    if (r.status == "running") {
      auto p = store.GetRunProgress(r.id);
      if (!p) return p.error();
      if (*p) progress = **p;
    }
    out.push_back({{"id", r.id},
                   {"created_at", r.created_at},
                   {"status", r.status},
                   {"tasks", TasksOf(r)},
                   {"best_percent_of_peak", BestPercent(r, progress)}});
  }
  return out;
}

Answer Route(store::Store& store, const RunPages& pages, const std::string& method, const std::string& path) {
  if (method != "GET" && method != "HEAD") {
    Answer a = ErrorAnswer(405, "method " + method + " is not allowed: this server only reads (GET, HEAD)");
    return a;
  }
  if (path.size() > kMaxPath || path.empty() || path[0] != '/') return ErrorAnswer(404, "no such page");
  if (path == "/") return IndexPage(store);
  if (path == "/api/runs") {
    auto runs = RunsJson(store);
    return runs ? JsonAnswer(200, *runs) : ErrorAnswer(500, runs.error().message);
  }
  const std::string_view p(path);
  auto tail_id = [&](std::string_view prefix, std::string_view suffix) -> std::optional<int64_t> {
    if (p.size() <= prefix.size() + suffix.size() || p.substr(0, prefix.size()) != prefix ||
        p.substr(p.size() - suffix.size()) != suffix)
      return std::nullopt;
    return RunId(p.substr(prefix.size(), p.size() - prefix.size() - suffix.size()));
  };
  if (auto id = tail_id("/runs/", "")) return RunRoute(store, pages, *id, /*page=*/true);
  if (auto id = tail_id("/api/runs/", "")) return RunRoute(store, pages, *id, /*page=*/false);
  if (auto id = tail_id("/api/runs/", "/progress")) return ProgressRoute(store, *id);
  return ErrorAnswer(404, "no such page");
}

struct Server::Impl {
  store::Store& store;
  ServeOptions options;
  httplib::Server http;
  int port = 0;
  int listening = -1;  // the listening socket, once bound
  std::thread thread;
  Impl(store::Store& s, ServeOptions o) : store(s), options(std::move(o)) {}
};

Server::Server(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

Server::~Server() {
  Stop();
  Wait();
}

Result<std::unique_ptr<Server>> Server::Start(store::Store& store, ServeOptions options) {
  auto impl = std::make_unique<Impl>(store, std::move(options));
  Impl& s = *impl;
  const int threads = std::max(1, s.options.threads);
  s.http.new_task_queue = [threads] { return new httplib::ThreadPool(threads); };
  // Every request is answered here, before httplib's routing: nothing else
  // (no file mount, no pattern of its own) can answer one.
  const bool loopback = IsLoopback(s.options.bind);
  s.http.set_pre_routing_handler([&s, loopback](const httplib::Request& req, httplib::Response& res) {
    Answer a = HostAllowed(req.get_header_value("Host"), loopback)
                   ? Route(s.store, s.options.pages, req.method, req.path)
                   : ErrorAnswer(403, "this server answers requests for 127.0.0.1 or localhost only");
    res.status = a.status;
    SetHeaders(a, res);
    if (a.status == 405) res.set_header("Allow", "GET, HEAD");
    res.set_content(std::move(a.body), a.content_type);
    return httplib::Server::HandlerResponse::Handled;
  });
  s.http.set_payload_max_length(1 << 16);
  // SO_REUSEADDR only: httplib's default adds SO_REUSEPORT, with which a
  // second server on the same port would bind too, and the two would share
  // its requests instead of the second saying the port is in use.
  s.http.set_socket_options([&s](int sock) {
    int yes = 1;
    setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
    s.listening = sock;
  });
  const std::string where = s.options.bind + ":" + std::to_string(s.options.port);
  if (s.options.port == 0) {
    s.port = s.http.bind_to_any_port(s.options.bind);
    if (s.port < 0) return Error{"cannot serve on " + s.options.bind + ": no port could be bound"};
  } else {
    if (!s.http.bind_to_port(s.options.bind, s.options.port))
      return Error{"cannot serve on " + where + ": " + std::strerror(errno) +
                   " (is another server on that port? --port names another)"};
    s.port = s.options.port;
  }
  // httplib listens with a backlog of 5: a burst of connections beyond it
  // waits for SYN retries (a second or more). Listening again raises it.
  if (s.listening >= 0) ::listen(s.listening, kBacklog);
  s.thread = std::thread([&s] { s.http.listen_after_bind(); });
  // Until it runs, a stop would go unheard (and the join never end).
  while (!s.http.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  return std::unique_ptr<Server>(new Server(std::move(impl)));
}

int Server::port() const { return impl_->port; }

std::string Server::url() const {
  const std::string& host = impl_->options.bind;
  const bool v6 = host.find(':') != std::string::npos;
  return "http://" + (v6 ? "[" + host + "]" : host) + ":" + std::to_string(impl_->port) + "/";
}

void Server::Wait() {
  if (impl_->thread.joinable()) impl_->thread.join();
}

void Server::Stop() { impl_->http.stop(); }

}  // namespace accelopt::report
