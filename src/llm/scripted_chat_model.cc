// The scripted backend: replays a recording (JSON lines) instead of asking a model.
//
// Each non-comment line is one entry:
//   {"role": "planner", "match": "text", "response": "answer", "reasoning": "...",
//    "input_tokens": 120, "output_tokens": 80, "repeat": false}
// Only "response" is required. A request takes the first unused entry, in file
// order, whose role is the request's agent_role (or that has no role) and whose
// match is a substring of the prompt (the message contents joined by newlines),
// or a list of substrings that must all occur.
// A "repeat" entry is never used up. Blank lines and lines starting with '#' are
// comments.

#include <algorithm>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/json_io.h"
#include "llm/chat_model.h"

namespace accelopt::llm {
namespace {

struct Entry {
  int line = 0;
  std::string role;                  // "" = any role
  std::optional<std::string> match;  // absent = any prompt
  std::vector<std::string> also;     // further substrings that must occur too ("match": [a, b, ...])
  std::string response;
  std::string reasoning;
  std::optional<long> input_tokens;
  std::optional<long> output_tokens;
  bool repeat = false;
  bool used = false;
};

const std::set<std::string>& KnownKeys() {
  static const std::set<std::string> keys = {"role",         "match",         "response", "reasoning",
                                             "input_tokens", "output_tokens", "repeat"};
  return keys;
}

Result<std::string> StringField(const Json& object, const char* key) {
  const Json& value = object.at(key);
  if (!value.is_string()) return Error{std::string("'") + key + "' must be a string, got " + value.type_name()};
  return value.get<std::string>();
}

Result<long> TokenField(const Json& object, const char* key) {
  const Json& value = object.at(key);
  if (!value.is_number_integer() || value.get<long long>() < 0)
    return Error{std::string("'") + key + "' must be a non-negative integer, got " + DumpJson(value)};
  return value.get<long>();
}

// Parses one entry; errors say what is wrong without the location, the caller adds it.
Result<Entry> ParseEntry(const std::string& text) {
  Json object;
  try {
    object = Json::parse(text);
  } catch (const Json::exception& e) {
    return Error{std::string("invalid JSON: ") + e.what()};
  }
  if (!object.is_object()) return Error{std::string("expected a JSON object, got ") + object.type_name()};
  for (const auto& item : object.items()) {
    // A misspelt key (say "mach") would otherwise silently turn into "matches anything".
    if (!KnownKeys().count(item.key()))
      return Error{"unknown key '" + item.key() +
                   "' (known: role, match, response, reasoning, input_tokens, output_tokens, repeat)"};
  }
  if (!object.contains("response")) return Error{"missing 'response'"};
  Entry entry;
  auto response = StringField(object, "response");
  if (!response) return response.error();
  entry.response = *response;
  for (auto [key, slot] : {std::pair{"role", &entry.role}, std::pair{"reasoning", &entry.reasoning}}) {
    if (!object.contains(key)) continue;
    auto value = StringField(object, key);
    if (!value) return value.error();
    *slot = *value;
  }
  if (object.contains("match") && object["match"].is_array()) {
    // Several substrings, all of which must occur in the prompt.
    for (const auto& part : object["match"]) {
      if (!part.is_string())
        return Error{"'match' must be a string or a list of strings, got " + DumpJson(object["match"])};
      if (!entry.match)
        entry.match = part.get<std::string>();
      else
        entry.also.push_back(part.get<std::string>());
    }
    if (!entry.match) return Error{"'match' is an empty list"};
  } else if (object.contains("match")) {
    auto match = StringField(object, "match");
    if (!match) return match.error();
    entry.match = *match;
  }
  for (auto [key, slot] :
       {std::pair{"input_tokens", &entry.input_tokens}, std::pair{"output_tokens", &entry.output_tokens}}) {
    if (!object.contains(key)) continue;
    auto value = TokenField(object, key);
    if (!value) return value.error();
    *slot = *value;
  }
  if (object.contains("repeat")) {
    if (!object["repeat"].is_boolean())
      return Error{"'repeat' must be true or false, got " + DumpJson(object["repeat"])};
    entry.repeat = object["repeat"].get<bool>();
  }
  return entry;
}

Result<std::vector<Entry>> ParseRecording(const std::string& path) {
  auto text = ReadFile(path);
  if (!text) return text.error();
  std::vector<Entry> entries;
  size_t start = 0;
  for (int line_no = 1; start <= text->size(); ++line_no) {
    size_t end = text->find('\n', start);
    if (end == std::string::npos) end = text->size();
    std::string line = text->substr(start, end - start);
    start = end + 1;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    size_t first = line.find_first_not_of(" \t");
    if (first == std::string::npos || line[first] == '#') continue;
    auto entry = ParseEntry(line);
    if (!entry) return Error{path + ":" + std::to_string(line_no) + ": " + entry.error().message};
    entry->line = line_no;
    entries.push_back(std::move(*entry));
  }
  return entries;
}

// Length of the longest common substring: how much of a recorded match the prompt still contains.
size_t LongestCommonSubstring(const std::string& a, const std::string& b) {
  if (a.empty() || b.empty()) return 0;
  std::vector<size_t> previous(b.size() + 1, 0), current(b.size() + 1, 0);
  size_t best = 0;
  for (char ca : a) {
    for (size_t j = 1; j <= b.size(); ++j) {
      current[j] = ca == b[j - 1] ? previous[j - 1] + 1 : 0;
      best = std::max(best, current[j]);
    }
    std::swap(previous, current);
  }
  return best;
}

// One line, whitespace runs collapsed, at most `limit` characters.
std::string Excerpt(const std::string& text, size_t limit) {
  std::string out;
  bool space = false;
  for (char c : text) {
    if (c == ' ' || c == '\n' || c == '\t' || c == '\r') {
      space = !out.empty();
      continue;
    }
    if (space) out += ' ';
    space = false;
    out += c;
    if (out.size() >= limit) return out + "...";
  }
  return out;
}

class ScriptedChatModel : public ChatModel {
 public:
  ScriptedChatModel(ScriptedOptions options, std::vector<Entry> entries)
      : options_(std::move(options)), entries_(std::move(entries)) {}

