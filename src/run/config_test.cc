#include "run/config.h"

#include <gtest/gtest.h>

#include "targets/registry.h"

namespace accelopt::run {
namespace {

// Everything a resume needs comes back: the search, the model settings
// (sampling included) and where kernels are evaluated.
TEST(RunConfig, RoundTripsEverySetting) {
  RunConfig c;
  c.tasks = {"silu", "matmul"};
  c.memory = "mine";
  c.shape = "test";
  c.suite_dir = "/s";
  c.anchors = true;
  c.search.iterations = 3;
  c.search.proposals = search::ProposalMode::kSequential;
  c.search.tune_budget = 5;
  c.llm_config = "accelopt.yaml";
  c.model.exchange_dir = "ex";
  c.model.temperature = 0.7;
  c.model.max_tokens = 1234;
  c.model.budget_usd = 0.4;
  c.eval.target = "external";
  c.eval.evaluator = "python3 e.py";
  c.eval.cpus = {0, 1};
  c.eval.bind_openmp = true;
  c.queue.lease = 4;
  c.queue.slurm = {"gpu", "gpu:1", "2:00:00", "lab", 8};
  auto back = RunConfigFromJson(ToJson(c));
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(ToJson(*back), ToJson(c));
  EXPECT_EQ(back->model.temperature, 0.7);
  EXPECT_EQ(back->model.budget_usd, 0.4);  // a resume keeps the run's --budget
  EXPECT_TRUE(back->eval.bind_openmp);
  EXPECT_TRUE(back->anchors);  // a resume measures the anchors as the run began to
  EXPECT_EQ(back->queue.slurm.gres, "gpu:1");
  EXPECT_EQ(back->queue.slurm.max_workers, 8);
}

TEST(RunConfig, OlderRecordsTakeTheirDefaultsAndABrokenOneIsAnError) {
  Json j = ToJson(RunConfig{});
  j["search"].erase("proposals");
  j["search"].erase("tune_budget");
  j["eval"].erase("target");
  j.erase("anchors");
  auto old = RunConfigFromJson(j);
  ASSERT_TRUE(old.ok()) << old.error().message;
  EXPECT_EQ(old->search.proposals, search::ProposalMode::kSequential);
  EXPECT_EQ(old->search.tune_budget, 0);
  EXPECT_EQ(old->eval.target, targets::kDefaultTarget);
  EXPECT_FALSE(old->anchors);
  j.erase("search");
  auto broken = RunConfigFromJson(j);
  ASSERT_FALSE(broken.ok());
  EXPECT_NE(broken.error().message.find("run config: "), std::string::npos);
  EXPECT_NE(broken.error().message.find("search"), std::string::npos) << broken.error().message;
}

}  // namespace
}  // namespace accelopt::run
