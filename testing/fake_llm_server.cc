#include "testing/fake_llm_server.h"

#include <netinet/in.h>
#include <sys/socket.h>

#include <atomic>
#include <cctype>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <filesystem>
#include <mutex>
#include <sstream>
#include <thread>
#include <utility>

#include <nlohmann/json.hpp>

#include "testing/httplib.h"

namespace accelopt::testing {
namespace {

using nlohmann::json;

constexpr char kHost[] = "127.0.0.1";
constexpr char kModelName[] = "fake-model";
// Enough for tests that keep several requests hanging at once.
constexpr size_t kWorkerThreads = 32;

enum class Route { kOpenAi, kAnthropic, kOpenAiModels, kOllamaTags, kUnknown };

// "2" for whole seconds, "0.2" otherwise: Retry-After as the servers we imitate send it.
std::string FormatSeconds(double seconds) {
  std::ostringstream out;
  out << seconds;
  return out.str();
}

void SetJson(httplib::Response& res, int status, const std::string& body) {
  res.status = status;
  res.set_content(body, "application/json");
}

void SetError(httplib::Response& res, Route route, int status, const std::string& type, const std::string& message) {
  json body;
  if (route == Route::kAnthropic) {
    body = {{"type", "error"}, {"error", {{"type", type}, {"message", message}}}};
  } else {
    body = {{"error", {{"message", message}, {"type", type}, {"code", nullptr}}}};
  }
  SetJson(res, status, body.dump());
}

json OpenAiAnswer(const json& request, const Scripted& s, int id, bool with_usage) {
  json message = {{"role", "assistant"}, {"content", s.text}};
  if (!s.reasoning.empty()) message["reasoning_content"] = s.reasoning;
  json answer = {
      {"id", "chatcmpl-fake-" + std::to_string(id)},
      {"object", "chat.completion"},
      {"created", 1700000000},
      {"model", request.value("model", std::string(kModelName))},
      {"choices", json::array({{{"index", 0}, {"message", message}, {"finish_reason", "stop"}}})},
  };
  if (with_usage) {
    answer["usage"] = {{"prompt_tokens", s.input_tokens},
                       {"completion_tokens", s.output_tokens},
                       {"total_tokens", s.input_tokens + s.output_tokens},
                       {"completion_tokens_details", {{"reasoning_tokens", s.reasoning_tokens}}}};
  }
  return answer;
}

json AnthropicAnswer(const json& request, const Scripted& s, int id, bool with_usage) {
  json content = json::array();
  if (request.contains("thinking")) {
    content.push_back({{"type", "thinking"},
                       {"thinking", s.reasoning.empty() ? std::string("Thinking it over.") : s.reasoning},
                       {"signature", "fake-signature"}});
  }
  content.push_back({{"type", "text"}, {"text", s.text}});
  json answer = {
      {"id", "msg_fake_" + std::to_string(id)},
      {"type", "message"},
      {"role", "assistant"},
      {"model", request.value("model", std::string(kModelName))},
      {"content", content},
      {"stop_reason", "end_turn"},
      {"stop_sequence", nullptr},
  };
  if (with_usage) answer["usage"] = {{"input_tokens", s.input_tokens}, {"output_tokens", s.output_tokens}};
  return answer;
}

// cpp-httplib gives handlers no access to their socket, so find it by its addresses (a TCP connection's
// pair of local and peer ports is unique on loopback) and shut it down. The socket stays open, so its
// number cannot be reused meanwhile; cpp-httplib's own write of the response then fails (EPIPE; the
// library ignores SIGPIPE) and it closes the socket as usual. The client sees the connection end
// before a single byte of a response.
bool ShutDownConnection(const httplib::Request& req) {
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator("/proc/self/fd", ec)) {
    const std::string name = entry.path().filename().string();
    if (name.empty() || !std::isdigit(static_cast<unsigned char>(name[0]))) continue;
    const int fd = std::atoi(name.c_str());
    sockaddr_in local{};
    sockaddr_in peer{};
    socklen_t local_len = sizeof local;
    socklen_t peer_len = sizeof peer;
    if (getsockname(fd, reinterpret_cast<sockaddr*>(&local), &local_len) != 0 || local.sin_family != AF_INET) continue;
    if (getpeername(fd, reinterpret_cast<sockaddr*>(&peer), &peer_len) != 0 || peer.sin_family != AF_INET) continue;
    if (ntohs(local.sin_port) == req.local_port && ntohs(peer.sin_port) == req.remote_port) {
      return shutdown(fd, SHUT_RDWR) == 0;
    }
  }
  return false;
}

}  // namespace

