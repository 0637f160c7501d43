// The external target: the Python adapter in evaluators/python end to end,
// and evaluators that break the protocol, which are engine errors, never a
// kernel's verdict.

#include "targets/external/external_target.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <string>

#include "core/json_io.h"
#include "suite/task.h"
#include "testing/run_command.h"
#include "testing/temp_dir.h"

namespace accelopt {
namespace {

const std::string kRoot = ACCELOPT_SOURCE_DIR;
const std::string kPythonEvaluator = "python3 " + kRoot + "/evaluators/python/evaluator.py";

class ExternalTarget : public ::testing::Test {
 protected:
  void SetUp() override {
    auto task = suite::LoadTask(kRoot + "/evaluators/python/suite/scale_add");
    ASSERT_TRUE(task.ok()) << task.error().message;
    task_ = *task;
  }

  std::unique_ptr<targets::Target> Make(const std::string& command, bool serve = true) {
    external::ExternalOptions options;
    options.command = external::SplitCommand(command);
    options.one_invocation_per_request = !serve;
    options.work_dir = scratch_.path();
    options.timeout_seconds = 30;
    options.min_calls = 5;
    options.max_calls = 10;
    options.budget_seconds = 0.02;
    auto target = external::MakeExternalTarget(options);
    EXPECT_TRUE(target.ok()) << target.error().message;
    return target.ok() ? std::move(*target) : nullptr;
  }

  Result<Profile> Evaluate(targets::Target& target, const std::string& source) {
    targets::EvalRequest request{&task_, "test", {source, "kernel", {}}};
    return std::move(target.Evaluate({&request, 1})[0]);
  }

  // An evaluator written as a shell script: `describe` answers as the Python
  // one would; `body` answers build, check and time (the request file is $1).
  static constexpr const char* kPeaks =
      "\"peaks\": {\"bandwidth_gbs\": 1, \"peak_mm_gflops\": 0.001, \"peak_vec_gflops\": 0.001}";
  std::string Script(const std::string& body, const std::string& scoring = kPeaks) {
    const std::string path = scripts_.path() + "/evaluator" + std::to_string(++scripts_made_) + ".sh";
    const std::string text =
        "#!/bin/sh\n"
        "op=$(sed -n 's/.*\"op\": *\"\\([a-z]*\\)\".*/\\1/p' \"$1\")\n"
        "if [ \"$op\" = describe ]; then\n"
        "  echo '{\"protocol\": 1, \"name\": \"scripted\", \"language\": \"python\", \"file_extension\": \".py\", "
        "\"fence_tags\": [\"python\"], " +
        scoring +
        "}'\n"
        "  exit 0\n"
        "fi\n" +
        body;
    EXPECT_TRUE(WriteFile(path, text).ok());
    chmod(path.c_str(), 0755);
    return path;
  }

