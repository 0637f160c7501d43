// The Triton adapter (evaluators/triton) on a CUDA GPU: the example's
// baseline end to end through the command line, and kernels that cheat the
// harness, which must not be `ok` or must gain nothing. Labelled `gpu`; each
// test is skipped, saying why, where the adapter cannot describe itself (no
// torch, triton or CUDA device).

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "core/json_io.h"
#include "suite/task.h"
#include "targets/external/external_target.h"
#include "testing/run_command.h"
#include "testing/temp_dir.h"
#include "testing/test_paths.h"

namespace accelopt {
namespace {

const std::string kRoot = testing::SourceDir();
const std::string kEvaluator = "python3 " + kRoot + "/evaluators/triton/evaluator.py";
const std::string kFlags =
    " --suite " + kRoot + "/evaluators/triton/suite --target external --evaluator '" + kEvaluator + "' --timeout 300";
const std::string kBaseline = kRoot + "/evaluators/triton/suite/silu/baseline.py";

// The silu kernel of the baseline, for the variants below to launch.
const std::string kSiluKernel =
    "import torch\n"
    "import triton\n"
    "import triton.language as tl\n"
    "\n"
    "@triton.jit\n"
    "def silu_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):\n"
    "    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n"
    "    mask = offs < n\n"
    "    x = tl.load(x_ptr + offs, mask=mask)\n"
    "    tl.store(out_ptr + offs, x / (1.0 + tl.exp(-x)), mask=mask)\n"
    "\n"
    "def launch(x, out):\n"
    "    silu_kernel[(triton.cdiv(M * N, 1024),)](x, out, M * N, BLOCK=1024)\n"
    "\n";

// The adapter's target, described once for all tests (the peaks take seconds
// to measure); the reason it cannot be made when it cannot.
struct Described {
  std::unique_ptr<targets::Target> target;
  std::string why_not;
};

Described& Adapter() {
  static testing::TempDir* work = new testing::TempDir();
  static Described* described = [] {
    auto* d = new Described();
    external::ExternalOptions options;
    options.command = external::SplitCommand(kEvaluator);
    options.work_dir = work->path();
    options.timeout_seconds = 300;
    auto target = external::MakeExternalTarget(options);
    if (target.ok())
      d->target = std::move(*target);
    else
      d->why_not = target.error().message;
    return d;
  }();
  return *described;
}

#define SKIP_WITHOUT_GPU()                                                                                  \
  do {                                                                                                      \
    if (!Adapter().target) GTEST_SKIP() << "needs a CUDA GPU with torch and triton: " << Adapter().why_not; \
  } while (0)

class TritonOnGpu : public ::testing::Test {
 protected:
  void SetUp() override {
    auto task = suite::LoadTask(kRoot + "/evaluators/triton/suite/silu");
    ASSERT_TRUE(task.ok()) << task.error().message;
    task_ = *task;
  }

  Result<Profile> Evaluate(const std::string& source, const std::string& shape = "test") {
    targets::EvalRequest request{&task_, shape, {source, "kernel", {}}};
    return std::move(Adapter().target->Evaluate({&request, 1})[0]);
  }