struct FakeLlmServer::State {
  httplib::Server server;
  std::thread thread;
  int port = -1;
  int listen_fd = -1;

  mutable std::mutex mutex;
  std::condition_variable stop_signal;  // ends kHang waits when the server stops
  bool stopping = false;
  std::deque<Scripted> queue;
  std::vector<ReceivedRequest> requests;
  int next_id = 1;

  // Records the request and returns its script (the default answer once the queue is empty).
  Scripted Record(const httplib::Request& req, bool consume, int* id) {
    ReceivedRequest received{req.method, req.path, {}, req.body};
    for (const auto& [name, value] : req.headers) {
      std::string lower = name;
      for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      auto [it, inserted] = received.headers.emplace(lower, value);
      if (!inserted) it->second += ", " + value;
    }
    std::lock_guard<std::mutex> lock(mutex);
    requests.push_back(std::move(received));
    *id = next_id++;
    if (!consume || queue.empty()) return Scripted{};
    Scripted next = std::move(queue.front());
    queue.pop_front();
    return next;
  }

  // Waits `seconds`; false when the server began to stop first.
  bool Wait(double seconds) {
    std::unique_lock<std::mutex> lock(mutex);
    return !stop_signal.wait_for(lock, std::chrono::duration<double>(seconds), [this] { return stopping; });
  }

  void Serve(Route route, const httplib::Request& req, httplib::Response& res) {
    int id = 0;
    Scripted s = Record(req, route != Route::kUnknown, &id);
    if (route == Route::kUnknown) return SetError(res, route, 404, "not_found_error", "no route for " + req.path);
    switch (s.behavior) {
      case Behavior::kRateLimit:
        if (s.retry_after_seconds >= 0) res.set_header("Retry-After", FormatSeconds(s.retry_after_seconds));
        return SetError(res, route, 429, "rate_limit_error", "rate limited (scripted)");
      case Behavior::kServerError:
        return SetError(res, route, 500, "api_error", "internal server error (scripted)");
      case Behavior::kBadRequest:
        return SetError(res, route, 400, "invalid_request_error", "bad request (scripted)");
      case Behavior::kMalformedJson:
        return SetJson(res, 200, R"({"choices": [)");
      case Behavior::kEchoKey:  // as careless servers do: "Incorrect API key provided: <the key>"
        return SetError(
            res, route, 401, "authentication_error",
            "Incorrect API key provided: " + req.get_header_value("Authorization") + req.get_header_value("x-api-key"));
      case Behavior::kDrop:
        if (!ShutDownConnection(req)) {
          // Fallback: promise a body and send none, so the client sees a truncated response.
          res.set_content_provider(1024, "application/json", [](size_t, size_t, httplib::DataSink&) { return false; });
        }
        return;
      case Behavior::kHang:
        if (!Wait(s.hang_seconds)) return SetError(res, route, 503, "overloaded_error", "server stopping");
        break;
      case Behavior::kHuge:
        s.text.assign(s.huge_bytes, 'x');
        break;
      case Behavior::kAnswer:
      case Behavior::kNoUsage:
        break;
    }
    Answer(route, req, s, id, s.behavior != Behavior::kNoUsage, res);
  }

