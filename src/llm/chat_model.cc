#include "llm/chat_model.h"

#include <cctype>

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

namespace {

size_t SkipSpace(const std::string& s, size_t at) {
  while (at < s.size() && std::isspace(static_cast<unsigned char>(s[at]))) ++at;
  return at;
}

// Where the inline reasoning of `text` lies: [begin, end) of the thought and
// where the answer resumes. nullopt when the text has none.
struct InlineThought {
  size_t begin, end, resume;
};
std::optional<InlineThought> FindInlineThought(const std::string& text) {
  size_t start = SkipSpace(text, 0);
  for (std::string tag : {"think", "thinking"}) {
    std::string open = "<" + tag + ">", close = "</" + tag + ">";
    if (text.compare(start, open.size(), open) == 0) {
      size_t begin = start + open.size();
      size_t end = text.find(close, begin);
      if (end == std::string::npos) return InlineThought{begin, text.size(), text.size()};
      return InlineThought{begin, end, end + close.size()};
    }
    // The template opened the block in the prompt: only its end is in the answer.
    size_t end = text.find(close);
    if (end != std::string::npos && text.rfind(open, end) == std::string::npos)
      return InlineThought{0, end, end + close.size()};
  }
  return std::nullopt;
}

std::string TrimSpace(const std::string& s) {
  size_t b = SkipSpace(s, 0);
  size_t e = s.size();
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
  return s.substr(b, e - b);
}

}  // namespace

bool SplitInlineReasoning(ChatResponse& response) {
  auto thought = FindInlineThought(response.text);
  if (!thought) return false;
  std::string reasoning = TrimSpace(response.text.substr(thought->begin, thought->end - thought->begin));
  response.text = TrimSpace(response.text.substr(thought->resume));
  if (!reasoning.empty()) response.reasoning += (response.reasoning.empty() ? "" : "\n") + reasoning;
  if (response.usage.reasoning_tokens == 0 && !response.reasoning.empty()) {
    response.usage.reasoning_tokens = EstimateTokens(response.reasoning);
    response.usage.reasoning_estimated = true;
  }
  return true;
}

}  // namespace accelopt::llm
