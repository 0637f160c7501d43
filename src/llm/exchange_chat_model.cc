// The file-exchange backend: a person or an external agent answers the prompts.
//
// For each request, with a fresh id such as 20250131T120501.042Z-0007-planner:
//   <dir>/<id>.prompt.md    the prompt for a person to read, saying where the answer goes
//   <dir>/<id>.prompt.json  the same prompt for a program; written last, so when it
//                           appears the .md is there too
// and the answer is one of (the .json wins when both are there):
//   <dir>/<id>.answer.json  {"text": "...", "input_tokens": N, "output_tokens": M}, tokens optional
//   <dir>/<id>.answer.txt   the plain answer text; an empty file counts as not answered yet
//
// Writers need not write-then-rename: an answer file is read only once its size and
// modification time are the same at two polls in a row, so a file still being
// written is left alone (write-then-rename is still best, and needs no such wait to be safe).
// The files stay in the folder afterwards as a record of the exchange.

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "core/json_io.h"
#include "llm/chat_model.h"

namespace accelopt::llm {
namespace {
namespace fs = std::filesystem;

// UTC time with milliseconds, filename-safe: 20250131T120501.042Z.
std::string UtcStamp() {
  auto now = std::chrono::system_clock::now();
  std::time_t seconds = std::chrono::system_clock::to_time_t(now);
  long millis = std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() % 1000;
  std::tm utc{};
  gmtime_r(&seconds, &utc);
  char buffer[32];
  std::strftime(buffer, sizeof buffer, "%Y%m%dT%H%M%S", &utc);
  char out[48];
  std::snprintf(out, sizeof out, "%s.%03ldZ", buffer, millis);
  return out;
}

std::string SafeName(const std::string& text) {
  std::string out;
  for (char c : text) out += (std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_') ? c : '_';
  return out.empty() ? "request" : out;
}

// What a poll saw of one answer file.
struct Seen {
  uintmax_t size = 0;
  fs::file_time_type mtime;
  bool operator==(const Seen&) const = default;
};

// True when the file exists and looks the same as at the previous poll (then it is complete).
bool Settled(const fs::path& path, std::optional<Seen>& previous) {
  std::error_code ec;
  Seen now;
  now.size = fs::file_size(path, ec);
  if (!ec) now.mtime = fs::last_write_time(path, ec);
  if (ec) {
    previous.reset();
    return false;
  }
  bool settled = previous && *previous == now;
  previous = now;
  return settled;
}

// An answer whose usage is estimated from the texts.
ChatResponse EstimatedResponse(std::string text, const std::string& prompt, const std::string& model) {
  ChatResponse response;
  response.model = model;
  response.finish_reason = "stop";
  response.usage.input_tokens = EstimateTokens(prompt);
  response.usage.output_tokens = EstimateTokens(text);
  response.usage.estimated = true;
  response.text = std::move(text);
  return response;
}

ChatOutcome Failure(FailureKind kind, std::string message) {
  return ChatOutcome{.failure = CallFailure{.kind = kind, .message = std::move(message)}};
}

Result<long> TokenField(const Json& answer, const char* key) {
  const Json& value = answer.at(key);
  if (!value.is_number_integer() || value.get<long long>() < 0)
    return Error{std::string("'") + key + "' must be a non-negative integer, got " + DumpJson(value)};
  return value.get<long>();
}

class ExchangeChatModel : public ChatModel {
 public:
  explicit ExchangeChatModel(ExchangeOptions options) : options_(std::move(options)) {}

  std::string backend() const override { return "exchange"; }
  std::string model() const override { return options_.model; }

  ChatOutcome Complete(const ChatRequest& request) override {
    std::string id = NewId(request.agent_role);
    fs::path dir(options_.dir);
    fs::path json_answer = dir / (id + ".answer.json");
    fs::path text_answer = dir / (id + ".answer.txt");
    // An unwritable folder is a broken channel, not a bad request: report it as a connection failure.
    Status written = WriteFile((dir / (id + ".prompt.md")).string(), PromptMarkdown(id, request));
    if (written)
      written = WriteFile((dir / (id + ".prompt.json")).string(), DumpJson(PromptJson(id, request), 2) + "\n");
    if (!written) return Failure(FailureKind::kConnection, written.error().message);
    Waiting waiting(*this, id);

    std::string prompt = JoinPrompt(request);
    using Clock = std::chrono::steady_clock;
    auto seconds = [](double s) {
      return std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(s));
    };
    Clock::duration poll = seconds(options_.poll_seconds);
    Clock::time_point deadline = Clock::now() + seconds(std::min(options_.timeout_seconds, 1e9));
    std::optional<Seen> json_seen, text_seen;
    while (true) {
      if (Settled(json_answer, json_seen)) return ReadJsonAnswer(json_answer, prompt);
      if (Settled(text_answer, text_seen) && text_seen->size > 0) return ReadTextAnswer(text_answer, prompt);
      Clock::time_point now = Clock::now();
      if (now >= deadline) break;
      std::this_thread::sleep_for(std::min(poll, deadline - now));
    }
    char waited[32];
    std::snprintf(waited, sizeof waited, "%g", options_.timeout_seconds);
    return Failure(FailureKind::kTimeout, "no answer to prompt " + id + " within " + waited + " s: expected " +
                                              json_answer.string() + " or " + text_answer.string());
  }

 private:
  // Unique within this process by the counter; across processes sharing the folder,
  // an id whose prompt file already exists is skipped.
  std::string NewId(const std::string& role) {
    std::lock_guard<std::mutex> lock(mutex_);
    while (true) {
      char counter[24];
      std::snprintf(counter, sizeof counter, "%04ld", ++counter_);
      std::string id = UtcStamp() + "-" + counter + "-" + SafeName(role);
      std::error_code ec;
      if (!fs::exists(fs::path(options_.dir) / (id + ".prompt.json"), ec)) return id;
    }
  }

  Json PromptJson(const std::string& id, const ChatRequest& request) const {
    Json messages = Json::array();
    for (const Message& m : request.messages) messages.push_back({{"role", m.role}, {"content", m.content}});
    return Json{
        {"id", id},
        {"agent_role", request.agent_role},
        {"model", options_.model},
        {"messages", messages},
        {"temperature", request.temperature ? Json(*request.temperature) : Json(nullptr)},
        {"max_tokens", request.max_tokens ? Json(*request.max_tokens) : Json(nullptr)},
        {"reasoning_effort", request.reasoning_effort},
        {"thinking_budget_tokens", request.thinking_budget_tokens},
        {"answer_files", {{"json", id + ".answer.json"}, {"text", id + ".answer.txt"}}},
    };
  }

  std::string PromptMarkdown(const std::string& id, const ChatRequest& request) const {
    fs::path dir(options_.dir);
    std::string md = "# Prompt " + id + "\n\n";
    md += "Agent role: " + request.agent_role + "\n";
    if (request.temperature) md += "Temperature: " + std::to_string(*request.temperature) + "\n";
    if (request.max_tokens) md += "Max tokens: " + std::to_string(*request.max_tokens) + "\n";
    if (!request.reasoning_effort.empty()) md += "Reasoning effort: " + request.reasoning_effort + "\n";
    md += "\nPut the answer in " + (dir / (id + ".answer.txt")).string() + " (plain text), or in " +
          (dir / (id + ".answer.json")).string() +
          " as {\"text\": \"...\", \"input_tokens\": N, \"output_tokens\": M} (tokens optional).\n"
          "Best write it under another name and rename it; otherwise it is read once it stops changing.\n";
    for (const Message& m : request.messages) md += "\n## " + m.role + "\n\n" + m.content + "\n";
    return md;
  }

  ChatOutcome ReadJsonAnswer(const fs::path& path, const std::string& prompt) const {
    auto text = ReadFile(path.string());
    if (!text) return Failure(FailureKind::kMalformed, text.error().message);
    auto response = ParseExchangeAnswer(*text, path.string(), prompt, options_.model);
    if (!response) return Failure(FailureKind::kMalformed, response.error().message);
    return ChatOutcome{.response = std::move(*response)};
  }

  ChatOutcome ReadTextAnswer(const fs::path& path, const std::string& prompt) const {
    auto text = ReadFile(path.string());
    if (!text) return Failure(FailureKind::kMalformed, text.error().message);
    return ChatOutcome{.response = MakeResponse(*text, prompt)};
  }

  ChatResponse MakeResponse(std::string text, const std::string& prompt) const {
    return EstimatedResponse(std::move(text), prompt, options_.model);
  }

  // While a prompt waits for its answer: whoever answers is told on stderr how
  // many answers the engine is waiting for, and where.
  class Waiting {
   public:
    Waiting(ExchangeChatModel& model, const std::string& id) : model_(model) {
      std::lock_guard<std::mutex> lock(model_.mutex_);
      const int waiting = ++model_.waiting_;
      std::fprintf(stderr, "[exchange] waiting for %d answer%s in %s (new: %s.prompt.md)\n", waiting,
                   waiting == 1 ? "" : "s", model_.options_.dir.c_str(), id.c_str());
    }
    ~Waiting() {
      std::lock_guard<std::mutex> lock(model_.mutex_);
      --model_.waiting_;
    }

   private:
    ExchangeChatModel& model_;
  };

  const ExchangeOptions options_;
  std::mutex mutex_;
  long counter_ = 0;  // guarded by mutex_
  int waiting_ = 0;   // prompts without an answer yet; guarded by mutex_
};

}  // namespace

Result<ChatResponse> ParseExchangeAnswer(const std::string& json_text, const std::string& where,
                                         const std::string& prompt, const std::string& model) {
  Json answer;
  try {
    answer = Json::parse(json_text);
  } catch (const Json::exception& e) {
    return Error{where + ": invalid JSON: " + e.what()};
  }
  auto malformed = [&](const std::string& what) { return Error{where + ": " + what}; };
  if (!answer.is_object()) return malformed(std::string("expected a JSON object, got ") + answer.type_name());
  if (!answer.contains("text")) return malformed("missing 'text'");
  if (!answer["text"].is_string()) return malformed("'text' must be a string");
  ChatResponse response = EstimatedResponse(answer["text"].get<std::string>(), prompt, model);
  if (answer.contains("reasoning")) {
    if (!answer["reasoning"].is_string()) return malformed("'reasoning' must be a string");
    response.reasoning = answer["reasoning"].get<std::string>();
  }
  bool estimated = false;
  for (auto [key, slot] : {std::pair{"input_tokens", &response.usage.input_tokens},
                           std::pair{"output_tokens", &response.usage.output_tokens}}) {
    if (!answer.contains(key)) {
      estimated = true;
      continue;
    }
    auto tokens = TokenField(answer, key);
    if (!tokens) return malformed(tokens.error().message);
    *slot = *tokens;
  }
  response.usage.estimated = estimated;
  return response;
}

Result<std::unique_ptr<ChatModel>> OpenExchangeChatModel(const ExchangeOptions& options) {
  if (options.poll_seconds <= 0) return Error{"exchange folder " + options.dir + ": poll_seconds must be positive"};
  std::error_code ec;
  fs::create_directories(options.dir, ec);
  if (ec) return Error{"cannot create exchange folder " + options.dir + ": " + ec.message()};
  if (!fs::is_directory(options.dir, ec)) return Error{"exchange folder " + options.dir + " is not a folder"};
  return std::unique_ptr<ChatModel>(std::make_unique<ExchangeChatModel>(options));
}

}  // namespace accelopt::llm