  suite::Task task_;
};

TEST_F(TritonOnGpu, TheBaselineEvaluatesThroughTheCommandLine) {
  SKIP_WITHOUT_GPU();
  auto run = testing::Accelopt("eval silu " + kBaseline + kFlags + " --shape bench --json");
  ASSERT_EQ(run.exit_code, 0) << run.out;
  Json j = Json::parse(run.out.substr(run.out.find('{')));
  EXPECT_EQ(j["status"], "ok") << run.out;
  EXPECT_EQ(j["target"], "triton");
  EXPECT_GE(j.value("checked_calls", 0), 4) << run.out;
  ASSERT_TRUE(j.contains("score")) << run.out;
  EXPECT_GT(j["score"].value("percent_of_peak", 0.0), 0) << run.out;
  EXPECT_LE(j["score"].value("percent_of_peak", 0.0), 100) << run.out;
}

// Two kernels timed side by side: the baseline against one with wider blocks
// and more warps (correct too, so the comparison is made).
TEST_F(TritonOnGpu, CompareTimesTwoKernelsSideBySide) {
  SKIP_WITHOUT_GPU();
  testing::TempDir dir;
  const std::string wide = dir.path() + "/wide.py";
  ASSERT_TRUE(WriteFile(wide, kSiluKernel + "def kernel(x, out):\n"
                                            "    silu_kernel[(triton.cdiv(M * N, 4096),)](x, out, M * N, BLOCK=4096, "
                                            "num_warps=8)\n")
                  .ok());
  auto run = testing::Accelopt("compare silu " + kBaseline + " " + wide + kFlags + " --shape bench --json");
  ASSERT_EQ(run.exit_code, 0) << run.out;
  Json j = Json::parse(run.out.substr(run.out.find('{')));
  ASSERT_TRUE(j["speedup"].is_number()) << run.out;
  EXPECT_GE(j.value("pairs", 0), 3);
  EXPECT_LE(j.value("ci_low", 0.0), j.value("speedup", 0.0));
}

TEST_F(TritonOnGpu, KernelsThatCheatAreNotOk) {
  SKIP_WITHOUT_GPU();
  struct Case {
    std::string name, body;
    Verdict expected;
  };
  const std::vector<Case> cases = {
      {"writes nothing", "def kernel(x, out):\n    pass\n", Verdict::kWrongAnswer},
      {"writes half",
       "def kernel(x, out):\n    silu_kernel[(triton.cdiv(M * N // 2, 1024),)](x, out, M * N // 2, BLOCK=1024)\n",
       Verdict::kWrongAnswer},
      {"modifies its input",
       "def kernel(x, out):\n    launch(x, out)\n    silu_kernel[(triton.cdiv(M * N, 1024),)](x, x, M * N, "
       "BLOCK=1024)\n",
       Verdict::kForbidden},
      {"answers from its first call",
       "_kept = []\n"
       "def kernel(x, out):\n"
       "    if not _kept:\n"
       "        launch(x, out)\n"
       "        _kept.append(out.clone())\n"
       "    out.copy_(_kept[0])\n",
       Verdict::kWrongAnswer},
      {"raises", "def kernel(x, out):\n    raise ValueError('no')\n", Verdict::kRuntimeError},
      {"does not compile",
       "@triton.jit\ndef broken(x_ptr):\n    tl.store(x_ptr, tl.no_such_op(1.0))\n"
       "def kernel(x, out):\n    broken[(1,)](out)\n",
       Verdict::kCompileError},
      {"imports os", "import os\ndef kernel(x, out):\n    launch(x, out)\n", Verdict::kForbidden},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    auto profile = Evaluate(kSiluKernel + c.body);
    ASSERT_TRUE(profile.ok()) << profile.error().message;
    EXPECT_EQ(profile->status, c.expected) << VerdictName(profile->status) << ": " << profile->message;
  }
  // After a kernel failed, the next evaluation works (a fresh worker where the context may be broken).
  auto baseline = ReadFile(kBaseline);
  ASSERT_TRUE(baseline.ok());
  auto profile = Evaluate(*baseline);
  ASSERT_TRUE(profile.ok()) << profile.error().message;
  EXPECT_EQ(profile->status, Verdict::kOk) << profile->message;
}

// A kernel that launches on a side stream and returns before the work is
// done is timed by the host clock: it gains nothing over the same work on
// the current stream.
TEST_F(TritonOnGpu, WorkOnASideStreamGainsNothing) {
  SKIP_WITHOUT_GPU();
  auto baseline = ReadFile(kBaseline);
  ASSERT_TRUE(baseline.ok());
  auto honest = Evaluate(*baseline, "bench");
  ASSERT_TRUE(honest.ok()) << honest.error().message;
  ASSERT_EQ(honest->status, Verdict::kOk) << honest->message;
  auto side = Evaluate(kSiluKernel +
                           "_side = []\n"
                           "def kernel(x, out):\n"
                           "    if not _side:\n"
                           "        _side.append(torch.cuda.Stream())\n"
                           "    with torch.cuda.stream(_side[0]):\n"
                           "        launch(x, out)\n",
                       "bench");
  ASSERT_TRUE(side.ok()) << side.error().message;
  if (side->status != Verdict::kOk) return;  // not ok is as good
  ASSERT_TRUE(side->latency && honest->latency);
  EXPECT_GE(side->latency->median_s, 0.95 * honest->latency->median_s)
      << "side stream " << side->latency->median_s << " s, current stream " << honest->latency->median_s << " s";
}

}  // namespace
}  // namespace accelopt
