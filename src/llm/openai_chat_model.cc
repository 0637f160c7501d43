// OpenAI-compatible chat completions: vLLM, SGLang, Ollama, llama.cpp server,
// OpenAI, Gemini's compatible endpoint, ...

#include "llm/http_backend.h"

namespace accelopt::llm {
namespace {

class OpenAiChatModel : public ChatModel {
 public:
  OpenAiChatModel(HttpBackendOptions options, std::string key) : options_(std::move(options)), key_(std::move(key)) {}

  std::string backend() const override { return "openai"; }
  std::string model() const override { return options_.model; }

  ChatOutcome Complete(const ChatRequest& request) override {
    Json body = {{"model", options_.model}, {"messages", Json::array()}};
    for (const auto& m : request.messages) body["messages"].push_back({{"role", m.role}, {"content", m.content}});
    if (request.temperature) body["temperature"] = *request.temperature;
    if (request.max_tokens) body["max_tokens"] = *request.max_tokens;
    if (!request.reasoning_effort.empty()) body["reasoning_effort"] = request.reasoning_effort;
    MergeExtraBody(options_.extra_body_json, body);  // validated at construction
    std::vector<std::string> headers;
    if (!key_.empty()) headers.push_back("Authorization: Bearer " + key_);
    std::string url = JoinUrl(options_.base_url, "/chat/completions");
    JsonAnswer answer = PostJson(url, headers, body, options_, key_);
    ChatOutcome outcome;
    if (answer.failure) {
      outcome.failure = answer.failure;
      return outcome;
    }
    return Parse(url, request, answer.json);
  }

 private:
  static ChatOutcome Parse(const std::string& url, const ChatRequest& request, const Json& j) {
    ChatOutcome outcome;
    const Json* choices = j.contains("choices") && j["choices"].is_array() ? &j["choices"] : nullptr;
    if (!choices || choices->empty() || !(*choices)[0].contains("message")) {
      outcome.failure = CallFailure{FailureKind::kMalformed, url + ": no choices[0].message in the answer"};
      outcome.failure->body = DumpJson(j).substr(0, 4096);
      return outcome;
    }
    const Json& choice = (*choices)[0];
    const Json& message = choice["message"];
    ChatResponse r;
    if (message.contains("content") && message["content"].is_string()) r.text = message["content"];
    // Reasoning text, under the names servers use for it.
    for (const char* field : {"reasoning_content", "reasoning"})
      if (message.contains(field) && message[field].is_string()) r.reasoning = message[field];
    r.model = j.value("model", "");
    if (choice.contains("finish_reason") && choice["finish_reason"].is_string())
      r.finish_reason = choice["finish_reason"];
    bool reported = j.contains("usage") && j["usage"].is_object();
    if (reported) {
      const Json& u = j["usage"];
      r.usage.input_tokens = u.value("prompt_tokens", 0L);
      r.usage.output_tokens = u.value("completion_tokens", 0L);
      if (u.contains("completion_tokens_details") && u["completion_tokens_details"].is_object())
        r.usage.reasoning_tokens = u["completion_tokens_details"].value("reasoning_tokens", 0L);
    }
    EstimateUsageIfMissing(request, r, reported);
    outcome.response = std::move(r);
    return outcome;
  }

  HttpBackendOptions options_;
  std::string key_;
};

}  // namespace

Result<std::unique_ptr<ChatModel>> OpenOpenAiChatModel(const HttpBackendOptions& options) {
  auto key = CheckHttpOptions("openai", options);
  if (!key) return key.error();
  return std::unique_ptr<ChatModel>(new OpenAiChatModel(options, *key));
}

}  // namespace accelopt::llm
