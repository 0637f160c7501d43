// The NKI evaluator (evaluators/nki) on a machine without Trainium: without
// the Neuron SDK it says why it cannot run; with `--replay` its device layer
// is replaced by a recording of synthetic device answers
// (evaluators/nki/testdata/replay.json, labelled so), and everything else
// (inputs, reference, comparison, statuses, series, protocol) is the
// evaluator's own code under test.

#include <gtest/gtest.h>

#include <string>

#include "core/json_io.h"
#include "suite/task.h"
#include "targets/external/external_target.h"
#include "testing/run_command.h"
#include "testing/temp_dir.h"

namespace accelopt {
namespace {

const std::string kRoot = ACCELOPT_SOURCE_DIR;
const std::string kNki = kRoot + "/evaluators/nki";
const std::string kEvaluator = "python3 " + kNki + "/evaluator.py";
const std::string kReplay = kEvaluator + " --replay " + kNki + "/testdata/replay.json";
const std::string kSuite = " --suite " + kNki + "/suite";

// The trn1 figures of one NeuronCore the evaluator reports from the specifications.
constexpr double kBandwidthGbs = 820, kPeakVecGflops = 5200;
// rmsnorm at `test` (R=4, D=64): 4*(2*R*D + D) bytes, memory-bound on trn1.
constexpr double kTestBytes = 4 * (2 * 4 * 64 + 64);

class NkiEvaluator : public ::testing::Test {
 protected:
  void SetUp() override {
    auto task = suite::LoadTask(kNki + "/suite/rmsnorm");
    ASSERT_TRUE(task.ok()) << task.error().message;
    task_ = *task;
  }

  Result<std::unique_ptr<targets::Target>> Make(const std::string& command, bool serve = true) {
    external::ExternalOptions options;
    options.command = external::SplitCommand(command);
    options.one_invocation_per_request = !serve;
    options.work_dir = scratch_.path();
    options.timeout_seconds = 30;
    options.min_calls = 5;
    options.max_calls = 10;
    return external::MakeExternalTarget(options);
  }

  Result<Profile> Evaluate(targets::Target& target, const std::string& source) {
    targets::EvalRequest request{&task_, "test", {source, "kernel", {}}};
    return std::move(target.Evaluate({&request, 1})[0]);
  }

  static std::string Read(const std::string& path) {
    auto text = ReadFile(path);
    EXPECT_TRUE(text.ok()) << path;
    return text.ok() ? *text : "";
  }

