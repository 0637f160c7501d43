#pragma once
/// What the HTTP backends (OpenAI-compatible, Anthropic) share: the key from
/// the environment, turning HTTP outcomes into failures, the extra body.

#include <string>

#include "core/json_io.h"
#include "llm/chat_model.h"
#include "llm/http_client.h"

namespace accelopt::llm {

/// The key held by environment variable `name` ("" = none wanted). A named
/// but unset or empty variable is an Error naming the variable (never a value).
Result<std::string> ApiKeyFromEnv(const std::string& name);

/// Posts `body` to `url` and returns the parsed JSON answer, or the failure
/// (transport, HTTP status with Retry-After, malformed JSON). `secret` (the
/// API key) is blanked out of anything the failure carries, in case a server
/// echoes it back.
struct JsonAnswer {
  Json json;
  std::optional<CallFailure> failure;
};
JsonAnswer PostJson(const std::string& url, const std::vector<std::string>& headers, const Json& body,
                    const HttpBackendOptions& options, const std::string& secret);

/// Checks the options every HTTP backend needs (base URL, model, a JSON-object
/// extra body) and returns the API key. Errors start with "<kind> backend: ".
Result<std::string> CheckHttpOptions(const std::string& kind, const HttpBackendOptions& options);

/// `text` with every occurrence of `secret` replaced by "[redacted]".
std::string Redact(std::string text, const std::string& secret);

/// Merges options.extra_body_json (a JSON object) into `body`; Error when it is not an object.
Status MergeExtraBody(const std::string& extra_body_json, Json& body);

/// base_url without a trailing slash, then `path`.
std::string JoinUrl(const std::string& base_url, const std::string& path);

/// Fills estimated counts when the server sent none.
void EstimateUsageIfMissing(const ChatRequest& request, ChatResponse& response, bool server_reported);

}  // namespace accelopt::llm
