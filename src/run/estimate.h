#pragma once
/// What a run will ask of its models, said before it starts: calls per agent
/// role from the search settings, tokens from typical prompt and answer
/// sizes, and cost from the price table. A plain function of its inputs.

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "llm/pricing.h"
#include "search/beam_search.h"

namespace accelopt::run {

/// The typical size of one call of a role, in tokens. The defaults are read
/// off the shipped prompts (rules, task brief, a kernel of a few hundred lines
/// and its profile; the planner also gets up to lesson_bytes of lessons) and
/// the answers they ask for (a plan; a whole kernel; a lesson), at about four
/// characters a token.
struct TypicalCall {
  long input_tokens = 0;
  long output_tokens = 0;
};

/// The model serving a role and its price (nullopt when the price table does not list it).
struct RoleModel {
  std::string backend;  ///< "openai", "scripted" ...
  std::string model;
  std::optional<llm::Price> price;
};

struct RoleEstimate {
  std::string role;
  long calls = 0;  ///< per run (every task)
  long input_tokens = 0, output_tokens = 0;
  RoleModel model;
  std::optional<double> cost_usd;  ///< nullopt when the price is unknown
};

struct RunEstimate {
  std::vector<RoleEstimate> roles;  ///< planner, executor, fixer, summarizer
  size_t tasks = 0;
  long calls = 0, input_tokens = 0, output_tokens = 0;
  std::optional<double> cost_usd;  ///< nullopt when a role's price is unknown
  bool replayed = false;           ///< every role is a recording (scripted): nothing is paid
};

/// Assumed share of executor samples that fail and go to the fixer (each for
/// up to fix_rounds rounds): a quarter, as the recorded runs go.
constexpr double kFixedShare = 0.25;

/// The calls of `tasks` tasks under `search`, at most (every beam full from
/// the first iteration): per task, executor I x B x N x K; planner I x B x N
/// (sequential) or I x B (one call for N plans); fixer kFixedShare of the
/// executor calls x R; summarizer I x TopK. `models` names each role's model
/// (a role missing from it is priced as unknown).
RunEstimate EstimateRun(const search::SearchOptions& search, size_t tasks,
                        const std::map<std::string, RoleModel>& models);

/// The typical call of `role` ("planner", "executor", "fixer", "summarizer") under `search`.
TypicalCall TypicalCallOf(const std::string& role, const search::SearchOptions& search);

/// The estimate as lines for a person: per role, then the total, and how the tokens were estimated.
std::string EstimateText(const RunEstimate& estimate);

}  // namespace accelopt::run
