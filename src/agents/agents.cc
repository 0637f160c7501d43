#include "agents/agents.h"

#include <cstdio>

#include "core/json_io.h"

namespace accelopt::agents {
namespace {

// How much of a failing kernel's log the fixer sees.
constexpr size_t kFixerLogBytes = 6000;

// The first `bytes` bytes of `text`, backed off so as not to split a UTF-8 character.
std::string CutAtCharacter(const std::string& text, size_t bytes) {
  if (text.size() <= bytes) return text;
  while (bytes > 0 && (static_cast<unsigned char>(text[bytes]) & 0xC0) == 0x80) --bytes;
  return text.substr(0, bytes);
}

}  // namespace

Result<PromptTemplates> PromptTemplates::Load(const std::string& dir) {
  PromptTemplates t;
  for (const char* name : {"planner", "executor", "fixer", "summarizer", "rules"}) {
    auto text = ReadFile(dir + "/" + name + ".md");
    if (!text) return Error{"prompt templates: " + text.error().message};
    t.text[name] = *text;
  }
  return t;
}

std::string Render(const std::string& text, const std::map<std::string, std::string>& values) {
  std::string out;
  size_t i = 0;
  while (i < text.size()) {
    size_t open = text.find("{{", i);
    if (open == std::string::npos) break;
    size_t close = text.find("}}", open + 2);
    if (close == std::string::npos) break;
    out.append(text, i, open - i);
    auto it = values.find(text.substr(open + 2, close - open - 2));
    out += it != values.end() ? it->second : text.substr(open, close + 2 - open);
    i = close + 2;
  }
  out.append(text, i, std::string::npos);
  return out;
}

Agents::Agents(ModelPort& model, PromptTemplates templates, TaskBrief brief)
    : model_(model), templates_(std::move(templates)), brief_(std::move(brief)) {}

std::map<std::string, std::string> Agents::Common() const {
  char tolerance[32];
  std::snprintf(tolerance, sizeof tolerance, "%.0e", brief_.tolerance);
  std::map<std::string, std::string> v = {{"task", brief_.task},
                                          {"description", brief_.description},
                                          {"signature", brief_.signature},
                                          {"shape", brief_.shape},
                                          {"reference", brief_.reference},
                                          {"flags", brief_.flags},
                                          {"isa", brief_.isa},
                                          {"tolerance", tolerance}};
  v["rules"] = Render(templates_.text.at("rules"), v);
  return v;
}

Result<Plan> Agents::Propose(const KernelView& kernel, const std::string& lessons, int proposal, int proposals,
                             const std::string& key) {
  auto v = Common();
  v["proposal"] = std::to_string(proposal);
  v["proposals"] = std::to_string(proposals);
  v["kernel"] = kernel.code;
  v["profile"] = kernel.profile_text;
  v["lessons"] = lessons.empty() ? "(none yet)" : lessons;
  auto answer = model_.Ask("planner", Render(templates_.text.at("planner"), v), key);
  if (!answer) return answer.error();
  auto plan = ParsePlan(*answer);
  if (!plan) return Error{"the planner's answer holds no plan"};
  return *plan;
}

Result<std::string> Agents::Execute(const KernelView& kernel, const Plan& plan, const std::string& key) {
  auto v = Common();
  v["kernel"] = kernel.code;
  v["plan"] = plan.Text();
  auto answer = model_.Ask("executor", Render(templates_.text.at("executor"), v), key);
  if (!answer) return answer.error();
  auto code = ExtractCode(*answer);
  if (!code) return Error{"the executor's answer holds no complete code block"};
  return *code;
}

Result<std::string> Agents::Fix(const std::string& code, const std::string& status, const std::string& log,
                                const std::string& key) {
  auto v = Common();
  v["kernel"] = code;
  v["status"] = status;
  v["error"] = log.size() > kFixerLogBytes ? CutAtCharacter(log, kFixerLogBytes) + "\n[... truncated]" : log;
  auto answer = model_.Ask("fixer", Render(templates_.text.at("fixer"), v), key);
  if (!answer) return answer.error();
  auto fixed = ExtractCode(*answer);
  if (!fixed) return Error{"the fixer's answer holds no complete code block"};
  return *fixed;
}

Result<std::optional<LessonText>> Agents::Summarize(const std::string& slow, const std::string& fast, const Plan& plan,
                                                    double speedup, const std::string& key) {
  auto v = Common();
  v["slow_kernel"] = slow;
  v["fast_kernel"] = fast;
  v["plan"] = plan.Text();
  char text[32];
  std::snprintf(text, sizeof text, "%.2f", speedup);
  v["speedup"] = text;
  auto answer = model_.Ask("summarizer", Render(templates_.text.at("summarizer"), v), key);
  if (!answer) return answer.error();
  return ParseLesson(*answer);
}

}  // namespace accelopt::agents