  testing::TempDir scratch_, scripts_;
  int scripts_made_ = 0;
  suite::Task task_;
};

TEST_F(ExternalTarget, ThePythonAdapterDescribesItselfAndMeasuresItsBaseline) {
  auto target = Make(kPythonEvaluator);
  ASSERT_NE(target, nullptr);
  const targets::TargetInfo info = target->Describe();
  EXPECT_EQ(info.name, "python");
  EXPECT_EQ(info.language, "python");
  EXPECT_EQ(info.file_extension, ".py");
  EXPECT_EQ(info.fence_tags, (std::vector<std::string>{"python", "py"}));
  EXPECT_TRUE(target->Supports(task_));
  EXPECT_GT(target->Hardware().value("bandwidth_gbs", 0.0), 0);

  auto baseline = ReadFile(task_.baseline_path(".py"));
  ASSERT_TRUE(baseline.ok());
  auto profile = Evaluate(*target, *baseline);
  ASSERT_TRUE(profile.ok()) << profile.error().message;
  EXPECT_EQ(profile->status, Verdict::kOk) << profile->message;
  // Issue 24: the Python evaluator is no boundary, and its results say so.
  EXPECT_NE(profile->message.find("not trusted against a kernel that attacks the machine: none"), std::string::npos)
      << profile->message;
  EXPECT_EQ(profile->target, "python");
  ASSERT_TRUE(profile->latency.has_value());
  EXPECT_GT(profile->latency->median_s, 0);
  EXPECT_EQ(profile->latency->series, 2);
  EXPECT_GE(profile->latency->calls, 5);
  EXPECT_GE(profile->checked_calls, 1);
  EXPECT_GT(profile->percent_of_peak, 0);
  EXPECT_LE(profile->percent_of_peak, 100);
  EXPECT_EQ(profile->bound, "vec");
  ASSERT_TRUE(profile->scored_against.has_value());
}

// The same verdicts whether the adapter serves every request from one
// process or is run once per request.
TEST_F(ExternalTarget, ThePythonAdaptersVerdictsAreTheEnginesStatuses) {
  for (bool serve : {true, false}) {
    SCOPED_TRACE(serve ? "served" : "one invocation per request");
    auto target = Make(kPythonEvaluator, serve);
    ASSERT_NE(target, nullptr);
    auto wrong = Evaluate(*target, "def kernel(x, y, out):\n    for i in range(N):\n        out[i] = x[i] + y[i]\n");
    ASSERT_TRUE(wrong.ok()) << wrong.error().message;
    EXPECT_EQ(wrong->status, Verdict::kWrongAnswer);
    EXPECT_NE(wrong->message.find("relative L2 error"), std::string::npos) << wrong->message;
    auto syntax = Evaluate(*target, "def kernel(x, y, out)\n    pass\n");
    ASSERT_TRUE(syntax.ok());
    EXPECT_EQ(syntax->status, Verdict::kCompileError) << syntax->message;
    auto unwritten = Evaluate(*target, "def kernel(x, y, out):\n    pass\n");
    ASSERT_TRUE(unwritten.ok());
    EXPECT_EQ(unwritten->status, Verdict::kWrongAnswer) << unwritten->message;
    EXPECT_NE(unwritten->message.find("not finite"), std::string::npos) << unwritten->message;
    auto raises = Evaluate(*target, "def kernel(x, y, out):\n    raise ValueError('no')\n");
    ASSERT_TRUE(raises.ok());
    EXPECT_EQ(raises->status, Verdict::kRuntimeError);
    EXPECT_NE(raises->run_log.find("ValueError: no"), std::string::npos) << raises->run_log;
    auto imports = Evaluate(*target, "import subprocess\ndef kernel(x, y, out):\n    pass\n");
    ASSERT_TRUE(imports.ok());
    EXPECT_EQ(imports->status, Verdict::kForbidden);
  }
}

// Two kernels timed side by side by the evaluator: the speedup is the
// engine's, from the pairs. The same computation, once after an idle loop of
// about a millisecond: a gap no load on a shared machine closes (the test
// shape's indexed loop and comprehension differ by a few percent, which it did).
TEST_F(ExternalTarget, ThePythonAdapterTimesTwoKernelsSideBySide) {
  auto target = Make(kPythonEvaluator);
  ASSERT_NE(target, nullptr);
  EXPECT_TRUE(target->ComparesSideBySide());
  const std::string compute = "    out[:] = type(out)('f', [a * u + v for u, v in zip(x, y)])\n";
  targets::EvalRequest a{
      &task_, "test", {"def kernel(x, y, out):\n    for _ in range(30000):\n        pass\n" + compute, "idles first", {}}};
  targets::EvalRequest b{&task_, "test", {"def kernel(x, y, out):\n" + compute, "comprehension", {}}};
  auto paired = target->Compare(a, b);
  ASSERT_TRUE(paired.ok()) << paired.error().message;
  EXPECT_EQ(paired->a.status, Verdict::kOk) << paired->a.message;
  EXPECT_EQ(paired->b.status, Verdict::kOk) << paired->b.message;
  ASSERT_TRUE(paired->speedup.has_value());
  EXPECT_GE(paired->speedup->pairs, 5);
  EXPECT_GT(paired->speedup->speedup, 1);
  EXPECT_LE(paired->speedup->ci_low, paired->speedup->speedup);
}

// A persistent evaluator that dies during a request is an engine error with
// what it last wrote to stderr; the next request starts it again.
TEST_F(ExternalTarget, AServedEvaluatorThatDiesIsAnErrorAndIsStartedAgain) {
  const std::string path = scripts_.path() + "/served.sh";
  ASSERT_TRUE(
      WriteFile(path,
                "#!/bin/sh\n"
                "if [ \"$1\" != --serve ]; then\n"
                "  echo '{\"protocol\": 1, \"name\": \"served\", \"language\": \"python\", "
                "\"file_extension\": \".py\", \"fence_tags\": [\"python\"], \"serve\": true}'\n"
                "  exit 0\n"
                "fi\n"
                "while read -r line; do\n"
                "  case \"$line\" in\n"
                "    *'\"op\":\"build\"'*) echo '{\"protocol\": 1, \"status\": \"ok\", \"artifact\": \"a\"}' ;;\n"
                "    *) echo 'out of memory on the device' >&2; exit 5 ;;\n"
                "  esac\n"
                "done\n")
          .ok());
  chmod(path.c_str(), 0755);
  auto target = Make(path);
  ASSERT_NE(target, nullptr);
  for (int attempt = 0; attempt < 2; ++attempt) {
    auto profile = Evaluate(*target, "x");
    ASSERT_FALSE(profile.ok()) << "attempt " << attempt;
    EXPECT_NE(profile.error().message.find("failed during 'check': exited with code 5 before answering"),
              std::string::npos)
        << profile.error().message;
    EXPECT_NE(profile.error().message.find("out of memory on the device"), std::string::npos)
        << profile.error().message;
  }
}

// Each way of breaking the protocol is an error of the engine that names the
// evaluator's fault, never a verdict on the kernel.
TEST_F(ExternalTarget, AnEvaluatorOutsideTheProtocolIsAnEngineErrorNotAVerdict) {
  const std::string build_ok =
      "[ \"$op\" = build ] && { echo '{\"protocol\": 1, \"status\": \"ok\", \"artifact\": \"a\"}'; exit 0; }\n";
  const std::string check_ok =
      "[ \"$op\" = check ] && { echo '{\"protocol\": 1, \"status\": \"ok\", \"checked_calls\": 3, \"errors\": "
      "{\"rel_l2\": 0, \"max_abs\": 0}}'; exit 0; }\n";
  struct Case {
    std::string body, expected;
  };
  const std::vector<Case> cases = {
      {"echo 'compiling...'; exit 0\n", "answered 'build' with what is not JSON"},
      {"exit 3\n", "exited with code 3 during 'build'"},
      {"echo '{\"protocol\": 2, \"status\": \"ok\"}'\n", "in protocol 2, not 1"},
      {"echo '{\"protocol\": 1, \"status\": \"fine\"}'\n", "unknown status 'fine'"},
      {"echo '{\"protocol\": 1, \"status\": \"compile_error\"}'\n", "but no message saying why"},
      {"echo '{\"protocol\": 1, \"status\": \"ok\"}'\n", "ok without an artifact"},
      {build_ok + "echo '{\"protocol\": 1, \"status\": \"ok\", \"checked_calls\": 0}'\n", "without a checked call"},
      {build_ok + "echo '{\"protocol\": 1, \"status\": \"ok\", \"checked_calls\": 2, \"errors\": {\"rel_l2\": 0.5}}'\n",
       "errors.rel_l2 0.5 against a tolerance"},
      {build_ok + check_ok + "echo '{\"protocol\": 1, \"status\": \"ok\", \"series\": [[0.001, -1, 0.001]]}'\n",
       "not a positive number of seconds"},
      {build_ok + check_ok + "echo '{\"protocol\": 1, \"status\": \"ok\", \"series\": [[0.001]]}'\n",
       "fewer than 3 samples"},
      {build_ok + "echo '{\"protocol\": 1, \"error\": \"no GPU\"}'\n", "could not check: \"no GPU\""},
      {"echo '{\"protocol\": 1, \"status\": 3}'\n", "has a field of the wrong type"},
      {"echo '{\"protocol\": \"1\", \"status\": \"ok\"}'\n", "has a field of the wrong type"},
      {"echo '{\"protocol\": 1, \"status\": \"ok\", \"artifact\": \"a\", \"log\": 5}'\n",
       "has a field of the wrong type"},
  };
  for (const Case& c : cases) {
    auto target = Make(Script(c.body));
    ASSERT_NE(target, nullptr);
    auto profile = Evaluate(*target, "def kernel(x, y, out): pass\n");
    ASSERT_FALSE(profile.ok()) << c.body << " gave status " << VerdictName(profile->status);
    EXPECT_NE(profile.error().message.find(c.expected), std::string::npos) << profile.error().message;
  }
}

// A kernel an evaluator times faster than its own peaks allow is measured
// again, then suspect; an honest answer is scored.
// An evaluator that scores by a plain metric: its samples are figures (here
// throughput, higher is better), compared by their reciprocal; no roofline.
TEST_F(ExternalTarget, AMetricWithADirectionScoresInsteadOfPeaks) {
  const std::string answers =
      "case \"$op\" in\n"
      "  build) echo '{\"protocol\": 1, \"status\": \"ok\", \"artifact\": \"k\"}' ;;\n"
      "  check) echo '{\"protocol\": 1, \"status\": \"ok\", \"checked_calls\": 1, \"errors\": {\"rel_l2\": 0, "
      "\"max_abs\": 0}}' ;;\n"
      "  time) echo '{\"protocol\": 1, \"status\": \"ok\", \"series\": [[400, 500, 250, 500, 500]]}' ;;\n"
      "esac\n";
  auto target =
      Make(Script(answers, "\"metric\": {\"name\": \"throughput\", \"unit\": \"items/s\", \"direction\": \"higher\"}"));
  ASSERT_NE(target, nullptr);
  EXPECT_EQ(target->Rates().bandwidth_gbs, 0);
  auto profile = Evaluate(*target, "def kernel(x, y, out): pass\n");
  ASSERT_TRUE(profile.ok()) << profile.error().message;
  ASSERT_EQ(profile->status, Verdict::kOk) << profile->message;
  ASSERT_TRUE(profile->metric && profile->latency);
  EXPECT_DOUBLE_EQ(profile->metric->median, 500);
  EXPECT_DOUBLE_EQ(profile->metric->best, 500);
  EXPECT_DOUBLE_EQ(profile->metric->worst, 250);
  EXPECT_DOUBLE_EQ(profile->latency->median_s, 1.0 / 500);
  EXPECT_EQ(profile->percent_of_peak, 0);
  EXPECT_EQ(MeasureText(*profile), "500 items/s");

  external::ExternalOptions options;
  options.command = {
      Script(answers, std::string(kPeaks) + ", \"metric\": {\"name\": \"t\", \"direction\": \"lower\"}")};
  options.work_dir = scratch_.path();
  auto both = external::MakeExternalTarget(options);
  ASSERT_FALSE(both.ok());
  EXPECT_NE(both.error().message.find("not both"), std::string::npos) << both.error().message;
  options.command = {Script(answers, "\"metric\": {\"name\": \"t\", \"direction\": \"up\"}")};
  auto sideways = external::MakeExternalTarget(options);
  ASSERT_FALSE(sideways.ok());
  EXPECT_NE(sideways.error().message.find("metric.direction"), std::string::npos) << sideways.error().message;
}

TEST_F(ExternalTarget, FasterThanTheReportedPeaksIsSuspect) {
  const std::string prefix =
      "[ \"$op\" = build ] && { echo '{\"protocol\": 1, \"status\": \"ok\", \"artifact\": \"a\"}'; exit 0; }\n"
      "[ \"$op\" = check ] && { echo '{\"protocol\": 1, \"status\": \"ok\", \"checked_calls\": 3, \"errors\": "
      "{\"rel_l2\": 0, \"max_abs\": 0}}'; exit 0; }\n";
  // scale_add at `test`: 2000 vector flops at 1 MFLOP/s is 2 ms.
  auto honest =
      Make(Script(prefix + "echo '{\"protocol\": 1, \"status\": \"ok\", \"series\": [[0.004, 0.004, 0.004]]}'\n"));
  auto profile = Evaluate(*honest, "x");
  ASSERT_TRUE(profile.ok()) << profile.error().message;
  EXPECT_EQ(profile->status, Verdict::kOk);
  EXPECT_NEAR(profile->percent_of_peak, 50, 0.01);
  auto impossible =
      Make(Script(prefix + "echo '{\"protocol\": 1, \"status\": \"ok\", \"series\": [[0.0001, 0.0001, 0.0001]]}'\n"));
  profile = Evaluate(*impossible, "x");
  ASSERT_TRUE(profile.ok()) << profile.error().message;
  EXPECT_EQ(profile->status, Verdict::kSuspect) << profile->message;
  EXPECT_NE(profile->message.find("no hardware profile"), std::string::npos) << profile->message;
}

// From the command line, as a user runs it.
TEST_F(ExternalTarget, EvalRunsThroughTheCommandLine) {
  const std::string suite = " --suite " + kRoot + "/evaluators/python/suite";
  auto run = testing::Accelopt("eval scale_add " + kRoot + "/evaluators/python/suite/scale_add/baseline.py" + suite +
                               " --shape test --json --target external --evaluator '" + kPythonEvaluator + "'");
  ASSERT_EQ(run.exit_code, 0) << run.out;
  Json j = Json::parse(run.out.substr(run.out.find('{')));
  EXPECT_EQ(j["status"], "ok");
  EXPECT_EQ(j["target"], "python");
  auto tasks = testing::Accelopt("tasks --target external --evaluator '" + kPythonEvaluator + "'" + suite);
  ASSERT_EQ(tasks.exit_code, 0) << tasks.out;
  EXPECT_NE(tasks.out.find("scale_add            vec"), std::string::npos) << tasks.out;
  auto none = testing::RunShell("ACCELOPT_EVALUATOR= " + std::string(ACCELOPT_BINARY) + " eval scale_add " + kRoot +
                                "/evaluators/python/suite/scale_add/baseline.py" + suite + " --target external");
  EXPECT_EQ(none.exit_code, 1) << none.out;
  EXPECT_NE(none.out.find("no evaluator named"), std::string::npos) << none.out;
}

}  // namespace
}  // namespace accelopt
