// The cuda target's recorded demo answers every agent of both decode tasks it
// names, replayed through the loop with the cuda prompts and the cuda
// target's answer reader. Its GPU is stood in for by a target that measures
// nothing: a kernel "runs" in 2 ms, the project's split-KV kernel in 1 ms.
// (`optimize --demo --target cuda` once gave kv8 no executor answer, the
// recording having one executor entry for both tasks, and still exited 0.)

#include <gtest/gtest.h>

#include "core/paths.h"
#include "eval/stats.h"
#include "targets/registry.h"
#include "llm/config.h"
#include "run/optimize.h"
#include "store/store.h"
#include "targets/cuda/cuda_target.h"
#include "testing/temp_dir.h"

namespace accelopt {
namespace {

// The cuda target's description, prompts and answer reader; runs without a device.
class StandInGpu : public targets::Target {
 public:
  StandInGpu() : cuda_(cuda::MakeCudaTarget({})) {}
  std::string name() const override { return cuda_->name(); }
  targets::TargetInfo Describe() const override { return cuda_->Describe(); }
  std::string Machine() const override { return "stand-in GPU"; }
  std::string Signature(const suite::Task& task) const override { return cuda_->Signature(task); }
  bool Supports(const suite::Task& task) const override { return cuda_->Supports(task); }
  Result<std::string> Baseline(const suite::Task& task) const override { return cuda_->Baseline(task); }
  AnswerReader AnswerReaderFor(const suite::Task& task) const override {
    return cuda_->AnswerReaderFor(task);
  }
  std::map<std::string, std::string> PromptValues(const suite::Task& task) const override {
    return cuda_->PromptValues(task);
  }

  struct StandInBuilt : targets::Built {
    const Profile& BuildProfile() const override { return profile; }
    Profile profile;
  };
  std::vector<Result<std::unique_ptr<targets::Built>>> Build(std::span<const targets::EvalRequest> requests) override {
    std::vector<Result<std::unique_ptr<targets::Built>>> out;
    for (const auto& r : requests) {
      auto built = std::make_unique<StandInBuilt>();
      built->profile.task = r.task->name;
      built->profile.shape = r.shape;
      built->profile.target = name();
      const double seconds = r.candidate.source.find("split_decode") != std::string::npos ? 1e-3 : 2e-3;
      built->profile.latency = eval::Summarize(std::vector<double>(10, seconds));
      out.push_back(std::unique_ptr<targets::Built>(std::move(built)));
    }
    return out;
  }
  std::vector<Result<Profile>> Run(std::span<targets::Built* const> built, const OnResult& on_result) override {
    std::vector<Result<Profile>> out;
    for (size_t k = 0; k < built.size(); ++k) {
      out.push_back(built[k]->BuildProfile());
      if (on_result) on_result(k, out.back());
    }
    return out;
  }

 private:
  std::unique_ptr<targets::Target> cuda_;
};

TEST(CudaDemoRecording, AnswersEveryAgentOfBothDecodeTasks) {
  const targets::TargetKind* cuda = targets::FindTarget("cuda");
  ASSERT_TRUE(cuda && cuda->demo);
  testing::TempDir dir;
  llm::LlmConfig config;
  config.backends["demo"] = llm::BackendConfig{"scripted"};
  config.backends["demo"].scripted.path = std::string(ACCELOPT_SOURCE_DIR) + "/" + cuda->demo->recording;
  config.roles["default"] = llm::RoleSettings{"demo"};
  auto client = llm::BuildLlmClient(config);
  ASSERT_TRUE(client) << client.error().message;
  auto db = store::OpenSqliteStore({dir.path() + "/accelopt.db"});
  ASSERT_TRUE(db) << db.error().message;
  auto run = (*db)->CreateRun(Json::object());
  ASSERT_TRUE(run);
  StandInGpu target;

  // As UseDemo (cli/cmd_optimize.cc) sets the search up.
  run::TaskSettings settings;
  settings.search.iterations = cuda->demo->iterations;
  settings.search.plans = cuda->demo->plans;
  settings.search.beam = 1;
  settings.search.samples = 1;
  settings.search.fix_rounds = 0;
  settings.search.proposals = search::ProposalMode::kSequential;
  settings.memory_name = "demo";
  settings.shape = "bench";
  settings.prompts_dir = std::string(ACCELOPT_SOURCE_DIR) + "/" + target.Describe().prompts_dir;
  ASSERT_EQ(cuda->demo->tasks.size(), 2u);
  for (const std::string& name : cuda->demo->tasks) {
    auto task = suite::LoadTask(std::string(ACCELOPT_SOURCE_DIR) + "/suite/" + name);
    ASSERT_TRUE(task) << task.error().message;
    auto result = run::OptimizeTask(settings, *task, *run, **db, **client, target);
    ASSERT_TRUE(result) << result.error().message;
    for (const auto& [role, message] : result->agent_failures) ADD_FAILURE() << name << ": " << role << ": " << message;
    auto candidates = (*db)->ListCandidates(*run, name);
    ASSERT_TRUE(candidates);
    EXPECT_EQ(candidates->size(), 2u) << name << ": the baseline and the executor's kernel";
    EXPECT_NE(result->best.code.find("split_decode"), std::string::npos) << name;
  }
}

}  // namespace
}  // namespace accelopt