  std::string backend() const override { return "scripted"; }
  std::string model() const override { return options_.model; }

  ChatOutcome Complete(const ChatRequest& request) override {
    std::string prompt = JoinPrompt(request);
    std::lock_guard<std::mutex> lock(mutex_);
    for (Entry& entry : entries_) {
      if (entry.used || !RoleApplies(entry, request.agent_role)) continue;
      if (entry.match && prompt.find(*entry.match) == std::string::npos) continue;
      if (std::any_of(entry.also.begin(), entry.also.end(),
                      [&](const std::string& part) { return prompt.find(part) == std::string::npos; }))
        continue;
      if (!entry.repeat) entry.used = true;
      return Answer(entry, prompt);
    }
    return ChatOutcome{.failure =
                           CallFailure{.kind = FailureKind::kNoMatch, .message = NoMatchMessage(request, prompt)}};
  }

 private:
  static bool RoleApplies(const Entry& entry, const std::string& role) {
    return entry.role.empty() || entry.role == role;
  }

  ChatOutcome Answer(const Entry& entry, const std::string& prompt) const {
    ChatResponse response;
    response.text = entry.response;
    response.reasoning = entry.reasoning;
    response.model = options_.model;
    response.finish_reason = "stop";
    response.usage.input_tokens = entry.input_tokens.value_or(EstimateTokens(prompt));
    long reasoning_tokens = entry.reasoning.empty() ? 0 : EstimateTokens(entry.reasoning);
    response.usage.output_tokens = entry.output_tokens.value_or(EstimateTokens(entry.response) + reasoning_tokens);
    if (!entry.output_tokens) response.usage.reasoning_tokens = reasoning_tokens;
    response.usage.estimated = !entry.input_tokens || !entry.output_tokens;
    return ChatOutcome{.response = std::move(response)};
  }

  // Names the role, the prompt and the nearest recorded entries, so a stale recording can be fixed.
  std::string NoMatchMessage(const ChatRequest& request, const std::string& prompt) const {
    std::string last = request.messages.empty() ? "" : request.messages.back().content;
    std::string message = options_.path + ": no recorded entry matches this request for role '" + request.agent_role +
                          "' (last message: \"" + Excerpt(last, 160) + "\")";
    struct Candidate {
      const Entry* entry;
      size_t similarity;
    };
    std::vector<Candidate> candidates;
    for (const Entry& entry : entries_)
      if (RoleApplies(entry, request.agent_role))
        candidates.push_back({&entry, entry.match ? LongestCommonSubstring(*entry.match, prompt) : 0});
    if (candidates.empty()) return message + "; " + NoRoleMessage(request.agent_role);
    std::stable_sort(candidates.begin(), candidates.end(), [](const Candidate& a, const Candidate& b) {
      if (a.entry->used != b.entry->used) return !a.entry->used;
      return a.similarity > b.similarity;
    });
    message += "; closest entries:";
    for (size_t i = 0; i < candidates.size() && i < 3; ++i) {
      const Entry& entry = *candidates[i].entry;
      message += i == 0 ? " " : "; ";
      message += "line " + std::to_string(entry.line) + (entry.used ? " (used up)" : " (unused)");
      message += entry.match ? " match \"" + Excerpt(*entry.match, 80) + "\"" : " matching any prompt";
      if (entry.match) message += " (" + std::to_string(candidates[i].similarity) + " characters in common)";
    }
    return message;
  }

  std::string NoRoleMessage(const std::string& role) const {
    std::set<std::string> roles;
    for (const Entry& entry : entries_) roles.insert(entry.role);
    if (roles.empty()) return "the recording has no entries at all";
    std::string list;
    for (const std::string& r : roles) list += (list.empty() ? "" : ", ") + r;
    return "the recording has no entry for role '" + role + "'; roles it has: " + list;
  }

  const ScriptedOptions options_;
  std::mutex mutex_;
  std::vector<Entry> entries_;  // guarded by mutex_ (the used flags change)
};

}  // namespace

Result<std::unique_ptr<ChatModel>> OpenScriptedChatModel(const ScriptedOptions& options) {
  auto entries = ParseRecording(options.path);
  if (!entries) return entries.error();
  return std::unique_ptr<ChatModel>(std::make_unique<ScriptedChatModel>(options, std::move(*entries)));
}

}  // namespace accelopt::llm
