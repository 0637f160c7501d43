#include "llm/chat_model.h"

namespace accelopt::llm {

const char* FailureKindName(FailureKind kind) {
  switch (kind) {
    case FailureKind::kTimeout:
      return "timeout";
    case FailureKind::kConnection:
      return "connection";
    case FailureKind::kRateLimited:
      return "rate_limited";
    case FailureKind::kServerError:
      return "server_error";
    case FailureKind::kClientError:
      return "client_error";
    case FailureKind::kMalformed:
      return "malformed";
    case FailureKind::kNoMatch:
      return "no_match";
    case FailureKind::kBudget:
      return "budget";
  }
  return "unknown";
}

long EstimateTokens(const std::string& text) {
  // About 4 bytes a token for English and code; round up so any text counts.
  return static_cast<long>((text.size() + 3) / 4);
}

std::string JoinPrompt(const ChatRequest& request) {
  std::string prompt;
  for (size_t i = 0; i < request.messages.size(); ++i) {
    if (i > 0) prompt += '\n';
    prompt += request.messages[i].content;
  }
  return prompt;
}

}  // namespace accelopt::llm
