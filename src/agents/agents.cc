#include "agents/agents.h"

#include <fmt/core.h>

#include "eval/compare.h"

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

// The lineage as the prompts show it.
std::string LineageText(const KernelView& kernel) {
  return kernel.lineage.empty() ? "(none: this is the baseline)" : kernel.lineage;
}

}  // namespace

Result<PromptTemplates> PromptTemplates::Load(const std::string& dir) {
  PromptTemplates t;
  for (const char* name : {"planner", "planner_several", "executor", "fixer", "summarizer", "rules"}) {
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
  std::map<std::string, std::string> v = {
      {"task", brief_.task},
      {"description", brief_.description},
      {"signature", brief_.signature},
      {"shape", brief_.shape},
      {"reference", brief_.reference},
      {"flags", brief_.flags},
      {"isa", brief_.isa},
      {"checked_shapes", brief_.checked_shapes.empty() ? "none" : brief_.checked_shapes},
      {"tolerance", tolerance},
      {"element_bound_scale", fmt::format("{:g}", eval::kElementBoundScale)}};
  for (const auto& [name, value] : brief_.values) v[name] = value;
  v["tune_budget"] = std::to_string(brief_.tune_budget);
  std::string strategies;
  for (const auto& name : Strategies()) strategies += (strategies.empty() ? "" : ", ") + name;
  v["strategies"] = strategies;
  v["rules"] = Render(templates_.text.at("rules"), v);
  return v;
}

std::map<std::string, std::string> Agents::ForPlanner(const KernelView& kernel, const std::string& lessons) const {
  auto v = Common();
  v["kernel"] = kernel.code;
  v["profile"] = kernel.profile_text;
  v["lineage"] = LineageText(kernel);
  v["attempts"] = kernel.attempts.empty() ? "(none yet)\n" : kernel.attempts;
  v["lessons"] = lessons.empty() ? "(none yet)" : lessons;
  return v;
}

Result<Plan> Agents::Propose(const KernelView& kernel, const std::string& lessons, int proposal, int proposals,
                             const std::vector<std::string>& already, const std::string& key) {
  auto v = ForPlanner(kernel, lessons);
  v["proposal"] = std::to_string(proposal);
  v["proposals"] = std::to_string(proposals);
  std::string titles;
  for (const auto& title : already) titles += "- " + title + "\n";
  v["already_proposed"] = titles.empty() ? "(none yet: this is the first)\n" : titles;
  auto answer = model_.Ask("planner", Render(templates_.text.at("planner"), v), key);
  if (!answer) return answer.error();
  auto plan = ParsePlan(*answer);
  if (!plan) return Rejected(key, "the planner's answer holds no plan");
  return *plan;
}

Result<std::vector<Plan>> Agents::ProposeSeveral(const KernelView& kernel, const std::string& lessons, int count,
                                                 const std::string& key) {
  auto v = ForPlanner(kernel, lessons);
  v["proposals"] = std::to_string(count);
  auto answer = model_.Ask("planner", Render(templates_.text.at("planner_several"), v), key);
  if (!answer) return answer.error();
  std::vector<Plan> plans = ParsePlans(*answer);
  if (plans.empty()) return Rejected(key, "the planner's answer holds no plan");
  if (plans.size() > static_cast<size_t>(count)) plans.resize(count);
  return plans;
}

Result<std::string> Agents::Execute(const KernelView& kernel, const Plan& plan, const std::string& key) {
  auto v = Common();
  v["kernel"] = kernel.code;
  v["lineage"] = LineageText(kernel);
  v["plan"] = plan.Text();
  auto answer = model_.Ask("executor", Render(templates_.text.at("executor"), v), key);
  if (!answer) return answer.error();
  return CodeIn("executor", *answer, kernel.code, key);
}

Error Agents::Rejected(const std::string& key, const std::string& reason) {
  model_.Reject(key, reason);
  return Error{reason};
}

Result<std::string> Agents::CodeIn(const std::string& role, const std::string& answer, const std::string& current,
                                   const std::string& key) {
  if (brief_.read_answer) {
    auto code = brief_.read_answer(answer, current);
    if (!code) return Rejected(key, "the " + role + "'s answer does not apply: " + code.error().message);
    return code;
  }
  auto code = ExtractKernel(answer, brief_.fence_tags, brief_.entry_point);
  if (!code) return Rejected(key, "the " + role + "'s answer holds no complete code block");
  if (!code->note.empty()) model_.Note(key, "the " + role + "'s answer: " + code->note);
  return code->code;
}

Result<std::string> Agents::Fix(const std::string& code, const std::string& status, const std::string& log,
                                const std::string& key) {
  auto v = Common();
  v["kernel"] = code;
  v["status"] = status;
  v["error"] = log.size() > kFixerLogBytes ? CutAtCharacter(log, kFixerLogBytes) + "\n[... truncated]" : log;
  auto answer = model_.Ask("fixer", Render(templates_.text.at("fixer"), v), key);
  if (!answer) return answer.error();
  return CodeIn("fixer", *answer, code, key);
}

Result<std::optional<Lesson>> Agents::Summarize(const PairView& pair, const Plan& plan, const std::string& key) {
  auto v = Common();
  v["slow_kernel"] = pair.slow.code;
  v["slow_profile"] = pair.slow.profile_text;
  v["fast_kernel"] = pair.fast.code;
  v["fast_profile"] = pair.fast.profile_text;
  v["plan"] = plan.Text();
  v["speedup"] = pair.speedup;
  auto answer = model_.Ask("summarizer", Render(templates_.text.at("summarizer"), v), key);
  if (!answer) return answer.error();
  return ParseLesson(*answer);
}

}  // namespace accelopt::agents
