#include "run/estimate.h"

#include <fmt/core.h>

#include <cmath>

namespace accelopt::run {

TypicalCall TypicalCallOf(const std::string& role, const search::SearchOptions& search) {
  // Rules and task brief ~1,500 tokens; a kernel of a few hundred lines ~2,000; its profile ~500.
  constexpr long kBrief = 1500, kKernel = 2000, kProfile = 500;
  if (role == "planner") {
    const long lessons = static_cast<long>(search.lesson_bytes / 4);
    const long plans = search.proposals == search::ProposalMode::kOneCall ? search.plans : 1;
    return {kBrief + kKernel + kProfile + lessons, 400 * plans};
  }
  if (role == "executor") return {kBrief + kKernel + kProfile + 400, kKernel + 500};
  if (role == "fixer") return {kBrief + 2 * kKernel + 1000, kKernel + 500};  // the kernel, its error log
  if (role == "summarizer") return {kBrief + 2 * kKernel, 600};              // the slow and fast kernels
  return {};
}

RunEstimate EstimateRun(const search::SearchOptions& s, size_t tasks, const std::map<std::string, RoleModel>& models) {
  const long t = static_cast<long>(tasks);
  const long executor = static_cast<long>(s.iterations) * s.beam * s.plans * s.samples;
  const long planner =
      static_cast<long>(s.iterations) * s.beam * (s.proposals == search::ProposalMode::kOneCall ? 1 : s.plans);
  const long fixer = std::lround(executor * kFixedShare) * s.fix_rounds;
  const long summarizer = static_cast<long>(s.iterations) * s.top_k;
  RunEstimate e;
  e.tasks = tasks;
  e.cost_usd = 0.0;
  e.replayed = !models.empty();
  for (const auto& [role, per_task] : std::vector<std::pair<std::string, long>>{
           {"planner", planner}, {"executor", executor}, {"fixer", fixer}, {"summarizer", summarizer}}) {
    RoleEstimate r;
    r.role = role;
    r.calls = per_task * t;
    const TypicalCall typical = TypicalCallOf(role, s);
    r.input_tokens = r.calls * typical.input_tokens;
    r.output_tokens = r.calls * typical.output_tokens;
    if (auto it = models.find(role); it != models.end()) r.model = it->second;
    e.replayed = e.replayed && r.model.backend == "scripted";
    if (r.model.backend == "scripted")
      r.cost_usd = 0.0;  // a recording answers: no model runs
    else if (r.model.price)
      r.cost_usd =
          (r.input_tokens * r.model.price->input_per_million + r.output_tokens * r.model.price->output_per_million) /
          1e6;
    if (r.calls > 0 && !r.cost_usd) e.cost_usd.reset();
    if (e.cost_usd && r.cost_usd) *e.cost_usd += *r.cost_usd;
    e.calls += r.calls;
    e.input_tokens += r.input_tokens;
    e.output_tokens += r.output_tokens;
    e.roles.push_back(r);
  }
  return e;
}

namespace {

std::string Count(long n) {
  if (n >= 10'000'000) return fmt::format("{:.0f}M", n / 1e6);
  if (n >= 1'000'000) return fmt::format("{:.1f}M", n / 1e6);
  if (n >= 10'000) return fmt::format("{:.0f}k", n / 1e3);
  return std::to_string(n);
}

std::string Cost(const std::optional<double>& usd) { return usd ? fmt::format("${:.2f}", *usd) : "unknown"; }

}  // namespace

std::string EstimateText(const RunEstimate& e) {
  std::string text =
      fmt::format("estimate for {} task(s), at most (every beam full from the first iteration):\n", e.tasks);
  for (const RoleEstimate& r : e.roles) {
    const std::string model = r.model.model.empty() ? r.model.backend : r.model.model;
    text += fmt::format(
        "  {:<10} {:>7} calls  {:>6} tokens in / {:>6} out  {:<24} {}\n", r.role, r.calls, Count(r.input_tokens),
        Count(r.output_tokens), model.empty() ? "(no model)" : model,
        r.model.backend == "scripted" || r.model.price ? Cost(r.cost_usd) : "unknown (not in the price table)");
  }
  text += fmt::format("  total      {:>7} calls  {:>6} tokens in / {:>6} out  cost {}{}\n", e.calls,
                      Count(e.input_tokens), Count(e.output_tokens), Cost(e.cost_usd),
                      e.replayed ? " (answers replayed from a recording: nothing is paid)" : "");
  text += fmt::format(
      "  (tokens per call from typical prompt and answer sizes: rules and brief, a kernel of a few hundred lines "
      "and its profile, the planner's lessons block; the fixer counted for {:.0f}% of the samples)\n",
      100 * kFixedShare);
  return text;
}

}  // namespace accelopt::run
