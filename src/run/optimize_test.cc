// What a run's model calls say about when its candidates were made.

#include <gtest/gtest.h>

#include "run/optimize.h"

namespace accelopt::run {
namespace {

Json Call(const std::string& task, const std::string& role, const std::string& key) {
  return {{"task", task}, {"agent_role", role}, {"key", key}};
}

TEST(ModelCalls, ACandidateCountsEarlierIterationsAndItsOwnBeforeTheSummaries) {
  const std::vector<Json> calls = {
      Call("silu", "planner", "run4/silu/it1/abc/plans"),
      Call("silu", "executor", "run4/silu/it1/abc/plan0/sample0"),
      Call("silu", "executor", "run4/silu/it1/abc/plan0/sample1#failed-9"),  // made, though it failed
      Call("matmul", "planner", "run4/matmul/it1/def/plans"),                // another task
      Call("silu", "summarizer", "run4/silu/it1/summary/abc-123"),
      Call("silu", "planner", "run4/silu/it2/123/plans"),
      Call("silu", "fixer", "run4/silu/it2/fix1/456"),
      Call("silu", "summarizer", "run4/silu/it2/summary/123-456"),
      Call("silu", "planner", "run4/silu/it10/789/plans"),
      Call("silu", "planner", "a key naming no iteration"),
  };
  EXPECT_EQ(ModelCallsBy(calls, "silu", 0), 0u);   // the baseline
  EXPECT_EQ(ModelCallsBy(calls, "silu", 1), 3u);   // not iteration 1's summary
  EXPECT_EQ(ModelCallsBy(calls, "silu", 2), 6u);   // iteration 1 whole, then plan and fix of 2
  EXPECT_EQ(ModelCallsBy(calls, "silu", 10), 8u);  // it10 is not it1
  EXPECT_EQ(ModelCallsBy(calls, "matmul", 1), 1u);
  EXPECT_EQ(ModelCallsBy(calls, "adamw", 3), 0u);
}

}  // namespace
}  // namespace accelopt::run
