#include "llm/llm_client.h"

#include <algorithm>
#include <cmath>
#include <condition_variable>
#include <ctime>
#include <random>
#include <thread>

#include <fmt/core.h>

#include "core/clock.h"

namespace accelopt::llm {
namespace {

bool Retryable(FailureKind kind) {
  return kind == FailureKind::kTimeout || kind == FailureKind::kConnection || kind == FailureKind::kRateLimited ||
         kind == FailureKind::kServerError;
}

}  // namespace

// A counting semaphore whose size is known only at run time.
class LlmClient::Slots {
 public:
  explicit Slots(int count) : free_(std::max(1, count)) {}
  void Acquire() {
    std::unique_lock lock(mu_);
    cv_.wait(lock, [&] { return free_ > 0; });
    --free_;
  }
  void Release() {
    {
      std::lock_guard lock(mu_);
      ++free_;
    }
    cv_.notify_one();
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  int free_;
};

struct LlmClient::BackendState {
  std::unique_ptr<ChatModel> model;
  Slots slots;
  BackendState(std::unique_ptr<ChatModel> m, int concurrency) : model(std::move(m)), slots(concurrency) {}
};

Json CallRecord::ToJson() const {
  Json messages = Json::array();
  for (const auto& m : prompt) messages.push_back({{"role", m.role}, {"content", m.content}});
  Json attempts_json = Json::array();
  for (const auto& a : attempts)
    attempts_json.push_back({{"number", a.number},
                             {"outcome", a.outcome},
                             {"http_status", a.http_status},
                             {"message", a.message},
                             {"waited_seconds", a.waited_seconds},
                             {"latency_seconds", a.latency_seconds}});
  return {{"id", id},
          {"agent_role", agent_role},
          {"backend", backend},
          {"model", model},
          {"started_at", started_at},
          {"prompt", messages},
          {"response", response},
          {"reasoning", reasoning},
          {"error", error},
          {"error_kind", error_kind},
          {"usage",
           {{"input_tokens", usage.input_tokens},
            {"output_tokens", usage.output_tokens},
            {"reasoning_tokens", usage.reasoning_tokens},
            {"estimated", usage.estimated},
            {"reasoning_estimated", usage.reasoning_estimated}}},
          {"latency_seconds", latency_seconds},
          {"cost_usd", cost_usd ? Json(*cost_usd) : Json(nullptr)},
          {"attempts", attempts_json}};
}

LlmClient::LlmClient(std::map<std::string, Backend> backends, std::map<std::string, RoleSettings> roles,
                     RetryOptions retry, Budget budget, PriceTable prices)
    : roles_(std::move(roles)),
      retry_(retry),
      budget_(budget),
      prices_(std::move(prices)),
      created_(std::chrono::steady_clock::now()),
      rng_state_(std::random_device{}()) {
  for (auto& [name, b] : backends)
    backends_[name] = std::make_unique<BackendState>(std::move(b.model), b.max_concurrency);
}

LlmClient::~LlmClient() = default;

Result<const RoleSettings*> LlmClient::RoleFor(const std::string& agent_role) const {
  auto it = roles_.find(agent_role);
  if (it == roles_.end()) it = roles_.find("default");
  if (it == roles_.end()) {
    std::string known;
    for (const auto& [name, _] : roles_) known += (known.empty() ? "" : ", ") + name;
    return Error{"no model configured for role '" + agent_role + "' (configured: " + (known.empty() ? "none" : known) +
                 "; add it, or a 'default' role, under llm.roles)"};
  }
  if (!backends_.count(it->second.backend))
    return Error{"role '" + it->first + "' names backend '" + it->second.backend + "', which is not configured"};
  return &it->second;
}

Result<std::pair<std::string, std::string>> LlmClient::Describe(const std::string& agent_role) const {
  auto role = RoleFor(agent_role);
  if (!role) return role.error();
  const auto& model = backends_.at((*role)->backend)->model;
  return std::pair{model->backend(), model->model()};
}

std::optional<Price> LlmClient::PriceOf(const std::string& agent_role) const {
  auto described = Describe(agent_role);
  if (!described) return std::nullopt;
  return prices_.Find(described->second);
}

std::optional<std::string> LlmClient::BudgetRefusal(const std::string& model) const {
  std::lock_guard lock(mu_);
  if (budget_.wall_seconds && SecondsSince(created_) >= *budget_.wall_seconds)
    return "wall-time budget of " + std::to_string(*budget_.wall_seconds) + " s is spent";
  if (budget_.tokens && budget_.spent_tokens + totals_.input_tokens + totals_.output_tokens >= *budget_.tokens)
    return "token budget of " + std::to_string(*budget_.tokens) + " is spent";
  if (budget_.usd) {
    if (!prices_.Find(model))
      return "a money budget is set but the price of model '" + model +
             "' is unknown (add it to the price table to use it under a money budget)";
    if (budget_.spent_usd + totals_.cost_usd >= *budget_.usd)
      return fmt::format(
          "money budget of ${:.4f} is spent (${:.4f}{})", *budget_.usd, budget_.spent_usd + totals_.cost_usd,
          budget_.spent_usd > 0 ? fmt::format(", ${:.4f} of it before this session", budget_.spent_usd) : "");
  }
  return std::nullopt;
}

double LlmClient::BackoffSeconds(int attempt, const CallFailure& failure) {
  if (failure.retry_after_seconds >= 0) return std::min(failure.retry_after_seconds, retry_.max_retry_after_seconds);
  double delay = std::min(retry_.max_delay_seconds, retry_.base_delay_seconds * std::pow(2.0, attempt - 1));
  std::lock_guard lock(mu_);
  rng_state_ = rng_state_ * 6364136223846793005ULL + 1442695040888963407ULL;
  double unit = static_cast<double>(rng_state_ >> 11) * 0x1.0p-53;  // [0, 1)
  return delay * (1 - retry_.jitter + 2 * retry_.jitter * unit);
}

void LlmClient::RetainRecords(bool retain) {
  std::lock_guard lock(mu_);
  retain_records_ = retain;
}

void LlmClient::Finish(CallRecord record, CallRecord* out) {
  std::vector<std::function<void(const CallRecord&)>> listeners;
  {
    std::lock_guard lock(mu_);
    ++totals_.calls;
    totals_.attempts += static_cast<long>(record.attempts.size());
    if (!record.error.empty()) ++totals_.failed_calls;
    totals_.input_tokens += record.usage.input_tokens;
    totals_.output_tokens += record.usage.output_tokens;
    totals_.reasoning_tokens += record.usage.reasoning_tokens;
    totals_.estimated_tokens |= record.usage.estimated;
    if (record.cost_usd)
      totals_.cost_usd += *record.cost_usd;
    else if (record.error.empty())
      ++totals_.unknown_cost_calls;
    if (retain_records_) records_.push_back(record);
    listeners = listeners_;
  }
  for (const auto& listener : listeners) listener(record);
  if (out) *out = std::move(record);
}

Result<ChatResponse> LlmClient::Chat(const std::string& agent_role, const std::vector<Message>& messages,
                                     CallRecord* out) {
  auto start = std::chrono::steady_clock::now();
  CallRecord record;
  record.agent_role = agent_role;
  record.prompt = messages;
  record.started_at = IsoUtcNow();
  {
    std::lock_guard lock(mu_);
    record.id = "call-" + std::to_string(next_id_++);
  }
  auto fail = [&](const std::string& kind, const std::string& message) -> Result<ChatResponse> {
    record.error_kind = kind;
    record.error = message;
    record.latency_seconds = SecondsSince(start);
    Finish(record, out);
    return Error{"LLM call for role '" + agent_role + "' failed: " + message};
  };
  auto role = RoleFor(agent_role);
  if (!role) return fail("config", role.error().message);
  BackendState& backend = *backends_.at((*role)->backend);
  record.backend = backend.model->backend();
  record.model = backend.model->model();

  ChatRequest request{agent_role,
                      messages,
                      (*role)->temperature,
                      (*role)->max_tokens,
                      (*role)->reasoning_effort,
                      (*role)->thinking_budget_tokens};
  double waited = 0;
  for (int attempt = 1;; ++attempt) {
    if (auto refusal = BudgetRefusal(record.model)) return fail(FailureKindName(FailureKind::kBudget), *refusal);
    backend.slots.Acquire();
    auto attempt_start = std::chrono::steady_clock::now();
    ChatOutcome outcome = backend.model->Complete(request);
    backend.slots.Release();
    AttemptRecord a{attempt,
                    outcome.ok() ? "ok" : FailureKindName(outcome.failure->kind),
                    outcome.ok() ? 200 : outcome.failure->http_status,
                    outcome.ok() ? "" : outcome.failure->message,
                    waited,
                    SecondsSince(attempt_start)};
    record.attempts.push_back(a);
    if (outcome.ok()) {
      ChatResponse& r = *outcome.response;
      SplitInlineReasoning(r);
      record.response = r.text;
      record.reasoning = r.reasoning;
      record.usage = r.usage;
      record.cost_usd = prices_.Cost(record.model, r.usage);
      record.latency_seconds = SecondsSince(start);
      Finish(record, out);
      return std::move(r);
    }
    const CallFailure& f = *outcome.failure;
    if (!Retryable(f.kind) || attempt >= retry_.max_attempts) {
      std::string why = f.message;
      if (Retryable(f.kind)) why += " (gave up after " + std::to_string(attempt) + " attempts)";
      if (!f.body.empty() && f.kind == FailureKind::kMalformed) record.response = f.body;
      return fail(FailureKindName(f.kind), why);
    }
    waited = BackoffSeconds(attempt, f);
    std::this_thread::sleep_for(std::chrono::duration<double>(waited));
  }
}

void LlmClient::AddListener(std::function<void(const CallRecord&)> listener) {
  std::lock_guard lock(mu_);
  listeners_.push_back(std::move(listener));
}

std::optional<std::string> LlmClient::BudgetSpent() const {
  std::lock_guard lock(mu_);
  if (budget_.wall_seconds && SecondsSince(created_) >= *budget_.wall_seconds) return "wall-time budget spent";
  if (budget_.tokens && budget_.spent_tokens + totals_.input_tokens + totals_.output_tokens >= *budget_.tokens)
    return "token budget spent";
  if (budget_.usd && budget_.spent_usd + totals_.cost_usd >= *budget_.usd) return "money budget spent";
  return std::nullopt;
}

Totals LlmClient::totals() const {
  std::lock_guard lock(mu_);
  return totals_;
}

std::vector<CallRecord> LlmClient::records() const {
  std::lock_guard lock(mu_);
  return records_;
}

}  // namespace accelopt::llm
