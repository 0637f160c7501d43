#include "run/estimate.h"

#include <gtest/gtest.h>

namespace accelopt::run {
namespace {

const RoleEstimate& Role(const RunEstimate& e, const std::string& name) {
  for (const auto& r : e.roles)
    if (r.role == name) return r;
  ADD_FAILURE() << "no role " << name;
  return e.roles.front();
}

// The defaults: 15 x 6 x 12 x 2 = 2,160 executor calls per task, one planner
// call per beam kernel per iteration (N plans from one call), a quarter of the
// samples to the fixer once, TopK summaries per iteration.
TEST(Estimate, CallsFollowTheSearchSettings) {
  search::SearchOptions s;
  RunEstimate e = EstimateRun(s, 2, {});
  EXPECT_EQ(Role(e, "executor").calls, 2 * 2160);
  EXPECT_EQ(Role(e, "planner").calls, 2 * 15 * 6);
  EXPECT_EQ(Role(e, "fixer").calls, 2 * 540);
  EXPECT_EQ(Role(e, "summarizer").calls, 2 * 15 * 8);
  EXPECT_EQ(e.calls, 2 * (2160 + 90 + 540 + 120));
  EXPECT_FALSE(e.cost_usd.has_value());  // no model priced
  s.proposals = search::ProposalMode::kSequential;
  s.fix_rounds = 0;
  e = EstimateRun(s, 1, {});
  EXPECT_EQ(Role(e, "planner").calls, 15 * 6 * 12);
  EXPECT_EQ(Role(e, "fixer").calls, 0);
}

TEST(Estimate, CostComesFromEachRolesPrice) {
  search::SearchOptions s;
  s.iterations = 1, s.beam = 1, s.plans = 1, s.samples = 1, s.top_k = 0, s.fix_rounds = 0;
  RoleModel priced{"openai", "m", llm::Price{1.0, 10.0}};
  RunEstimate e = EstimateRun(s, 1, {{"planner", priced}, {"executor", priced}});
  const TypicalCall planner = TypicalCallOf("planner", s), executor = TypicalCallOf("executor", s);
  ASSERT_TRUE(e.cost_usd.has_value());
  EXPECT_NEAR(
      *e.cost_usd,
      (planner.input_tokens + executor.input_tokens) * 1e-6 + (planner.output_tokens + executor.output_tokens) * 10e-6,
      1e-12);
  EXPECT_EQ(e.input_tokens, planner.input_tokens + executor.input_tokens);
  s.fix_rounds = 1;
  s.samples = 4;  // one of four fixed: the fixer's model, unpriced, makes the total unknown
  e = EstimateRun(s, 1, {{"planner", priced}, {"executor", priced}, {"fixer", {"openai", "x", std::nullopt}}});
  EXPECT_FALSE(e.cost_usd.has_value());
  EXPECT_NE(EstimateText(e).find("unknown (not in the price table)"), std::string::npos) << EstimateText(e);
  // A larger lessons block makes a larger planner prompt.
  search::SearchOptions more = s;
  more.lesson_bytes *= 2;
  EXPECT_GT(TypicalCallOf("planner", more).input_tokens, TypicalCallOf("planner", s).input_tokens);
}

// A recording answers the demo: its cost is 0 whatever the price table says, and the text says why.
TEST(Estimate, AReplayedModelCostsNothing) {
  search::SearchOptions s;
  RoleModel recording{"scripted", "", std::nullopt};
  std::map<std::string, RoleModel> models;
  for (const char* role : {"planner", "executor", "fixer", "summarizer"}) models[role] = recording;
  RunEstimate e = EstimateRun(s, 3, models);
  ASSERT_TRUE(e.cost_usd.has_value());
  EXPECT_EQ(*e.cost_usd, 0);
  EXPECT_TRUE(e.replayed);
  const std::string text = EstimateText(e);
  EXPECT_NE(text.find("cost $0.00 (answers replayed from a recording: nothing is paid)"), std::string::npos) << text;
  EXPECT_NE(text.find("executor      6480 calls"), std::string::npos) << text;
}

}  // namespace
}  // namespace accelopt::run