  void Answer(Route route, const httplib::Request& req, const Scripted& s, int id, bool with_usage,
              httplib::Response& res) {
    if (route == Route::kOpenAiModels) {
      json model = {{"id", kModelName}, {"object", "model"}, {"created", 1700000000}, {"owned_by", "fake"}};
      return SetJson(res, 200, json{{"object", "list"}, {"data", json::array({model})}}.dump());
    }
    if (route == Route::kOllamaTags) {
      return SetJson(res, 200, json{{"models", json::array({{{"name", kModelName}, {"model", kModelName}}})}}.dump());
    }
    json request = json::parse(req.body, nullptr, /*allow_exceptions=*/false);
    if (!request.is_object()) return SetError(res, route, 400, "invalid_request_error", "body is not a JSON object");
    json answer = route == Route::kOpenAi ? OpenAiAnswer(request, s, id, with_usage)
                                          : AnthropicAnswer(request, s, id, with_usage);
    SetJson(res, 200, answer.dump());
  }
};

FakeLlmServer::FakeLlmServer() : state_(std::make_unique<State>()) {
  State* state = state_.get();
  httplib::Server& server = state->server;
  server.new_task_queue = [] { return new httplib::ThreadPool(kWorkerThreads); };
  // One request per connection: an idle keep-alive connection would otherwise hold a worker, and with it
  // the destructor, for the keep-alive timeout after stop().
  server.set_keep_alive_max_count(1);
  auto handler = [state](Route route) {
    return [state, route](const httplib::Request& req, httplib::Response& res) { state->Serve(route, req, res); };
  };
  server.Post("/v1/chat/completions", handler(Route::kOpenAi));
  server.Post("/v1/messages", handler(Route::kAnthropic));
  server.Get("/v1/models", handler(Route::kOpenAiModels));
  server.Get("/api/tags", handler(Route::kOllamaTags));
  server.Get(".*", handler(Route::kUnknown));
  server.Post(".*", handler(Route::kUnknown));
  server.Put(".*", handler(Route::kUnknown));
  server.Patch(".*", handler(Route::kUnknown));
  server.Delete(".*", handler(Route::kUnknown));

  // Replaces cpp-httplib's default socket options (SO_REUSEADDR) and notes the listening socket.
  server.set_socket_options([state](socket_t sock) {
    int yes = 1;
    setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
    state->listen_fd = sock;
  });

  state->port = server.bind_to_any_port(kHost);
  if (state->port <= 0) {
    std::fprintf(stderr, "%s:%d: FakeLlmServer: cannot bind %s\n", __FILE__, __LINE__, kHost);
    std::abort();
  }
  // cpp-httplib 0.11 listens with a backlog of 5: beyond that, clients connecting at once lose their SYN and
  // retry a second later. Listening again on the same socket raises the backlog.
  if (state->listen_fd >= 0) listen(state->listen_fd, SOMAXCONN);
  state->thread = std::thread([state] { state->server.listen_after_bind(); });
  // stop() is a no-op until the accept loop runs, so the destructor must not race ahead of it.
  while (!server.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
}

FakeLlmServer::~FakeLlmServer() {
  {
    std::lock_guard<std::mutex> lock(state_->mutex);
    state_->stopping = true;
  }
  state_->stop_signal.notify_all();
  state_->server.stop();
  state_->thread.join();
}

int FakeLlmServer::port() const { return state_->port; }

std::string FakeLlmServer::base_url() const {
  return std::string("http://") + kHost + ":" + std::to_string(port()) + "/v1";
}

void FakeLlmServer::Enqueue(Scripted scripted) {
  std::lock_guard<std::mutex> lock(state_->mutex);
  state_->queue.push_back(std::move(scripted));
}

size_t FakeLlmServer::pending() const {
  std::lock_guard<std::mutex> lock(state_->mutex);
  return state_->queue.size();
}

std::vector<ReceivedRequest> FakeLlmServer::requests() const {
  std::lock_guard<std::mutex> lock(state_->mutex);
  return state_->requests;
}

int FakeLlmServer::request_count() const {
  std::lock_guard<std::mutex> lock(state_->mutex);
  return static_cast<int>(state_->requests.size());
}

}  // namespace accelopt::testing
