// Anthropic messages API, with extended thinking.

#include "llm/http_backend.h"

namespace accelopt::llm {
namespace {

constexpr const char* kApiVersion = "2023-06-01";
constexpr int kDefaultMaxTokens = 4096;

class AnthropicChatModel : public ChatModel {
 public:
  AnthropicChatModel(HttpBackendOptions options, std::string key)
      : options_(std::move(options)), key_(std::move(key)) {}

  std::string backend() const override { return "anthropic"; }
  std::string model() const override { return options_.model; }

  ChatOutcome Complete(const ChatRequest& request) override {
    std::string url = JoinUrl(options_.base_url, "/messages");
    JsonAnswer answer = PostJson(url, Headers(), Body(request), options_, key_);
    ChatOutcome outcome;
    if (answer.failure) {
      outcome.failure = answer.failure;
      return outcome;
    }
    return Parse(url, request, answer.json);
  }

 private:
  std::vector<std::string> Headers() const {
    std::vector<std::string> headers = {std::string("anthropic-version: ") + kApiVersion};
    if (!key_.empty()) headers.push_back("x-api-key: " + key_);
    return headers;
  }

  Json Body(const ChatRequest& request) const {
    Json body = {{"model", options_.model}, {"messages", Json::array()}};
    std::string system;
    for (const auto& m : request.messages) {
      if (m.role == "system")
        system += (system.empty() ? "" : "\n\n") + m.content;
      else
        body["messages"].push_back({{"role", m.role}, {"content", m.content}});
    }
    if (!system.empty()) body["system"] = system;
    int max_tokens = request.max_tokens.value_or(kDefaultMaxTokens);
    if (request.thinking_budget_tokens > 0) {
      // The answer must have room beyond the thinking budget; temperature is fixed with thinking.
      body["thinking"] = {{"type", "enabled"}, {"budget_tokens", request.thinking_budget_tokens}};
      max_tokens = std::max(max_tokens, request.thinking_budget_tokens + 1024);
    } else if (request.temperature) {
      body["temperature"] = *request.temperature;
    }
    body["max_tokens"] = max_tokens;
    MergeExtraBody(options_.extra_body_json, body);  // validated at construction
    return body;
  }

  static ChatOutcome Parse(const std::string& url, const ChatRequest& request, const Json& j) {
    ChatOutcome outcome;
    if (!j.contains("content") || !j["content"].is_array()) {
      outcome.failure = CallFailure{FailureKind::kMalformed, url + ": no content array in the answer"};
      outcome.failure->body = DumpJson(j).substr(0, 4096);
      return outcome;
    }
    ChatResponse r;
    for (const auto& block : j["content"]) {
      std::string type = block.value("type", "");
      if (type == "text")
        r.text += block.value("text", "");
      else if (type == "thinking")
        r.reasoning += block.value("thinking", "");
    }
    r.model = j.value("model", "");
    if (j.contains("stop_reason") && j["stop_reason"].is_string()) r.finish_reason = j["stop_reason"];
    bool reported = j.contains("usage") && j["usage"].is_object();
    if (reported) {
      r.usage.input_tokens = j["usage"].value("input_tokens", 0L);
      r.usage.output_tokens = j["usage"].value("output_tokens", 0L);
    }
    EstimateUsageIfMissing(request, r, reported);
    if (reported && !r.reasoning.empty()) {
      // Anthropic counts thinking inside output_tokens without a figure of its own.
      r.usage.reasoning_tokens = EstimateTokens(r.reasoning);
      r.usage.reasoning_estimated = true;
    }
    outcome.response = std::move(r);
    return outcome;
  }

  HttpBackendOptions options_;
  std::string key_;
};

}  // namespace

Result<std::unique_ptr<ChatModel>> OpenAnthropicChatModel(const HttpBackendOptions& options) {
  auto key = CheckHttpOptions("anthropic", options);
  if (!key) return key.error();
  return std::unique_ptr<ChatModel>(new AnthropicChatModel(options, *key));
}

}  // namespace accelopt::llm
