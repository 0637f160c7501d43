#include "targets/target.h"

#include <gtest/gtest.h>

namespace accelopt::targets {
namespace {

TEST(EvaluationJob, RoundTripsAndItsKeyNamesWhereItIsMeasured) {
  const EvaluationJob job{"silu", "bench", "0123abcd", "cpu", "efd8afb1614271cc"};
  EXPECT_EQ(job.Key(), "silu/bench/cpu@efd8afb1614271cc/0123abcd");
  auto back = EvaluationJob::FromJson(job.ToJson());
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(back->Key(), job.Key());
  Json missing = job.ToJson();
  missing.erase("machine");
  auto refused = EvaluationJob::FromJson(missing);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().message, "evaluation job: 'machine' must be a non-empty string");
}

}  // namespace
}  // namespace accelopt::targets
