#pragma once
/// llm: the agents' access to language models (DESIGN.md section 6).
///
/// A ChatModel sends one chat request to one backend and returns the answer
/// with its token usage. Backends: OpenAI-compatible chat completions
/// (vLLM, SGLang, Ollama, llama.cpp, OpenAI, Gemini), Anthropic messages, a
/// scripted replay of recorded exchanges, and a file exchange with a person or
/// an external agent. Retries, concurrency limits, budgets, costs and records
/// are layered on top by LlmClient (llm_client.h), not by the backends.

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/result.h"

namespace accelopt::llm {

struct Message {
  std::string role;  ///< "system", "user" or "assistant"
  std::string content;
};

/// One request. Optional fields left empty use the backend's defaults.
struct ChatRequest {
  std::string agent_role;  ///< planner, executor, fixer, summarizer, ping (for matching and records)
  std::vector<Message> messages;
  std::optional<double> temperature;
  std::optional<int> max_tokens;
  std::string reasoning_effort;    ///< "low" | "medium" | "high" where the server accepts it; "" = omit
  int thinking_budget_tokens = 0;  ///< Anthropic extended thinking; 0 = off
};

struct Usage {
  long input_tokens = 0;
  long output_tokens = 0;
  long reasoning_tokens = 0;         ///< included in output_tokens where the server reports it
  bool estimated = false;            ///< the server sent no usage: counted from the text (about 4 characters a token)
  bool reasoning_estimated = false;  ///< reasoning_tokens counted from the reasoning text, the server gave no count
};

struct ChatResponse {
  std::string text;       ///< the answer
  std::string reasoning;  ///< visible reasoning/thinking text, if the server returns it
  std::string model;      ///< the model the server says answered
  std::string finish_reason;
  Usage usage;
};

/// Why a call failed, so the caller can decide whether to retry.
enum class FailureKind {
  kTimeout,      ///< no (complete) answer in time
  kConnection,   ///< could not connect, or the connection dropped
  kRateLimited,  ///< HTTP 429
  kServerError,  ///< HTTP 5xx
  kClientError,  ///< HTTP 4xx other than 429: the request itself is wrong
  kMalformed,    ///< an answer arrived but could not be understood
  kNoMatch,      ///< scripted backend: nothing recorded for this request
  kBudget,       ///< refused before sending: a budget is spent
};

const char* FailureKindName(FailureKind kind);

struct CallFailure {
  FailureKind kind;
  std::string message;  ///< never contains an API key
  int http_status = 0;
  double retry_after_seconds = -1;  ///< from Retry-After, when the server sent one
  std::string body;                 ///< the server's answer (truncated), for the record
};

/// The outcome of one attempt: a response or a failure.
struct ChatOutcome {
  std::optional<ChatResponse> response;
  std::optional<CallFailure> failure;
  bool ok() const { return response.has_value(); }
};

class ChatModel {
 public:
  virtual ~ChatModel() = default;
  /// "openai", "anthropic", "scripted", "exchange".
  virtual std::string backend() const = 0;
  /// The configured model name.
  virtual std::string model() const = 0;
  /// One attempt, no retries. Blocks. Thread-safe: several calls may run at once.
  virtual ChatOutcome Complete(const ChatRequest& request) = 0;
};

/// The message contents joined by newlines: what recorded matches search.
std::string JoinPrompt(const ChatRequest& request);

/// Moves reasoning written inline into `reasoning`: a leading `<think>...</think>`
/// (or `<thinking>`) block, as Qwen3 and DeepSeek-R1 write it on raw endpoints,
/// or everything before a lone `</think>` when the server's template opened the
/// block itself. An unclosed leading block is all reasoning (the answer was cut
/// off while thinking). The reasoning's tokens are then estimated from its text,
/// unless the server counted them. Returns whether anything moved.
bool SplitInlineReasoning(ChatResponse& response);

/// Rough token count of a text, for servers that report no usage.
long EstimateTokens(const std::string& text);

// ------------------------------------------------------------------ backends

/// An HTTP backend: OpenAI-compatible chat completions or Anthropic messages.
struct HttpBackendOptions {
  std::string base_url;  ///< e.g. http://127.0.0.1:8000/v1 or https://api.anthropic.com/v1
  std::string model;
  std::string api_key_env;       ///< name of the environment variable holding the key; "" = no key
  double timeout_seconds = 600;  ///< whole request, connect included
  double connect_timeout_seconds = 10;
  size_t max_response_bytes = 16 << 20;  ///< a larger answer is a failure (kMalformed), not a crash
  std::string extra_body_json;           ///< JSON object merged into the request body (server-specific fields)
};

/// Chat completions (`POST {base_url}/chat/completions`). The key, if any, is
/// read from the environment at construction and sent as a Bearer token.
Result<std::unique_ptr<ChatModel>> OpenOpenAiChatModel(const HttpBackendOptions& options);

/// Anthropic messages (`POST {base_url}/messages`), with extended thinking
/// when the request asks for a thinking budget.
Result<std::unique_ptr<ChatModel>> OpenAnthropicChatModel(const HttpBackendOptions& options);

/// Replays recorded exchanges from a JSON-lines file (see docs/llm.md).
struct ScriptedOptions {
  std::string path;  ///< the recording
  std::string model = "scripted";
};
/// Errors name the file and line of a malformed entry.
Result<std::unique_ptr<ChatModel>> OpenScriptedChatModel(const ScriptedOptions& options);

/// Writes each prompt into a folder and waits for an answer file with the same id.
struct ExchangeOptions {
  std::string dir;                ///< created if missing
  double timeout_seconds = 3600;  ///< per prompt
  double poll_seconds = 0.2;
  std::string model = "exchange";
};
Result<std::unique_ptr<ChatModel>> OpenExchangeChatModel(const ExchangeOptions& options);
/// An exchange answer file's JSON ({"text", "reasoning"?, "input_tokens"?,
/// "output_tokens"?}); errors begin with `where`. Counts not given are
/// estimated from the texts (`prompt` for the input).
Result<ChatResponse> ParseExchangeAnswer(const std::string& json_text, const std::string& where,
                                         const std::string& prompt, const std::string& model);

}  // namespace accelopt::llm
