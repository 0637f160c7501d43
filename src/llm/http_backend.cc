#include "llm/http_backend.h"

#include <cstdlib>

namespace accelopt::llm {

Result<std::string> ApiKeyFromEnv(const std::string& name) {
  if (name.empty()) return std::string();
  const char* value = std::getenv(name.c_str());
  if (!value || !*value) return Error{"the API key variable " + name + " is not set"};
  return std::string(value);
}

namespace {

constexpr size_t kKeptBody = 4096;

CallFailure FromTransport(const HttpError& e) {
  switch (e.kind) {
    case HttpError::Kind::kTimeout:
      return {FailureKind::kTimeout, e.message};
    case HttpError::Kind::kConnection:
      return {FailureKind::kConnection, e.message};
    case HttpError::Kind::kTooLarge:
      return {FailureKind::kMalformed, e.message};
    case HttpError::Kind::kOther:
      break;
  }
  return {FailureKind::kConnection, e.message};
}

CallFailure FromStatus(const std::string& url, const HttpResponse& r) {
  CallFailure f{FailureKind::kClientError, url + ": HTTP " + std::to_string(r.status)};
  f.http_status = r.status;
  f.body = r.body.substr(0, kKeptBody);
  if (r.status == 429)
    f.kind = FailureKind::kRateLimited;
  else if (r.status >= 500)
    f.kind = FailureKind::kServerError;
  if (auto it = r.headers.find("retry-after"); it != r.headers.end())
    f.retry_after_seconds = ParseRetryAfter(it->second);
  // Servers explain in {"error": {"message": ...}}; keep that in the one-line message.
  Json j = Json::parse(r.body, nullptr, false);
  if (j.is_object() && j.contains("error")) {
    const Json& e = j["error"];
    std::string why = e.is_object() ? e.value("message", "") : (e.is_string() ? e.get<std::string>() : "");
    if (!why.empty()) f.message += ": " + why.substr(0, 300);
  }
  return f;
}

JsonAnswer PostJsonUnredacted(const std::string& url, const std::vector<std::string>& headers, const Json& body,
                              const HttpBackendOptions& options) {
  HttpRequest request;
  request.url = url;
  request.headers = headers;
  request.headers.push_back("Content-Type: application/json");
  request.body = DumpJson(body);
  request.timeout_seconds = options.timeout_seconds;
  request.connect_timeout_seconds = options.connect_timeout_seconds;
  request.max_response_bytes = options.max_response_bytes;
  HttpResult result = PerformHttp(request);
  JsonAnswer answer;
  if (result.error) {
    answer.failure = FromTransport(*result.error);
    return answer;
  }
  const HttpResponse& r = *result.response;
  if (r.status < 200 || r.status >= 300) {
    answer.failure = FromStatus(url, r);
    return answer;
  }
  answer.json = Json::parse(r.body, nullptr, false);
  if (answer.json.is_discarded() || !answer.json.is_object()) {
    answer.failure = CallFailure{FailureKind::kMalformed, url + ": the answer is not a JSON object"};
    answer.failure->http_status = r.status;
    answer.failure->body = r.body.substr(0, kKeptBody);
  }
  return answer;
}

}  // namespace

std::string Redact(std::string text, const std::string& secret) {
  if (secret.empty()) return text;
  for (size_t at = text.find(secret); at != std::string::npos; at = text.find(secret, at))
    text.replace(at, secret.size(), "[redacted]");
  return text;
}

JsonAnswer PostJson(const std::string& url, const std::vector<std::string>& headers, const Json& body,
                    const HttpBackendOptions& options, const std::string& secret) {
  JsonAnswer answer = PostJsonUnredacted(url, headers, body, options);
  if (answer.failure) {
    answer.failure->message = Redact(answer.failure->message, secret);
    answer.failure->body = Redact(answer.failure->body, secret);
  }
  return answer;
}

Status MergeExtraBody(const std::string& extra_body_json, Json& body) {
  if (extra_body_json.empty()) return Ok{};
  Json extra = Json::parse(extra_body_json, nullptr, false);
  if (!extra.is_object()) return Error{"extra_body must be a JSON object, got: " + extra_body_json.substr(0, 200)};
  body.update(extra);
  return Ok{};
}

Result<std::string> CheckHttpOptions(const std::string& kind, const HttpBackendOptions& options) {
  if (options.base_url.empty()) return Error{kind + " backend: base_url is empty"};
  if (options.model.empty()) return Error{kind + " backend: model is empty"};
  Json probe = Json::object();
  if (auto s = MergeExtraBody(options.extra_body_json, probe); !s)
    return Error{kind + " backend: " + s.error().message};
  auto key = ApiKeyFromEnv(options.api_key_env);
  if (!key) return Error{kind + " backend: " + key.error().message};
  return key;
}

std::string JoinUrl(const std::string& base_url, const std::string& path) {
  std::string base = base_url;
  while (!base.empty() && base.back() == '/') base.pop_back();
  return base + path;
}

void EstimateUsageIfMissing(const ChatRequest& request, ChatResponse& response, bool server_reported) {
  if (server_reported) return;
  std::string prompt;
  for (const auto& m : request.messages) prompt += m.content;
  response.usage.input_tokens = EstimateTokens(prompt);
  response.usage.output_tokens = EstimateTokens(response.text) + EstimateTokens(response.reasoning);
  response.usage.reasoning_tokens = EstimateTokens(response.reasoning);
  response.usage.estimated = true;
}

}  // namespace accelopt::llm
