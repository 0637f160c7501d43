#pragma once
/// A real HTTP server on loopback that speaks the OpenAI chat-completions and
/// Anthropic messages wire formats, scripted by tests (tests only).
///
/// Routes (all under 127.0.0.1 only):
///   POST /v1/chat/completions  OpenAI chat completions (non-streaming)
///   POST /v1/messages          Anthropic messages (non-streaming)
///   GET  /v1/models            OpenAI model list with one model, "fake-model"
///   GET  /api/tags             Ollama model list with one model, "fake-model"
/// Any other path answers 404 and consumes no script.
///
/// Each request to one of these routes takes the next Scripted entry from the
/// queue (kAnswer with defaults once it is empty) and acts on it. Every request
/// is recorded, before anything else happens, and can be read back with
/// requests().

#include <cstddef>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace accelopt::testing {

/// What the server does with one request.
enum class Behavior {
  kAnswer,         ///< 200 with a well-formed answer in the route's wire format
  kRateLimit,      ///< 429 with a JSON error body; Retry-After when retry_after_seconds >= 0
  kServerError,    ///< 500 with a JSON error body
  kMalformedJson,  ///< 200 with the truncated body `{"choices": [`
  kHang,           ///< waits hang_seconds, then answers like kAnswer; cut short (503) when the server stops
  kHuge,           ///< 200 with a valid answer whose text is huge_bytes long
  kDrop,           ///< closes the connection without sending a single byte
  kNoUsage,        ///< like kAnswer, without the usage object
  kBadRequest,     ///< 400 with a JSON error body
  kEchoKey,        ///< 401 whose error message repeats the API key it was sent (as careless servers do)
};

/// One scripted reaction. Designated initializers work: `{.behavior = Behavior::kHang, .hang_seconds = 2}`.
struct Scripted {
  Behavior behavior = Behavior::kAnswer;
  std::string text = "ok";  ///< the answer's text (kAnswer, kHang, kNoUsage)
  long input_tokens = 11;   ///< reported usage
  long output_tokens = 7;
  long reasoning_tokens = 0;        ///< OpenAI completion_tokens_details.reasoning_tokens
  double retry_after_seconds = -1;  ///< kRateLimit: sent as Retry-After ("2", "0.2") when >= 0
  double hang_seconds = 5;          ///< kHang: how long to wait before answering
  size_t huge_bytes = 32 << 20;     ///< kHuge: length of the answer's text
  std::string reasoning;            ///< OpenAI: message.reasoning_content when non-empty; Anthropic: the
                                    ///< thinking block's text (sent only when the request asked for thinking)
};

/// One request as the server received it.
struct ReceivedRequest {
  std::string method;                          ///< "GET", "POST"
  std::string path;                            ///< e.g. "/v1/chat/completions"
  std::map<std::string, std::string> headers;  ///< names lower-cased; repeated headers joined with ", "
  std::string body;
};

/// Not copyable or movable. All methods are thread-safe.
class FakeLlmServer {
 public:
  /// Binds 127.0.0.1 on a free port and serves from background threads; ready
  /// to accept connections when the constructor returns. Aborts if it cannot bind.
  FakeLlmServer();
  /// Stops and joins. Requests waiting in kHang are woken and answered 503, so
  /// this returns promptly (well under a second) even while requests hang.
  ~FakeLlmServer();
  FakeLlmServer(const FakeLlmServer&) = delete;
  FakeLlmServer& operator=(const FakeLlmServer&) = delete;

  int port() const;
  /// "http://127.0.0.1:PORT/v1".
  std::string base_url() const;

  /// Appends one reaction; reactions are consumed in order, one per request to a known route.
  void Enqueue(Scripted scripted);
  /// Scripted reactions not yet consumed.
  size_t pending() const;

  /// Everything received so far, in arrival order.
  std::vector<ReceivedRequest> requests() const;
  int request_count() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace accelopt::testing