  testing::TempDir scratch_;
  suite::Task task_;
};

TEST_F(NkiEvaluator, WithoutTheNeuronSdkItSaysWhyAndTheTargetIsUnavailable) {
  if (testing::RunShell("python3 -c 'import neuronxcc'").exit_code == 0)
    GTEST_SKIP() << "the Neuron SDK is installed here; this test is for machines without it";
  auto target = Make(kEvaluator);
  ASSERT_FALSE(target.ok());
  EXPECT_NE(target.error().message.find("could not describe"), std::string::npos) << target.error().message;
  EXPECT_NE(target.error().message.find("the Neuron SDK is not installed here"), std::string::npos)
      << target.error().message;

  auto listed = testing::Accelopt("targets --evaluator '" + kEvaluator + "'");
  ASSERT_EQ(listed.exit_code, 0) << listed.out;
  EXPECT_NE(listed.out.find("external   unavailable"), std::string::npos) << listed.out;
  EXPECT_NE(listed.out.find("the Neuron SDK is not installed here"), std::string::npos) << listed.out;
  // The same command with a recording is available: the probe asks the evaluator itself.
  auto replayed = testing::Accelopt("targets --json --evaluator '" + kReplay + "'");
  ASSERT_EQ(replayed.exit_code, 0) << replayed.out;
  bool found = false;
  for (const Json& kind : Json::parse(replayed.out.substr(replayed.out.find('['))))
    if (kind["name"] == "external") {
      found = true;
      EXPECT_EQ(kind["available"], true) << kind.dump();
    }
  EXPECT_TRUE(found) << replayed.out;
}

// From the command line, as a user runs it: the baseline is ok, every timed
// call checked, scored against the trn1 peaks the description reports.
TEST_F(NkiEvaluator, AReplayedBaselineIsOkAndScoredAgainstTheSpecifiedPeaks) {
  auto run = testing::Accelopt("eval rmsnorm " + kNki + "/suite/rmsnorm/baseline.py" + kSuite +
                               " --shape test --json --target external --evaluator '" + kReplay + "'");
  ASSERT_EQ(run.exit_code, 0) << run.out;
  Json j = Json::parse(run.out.substr(run.out.find('{')));
  EXPECT_EQ(j["status"], "ok") << j["message"];
  EXPECT_EQ(j["target"], "nki");
  EXPECT_EQ(j["compile"]["log"], "[synthetic replay] compiled\n");
  EXPECT_LT(j["errors"]["rel_l2"].get<double>(), 1e-6);
  EXPECT_GT(j["errors"]["rel_l2"].get<double>(), 0);  // float32 outputs against a double reference
  // 3 checked calls, then 2 series of the CLI's 10 calls, each checked too.
  EXPECT_EQ(j["checked_calls"], 23);
  EXPECT_EQ(j["latency"]["series"], 2);
  EXPECT_EQ(j["latency"]["calls"], 10);
  // The recording's synthetic times lie within 9.6 us +- 3%.
  const double median = j["latency"]["median_s"];
  EXPECT_GT(median, 9.3e-6);
  EXPECT_LT(median, 9.9e-6);
  EXPECT_EQ(j["scored_against"]["bandwidth_gbs"], kBandwidthGbs);
  EXPECT_EQ(j["scored_against"]["peak_vec_gflops"], kPeakVecGflops);
  EXPECT_EQ(j["scored_against"]["fingerprint"], "replay of replay.json");
  EXPECT_EQ(j["score"]["bound"], "memory");
  EXPECT_NEAR(j["score"]["roofline_seconds"].get<double>(), kTestBytes / (kBandwidthGbs * 1e9), 1e-15);
  EXPECT_NEAR(j["score"]["percent_of_peak"].get<double>(), 100 * kTestBytes / (kBandwidthGbs * 1e9) / median, 1e-9);
}

// The same verdicts whether the evaluator serves every request from one
// process or is run once per request.
TEST_F(NkiEvaluator, ReplayedVerdictsAreTheEnginesStatusesOnBothTransports) {
  for (bool serve : {true, false}) {
    SCOPED_TRACE(serve ? "served" : "one invocation per request");
    auto target = Make(kReplay, serve);
    ASSERT_TRUE(target.ok()) << target.error().message;
    const targets::TargetInfo info = (*target)->Describe();
    EXPECT_EQ(info.name, "nki");
    EXPECT_EQ(info.prompts_dir, "evaluators/nki/prompts");
    EXPECT_NE((*target)->MachineText().find("REPLAY"), std::string::npos);
    EXPECT_TRUE((*target)->Supports(task_));

    auto baseline = Evaluate(**target, Read(kNki + "/suite/rmsnorm/baseline.py"));
    ASSERT_TRUE(baseline.ok()) << baseline.error().message;
    EXPECT_EQ(baseline->status, Verdict::kOk) << baseline->message;
    EXPECT_EQ(baseline->checked_calls, 3 + 2 * 5);
    ASSERT_TRUE(baseline->latency.has_value());
    EXPECT_EQ(baseline->latency->calls, 5);

    auto wrong = Evaluate(**target, Read(kNki + "/testdata/wrong_kernel.py"));
    ASSERT_TRUE(wrong.ok()) << wrong.error().message;
    EXPECT_EQ(wrong->status, Verdict::kWrongAnswer);
    EXPECT_NE(wrong->message.find("relative L2 error"), std::string::npos) << wrong->message;
    ASSERT_TRUE(wrong->errors.has_value());
    EXPECT_GT(wrong->errors->rel_l2, 0.1);

    auto broken = Evaluate(**target, Read(kNki + "/testdata/compile_failure.py"));
    ASSERT_TRUE(broken.ok()) << broken.error().message;
    EXPECT_EQ(broken->status, Verdict::kCompileError) << broken->message;
    EXPECT_NE(broken->compile_log.find("has no attribute 'rms_norm'"), std::string::npos) << broken->compile_log;

    auto imports = Evaluate(**target, "import os\nimport neuronxcc.nki.language as nl\ndef kernel(x, w):\n    pass\n");
    ASSERT_TRUE(imports.ok()) << imports.error().message;
    EXPECT_EQ(imports->status, Verdict::kForbidden);
    EXPECT_NE(imports->message.find("imports 'os'"), std::string::npos) << imports->message;

    auto syntax = Evaluate(**target, "def kernel(x, w)\n    pass\n");
    ASSERT_TRUE(syntax.ok()) << syntax.error().message;
    EXPECT_EQ(syntax->status, Verdict::kCompileError);

    // A kernel the recording does not hold is the evaluator's error, never a guessed verdict.
    auto unknown = Evaluate(**target, "import neuronxcc.nki.language as nl\ndef kernel(x, w):\n    return x\n");
    ASSERT_FALSE(unknown.ok());
    EXPECT_NE(unknown.error().message.find("no kernel with source sha256"), std::string::npos)
        << unknown.error().message;
  }
}

// A recording that does not say it is synthetic is refused.
TEST_F(NkiEvaluator, AnUnlabelledRecordingIsRefused) {
  const std::string path = scratch_.path() + "/unlabelled.json";
  ASSERT_TRUE(WriteFile(path, "{\"instance\": \"trn1.2xlarge\", \"seed\": 1, \"kernels\": {}}").ok());
  auto target = Make(kEvaluator + " --replay " + path);
  ASSERT_FALSE(target.ok());
  EXPECT_NE(target.error().message.find("does not say it is a synthetic fixture"), std::string::npos)
      << target.error().message;
}

}  // namespace
}  // namespace accelopt
