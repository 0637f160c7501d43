#pragma once
/// Minimal blocking HTTP(S) client over libcurl, for the model backends.

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace accelopt::llm {

struct HttpRequest {
  std::string method = "POST";  ///< "POST" or "GET"
  std::string url;
  std::vector<std::string> headers;  ///< "Name: value"
  std::string body;
  double timeout_seconds = 600;  ///< whole transfer
  double connect_timeout_seconds = 10;
  size_t max_response_bytes = 16 << 20;  ///< larger answers are cut off and reported
};

struct HttpResponse {
  int status = 0;
  std::string body;
  std::map<std::string, std::string> headers;  ///< names lower-cased
};

/// A transport failure: no HTTP status to speak of.
struct HttpError {
  enum class Kind { kTimeout, kConnection, kTooLarge, kOther } kind;
  std::string message;  ///< names the URL; never the headers (they may hold keys)
};

struct HttpResult {
  std::optional<HttpResponse> response;
  std::optional<HttpError> error;
};

/// Performs the request. Blocks; thread-safe (one curl handle per call).
HttpResult PerformHttp(const HttpRequest& request);

/// Seconds to wait from a Retry-After value: delta-seconds (fractions allowed)
/// or an HTTP date. -1 when absent or unparseable.
double ParseRetryAfter(const std::string& value);

}  // namespace accelopt::llm
