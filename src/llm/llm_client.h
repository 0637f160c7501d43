#pragma once
/// The agents' one door to language models: picks the backend configured for
/// an agent role, limits concurrency per backend, retries transient failures
/// with exponential backoff and jitter (honouring Retry-After), enforces
/// budgets, prices every call and records every call and attempt.

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "core/json_io.h"
#include "llm/chat_model.h"
#include "llm/pricing.h"

namespace accelopt::llm {

/// How one agent role talks to its model.
struct RoleSettings {
  std::string backend;  ///< name of a configured backend
  std::optional<double> temperature;
  std::optional<int> max_tokens;
  std::string reasoning_effort;    ///< "" = server default
  int thinking_budget_tokens = 0;  ///< Anthropic extended thinking; 0 = off
};

struct RetryOptions {
  int max_attempts = 5;           ///< attempts per call, the first included
  double base_delay_seconds = 1;  ///< backoff: base x 2^(attempt-1), capped
  double max_delay_seconds = 60;
  double jitter = 0.5;                   ///< the delay is scaled by a random factor in [1 - jitter, 1 + jitter]
  double max_retry_after_seconds = 300;  ///< a server's Retry-After is honoured up to this
};

/// Limits after which no new call starts. Unset = no limit.
struct Budget {
  std::optional<double> usd;
  std::optional<long> tokens;          ///< input + output tokens
  std::optional<double> wall_seconds;  ///< since the client was created
  /// Spent before this client was made (by a run's earlier sessions), counted
  /// against `usd` and `tokens`: a run's budget is its total across resumes.
  double spent_usd = 0;
  long spent_tokens = 0;
};

struct AttemptRecord {
  int number = 0;
  std::string outcome;  ///< "ok" or a FailureKindName
  int http_status = 0;
  std::string message;
  double waited_seconds = 0;  ///< backoff slept before this attempt
  double latency_seconds = 0;
};

/// Everything about one call, successful or not. Never holds an API key.
struct CallRecord {
  std::string id;  ///< unique within the client
  std::string agent_role, backend, model;
  std::string started_at;  ///< ISO-8601 UTC
  std::vector<Message> prompt;
  std::string response, reasoning;
  std::string error, error_kind;  ///< empty when the call succeeded
  Usage usage;
  double latency_seconds = 0;      ///< whole call, retries and waits included
  std::optional<double> cost_usd;  ///< nullopt = unknown price
  std::vector<AttemptRecord> attempts;
  Json ToJson() const;
};

struct Totals {
  long calls = 0, failed_calls = 0, attempts = 0;
  long input_tokens = 0, output_tokens = 0, reasoning_tokens = 0;
  double cost_usd = 0;            ///< of the calls whose price is known
  long unknown_cost_calls = 0;    ///< calls whose cost could not be priced
  bool estimated_tokens = false;  ///< some counts were estimated
};

class LlmClient {
 public:
  struct Backend {
    std::unique_ptr<ChatModel> model;
    int max_concurrency = 4;  ///< calls in flight at once on this backend
  };

  /// Roles not listed use roles["default"] when present.
  LlmClient(std::map<std::string, Backend> backends, std::map<std::string, RoleSettings> roles, RetryOptions retry,
            Budget budget, PriceTable prices);
  ~LlmClient();

  /// Sends `messages` to the model configured for `agent_role`. Blocks (waits
  /// for a slot, retries). Thread-safe. An Error means no answer: the request
  /// was refused (unknown role, budget spent) or every attempt failed; the call
  /// is recorded either way.
  /// `record`, when given, receives this call's record.
  Result<ChatResponse> Chat(const std::string& agent_role, const std::vector<Message>& messages,
                            CallRecord* record = nullptr);

  /// Whether records() keeps every call (default true). A long run that
  /// stores its records elsewhere turns this off to keep memory flat.
  void RetainRecords(bool retain);

  /// Called with each finished call's record, on the calling thread.
  void AddListener(std::function<void(const CallRecord&)> listener);

  Totals totals() const;
  std::vector<CallRecord> records() const;
  /// Why no new call would start now (a spent budget), or nullopt.
  std::optional<std::string> BudgetSpent() const;
  /// The backend and model serving a role; Error for an unknown role.
  Result<std::pair<std::string, std::string>> Describe(const std::string& agent_role) const;
  /// The price of the model serving a role: nullopt when the role or its price is unknown.
  std::optional<Price> PriceOf(const std::string& agent_role) const;

 private:
  class Slots;
  struct BackendState;
  Result<const RoleSettings*> RoleFor(const std::string& agent_role) const;
  std::optional<std::string> BudgetRefusal(const std::string& model) const;
  double BackoffSeconds(int attempt, const CallFailure& failure);
  void Finish(CallRecord record, CallRecord* out);

  std::map<std::string, std::unique_ptr<BackendState>> backends_;
  std::map<std::string, RoleSettings> roles_;
  RetryOptions retry_;
  Budget budget_;
  PriceTable prices_;
  std::chrono::steady_clock::time_point created_;

  mutable std::mutex mu_;  // guards everything below
  Totals totals_;
  std::vector<CallRecord> records_;
  std::vector<std::function<void(const CallRecord&)>> listeners_;
  long next_id_ = 1;
  bool retain_records_ = true;
  uint64_t rng_state_;
};

}  // namespace accelopt::llm
