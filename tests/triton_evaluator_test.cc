// The Triton adapter (evaluators/triton) where it cannot run kernels: without
// torch, triton or a CUDA device it says why (an engine error naming the
// reason, never a crash), and its static rules judge a kernel's source before
// anything is imported. Runs everywhere: torch is hidden behind stubs on the
// Python path, so a machine with a GPU takes the same paths.
// tests/triton_evaluator_gpu_test.cc runs kernels.

#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "core/json_io.h"
#include "testing/run_command.h"
#include "testing/temp_dir.h"

namespace accelopt {
namespace {

const std::string kRoot = ACCELOPT_SOURCE_DIR;
const std::string kEvaluator = "python3 " + kRoot + "/evaluators/triton/evaluator.py";

class TritonEvaluator : public ::testing::Test {
 protected:
  // A folder of stub modules to put first on PYTHONPATH: `torch` and
  // `triton` with these bodies (an empty body: the module is left out).
  std::string Stubs(const std::string& torch, const std::string& triton) {
    const std::string dir = scratch_.path() + "/stubs" + std::to_string(++stubs_made_);
    for (const auto& [name, body] : {std::pair{"torch", torch}, std::pair{"triton", triton}}) {
      if (body.empty()) continue;
      std::filesystem::create_directories(dir + "/" + name);
      EXPECT_TRUE(WriteFile(dir + "/" + name + "/__init__.py", body).ok());
    }
    return dir;
  }

  // One request answered by one invocation of the adapter.
  Json Ask(const Json& request, const std::string& pythonpath = "") {
    const std::string path = scratch_.path() + "/request.json";
    Json full = request;
    full["protocol"] = 1;
    full["work_dir"] = scratch_.path();
    EXPECT_TRUE(WriteFile(path, full.dump()).ok());
    auto run = testing::RunShell((pythonpath.empty() ? "" : "PYTHONPATH=" + pythonpath + " ") + kEvaluator + " " +
                                 path + " 2>/dev/null");
    EXPECT_EQ(run.exit_code, 0) << run.out;
    try {
      return Json::parse(run.out);
    } catch (const Json::exception& e) {
      ADD_FAILURE() << "not JSON: " << run.out;
      return Json::object();
    }
  }

  // Request lines answered by one served adapter, in order.
  std::vector<Json> Serve(const std::vector<Json>& requests, const std::string& pythonpath) {
    std::string lines;
    for (Json r : requests) {
      r["protocol"] = 1;
      if (!r.contains("work_dir")) r["work_dir"] = scratch_.path();
      lines += r.dump() + "\n";
    }
    EXPECT_TRUE(WriteFile(scratch_.path() + "/lines", lines).ok());
    auto run = testing::RunShell("PYTHONPATH=" + pythonpath + " " + kEvaluator + " --serve < " + scratch_.path() +
                                 "/lines 2>/dev/null");
    EXPECT_EQ(run.exit_code, 0) << run.out;
    std::vector<Json> answers;
    size_t at = 0;
    for (size_t end; (end = run.out.find('\n', at)) != std::string::npos; at = end + 1)
      answers.push_back(Json::parse(run.out.substr(at, end - at)));
    EXPECT_EQ(answers.size(), requests.size()) << run.out;
    answers.resize(requests.size(), Json::object());
    return answers;
  }

  // The silu example as the engine sends a task, at M x N.
  Json Task(int m = 61, int n = 1000) const {
    return {{"name", "silu"},
            {"dir", kRoot + "/evaluators/triton/suite/silu"},
            {"shape", "test"},
            {"params", {{"M", m}, {"N", n}}},
            {"constants", Json::object()},
            {"inputs", {{{"name", "x"}, {"dims", {m, n}}, {"elements", m * n}, {"dist", Normal()}}}},
            {"outputs", {{{"name", "out"}, {"dims", {m, n}}, {"elements", m * n}, {"dist", Normal()}}}},
            {"tolerance", 2e-5}};
  }
  static Json Normal() { return {{"kind", "normal"}, {"a", 0}, {"b", 2}}; }

  testing::TempDir scratch_;
  int stubs_made_ = 0;
};

const char* kNoCuda = "class cuda:\n    @staticmethod\n    def is_available():\n        return False\n";

TEST_F(TritonEvaluator, DescribeWithoutTorchTritonOrADeviceSaysWhy) {
  struct Case {
    std::string torch, triton, reason;
  };
  const std::vector<Case> cases = {
      {"raise ImportError('hidden by the test')\n", "", "torch does not import here"},
      {kNoCuda, "__version__ = 'stub'\n", "no CUDA device: torch.cuda.is_available() is false"},
      {"class cuda:\n    @staticmethod\n    def is_available():\n        return True\n",
       "raise ImportError('hidden by the test')\n", "triton does not import here"},
  };
  for (const Case& c : cases) {
    Json answer = Ask({{"op", "describe"}}, Stubs(c.torch, c.triton));
    EXPECT_EQ(answer.value("protocol", 0), 1) << answer.dump();
    ASSERT_TRUE(answer.contains("error")) << answer.dump();
    EXPECT_NE(answer["error"].get<std::string>().find(c.reason), std::string::npos) << answer.dump();
  }
}

// `accelopt targets` asks the evaluator to describe itself and shows why it
// cannot run; `eval` stops with the same reason instead of a verdict.
TEST_F(TritonEvaluator, TheCommandLineNamesWhyTheTargetIsUnavailable) {
  const std::string env = "PYTHONPATH=" + Stubs(kNoCuda, "__version__ = 'stub'\n") + " ";
  auto targets = testing::RunShell(env + ACCELOPT_BINARY + " targets --evaluator '" + kEvaluator + "'");
  ASSERT_EQ(targets.exit_code, 0) << targets.out;
  EXPECT_NE(targets.out.find("external   unavailable"), std::string::npos) << targets.out;
  EXPECT_NE(targets.out.find("no CUDA device: torch.cuda.is_available() is false"), std::string::npos) << targets.out;
  auto json = testing::RunShell(env + ACCELOPT_BINARY + " targets --json --evaluator '" + kEvaluator + "'");
  ASSERT_EQ(json.exit_code, 0) << json.out;
  bool seen = false;
  for (const Json& t : Json::parse(json.out)) {
    if (t["name"] != "external") continue;
    seen = true;
    EXPECT_EQ(t["available"], false);
    EXPECT_NE(t["reason"].get<std::string>().find("no CUDA device"), std::string::npos) << t.dump();
  }
  EXPECT_TRUE(seen) << json.out;

  auto eval = testing::RunShell(env + ACCELOPT_BINARY + " eval silu " + kRoot +
                                "/evaluators/triton/suite/silu/baseline.py --suite " + kRoot +
                                "/evaluators/triton/suite --target external --evaluator '" + kEvaluator + "'");
  EXPECT_EQ(eval.exit_code, 1) << eval.out;
  EXPECT_NE(eval.out.find("no CUDA device"), std::string::npos) << eval.out;
}

// The static rules come before torch is imported: a kernel's source is
// judged on any machine.
TEST_F(TritonEvaluator, BuildJudgesTheSourceBeforeImportingAnything) {
  struct Case {
    std::string source, status, message;
  };
  const std::string body = "def kernel(x, out):\n    pass\n";
  const std::vector<Case> cases = {
      {"import subprocess\n" + body, "forbidden", "imports 'subprocess'"},
      {"from os import path\n" + body, "forbidden", "imports from 'os'"},
      {"import torch\ndef kernel(x, out):\n    torch.matmul(x, x, out=out)\n", "forbidden", "uses torch.matmul"},
      {"import torch\n" + body + "torch.cuda.synchronize = lambda: None\n", "forbidden",
       "assigns to an attribute of the module torch"},
      {"import torch\ndef kernel(x, out):\n    torch.cuda._sleep(100)\n", "forbidden", "uses torch.cuda._sleep"},
      {"import math\ndef kernel(x, out):\n    eval('1')\n", "forbidden", "uses 'eval'"},
      {"def kernel(x, out)\n    pass\n", "compile_error", "expected ':'"},
      {"import triton\n", "compile_error", "no function `kernel`"},
  };
  for (const Case& c : cases) {
    Json answer = Ask({{"op", "build"}, {"task", Task()}, {"source", c.source}});
    EXPECT_EQ(answer.value("status", ""), c.status) << c.source << answer.dump();
    EXPECT_NE(answer.value("message", "").find(c.message), std::string::npos) << c.source << answer.dump();
  }
  // A kernel that passes the rules needs torch to go further: the answer says it is missing.
  auto baseline = ReadFile(kRoot + "/evaluators/triton/suite/silu/baseline.py");
  ASSERT_TRUE(baseline.ok());
  Json answer = Ask({{"op", "build"}, {"task", Task()}, {"source", *baseline}},
                    Stubs("raise ImportError('hidden by the test')\n", ""));
  ASSERT_TRUE(answer.contains("error")) << answer.dump();
  EXPECT_NE(answer["error"].get<std::string>().find("torch does not import here"), std::string::npos);
}

// Served: one answer line per request line, in order, including requests
// outside the protocol.
TEST_F(TritonEvaluator, ServesOneAnswerPerRequestLine) {
  Json build = {{"protocol", 1},
                {"op", "build"},
                {"work_dir", scratch_.path()},
                {"task", Task()},
                {"source", "import os\ndef kernel(x, out):\n    pass\n"}};
  const std::string lines = build.dump() + "\n{\"protocol\": 2, \"op\": \"describe\"}\n" + build.dump() + "\n";
  ASSERT_TRUE(WriteFile(scratch_.path() + "/lines", lines).ok());
  auto run = testing::RunShell(kEvaluator + " --serve < " + scratch_.path() + "/lines 2>/dev/null");
  ASSERT_EQ(run.exit_code, 0) << run.out;
  std::vector<Json> answers;
  size_t at = 0;
  for (size_t end; (end = run.out.find('\n', at)) != std::string::npos; at = end + 1)
    answers.push_back(Json::parse(run.out.substr(at, end - at)));
  ASSERT_EQ(answers.size(), 3u) << run.out;
  EXPECT_EQ(answers[0]["status"], "forbidden");
  EXPECT_NE(answers[1].value("error", "").find("protocol 2"), std::string::npos) << answers[1].dump();
  EXPECT_EQ(answers[2]["status"], "forbidden");
}

// The harness's logic on testing/torch_stub (a pure-Python torch; no GPU):
// every call gets fresh inputs and NaN outputs, checked calls are judged
// against the reference, changed inputs are caught, a failing kernel's
// worker is replaced, and two kernels are timed in pairs.
TEST_F(TritonEvaluator, OnAStubTorchEveryCallIsPreparedAndJudged) {
  const std::string stub = kRoot + "/testing/torch_stub";
  const Json task = Task(3, 40);
  struct Kernel {
    std::string name, source, check, time;
  };
  const std::string silu = "    out.copy_(x / (1 + (-x).exp()))\n";
  const std::vector<Kernel> kernels = {
      {"honest", "def kernel(x, out):\n" + silu, "ok", "ok"},
      {"unwritten", "def kernel(x, out):\n    pass\n", "wrong_answer", "wrong_answer"},
      {"writes_input", "def kernel(x, out):\n" + silu + "    x.fill_(0.0)\n", "forbidden", "forbidden"},
      {"remembers",
       "_first = []\ndef kernel(x, out):\n    if not _first:\n        _first.append(x / (1 + (-x).exp()))\n"
       "    out.copy_(_first[0])\n",
       "wrong_answer", "wrong_answer"},
      {"raises", "def kernel(x, out):\n    raise ValueError('no')\n", "runtime_error", "runtime_error"},
  };
  std::vector<Json> requests;
  for (const Kernel& k : kernels) {
    const std::string dir = scratch_.path() + "/" + k.name;
    std::filesystem::create_directories(dir);
    const std::string artifact = dir + "/kernel.py";
    requests.push_back({{"op", "build"}, {"work_dir", dir}, {"task", task}, {"source", k.source}});
    requests.push_back({{"op", "check"}, {"work_dir", dir}, {"task", task}, {"artifact", artifact}, {"seeds", 3}});
    requests.push_back({{"op", "time"},
                        {"work_dir", dir},
                        {"task", task},
                        {"artifact", artifact},
                        {"min_calls", 5},
                        {"max_calls", 7},
                        {"budget_seconds", 0.01}});
  }
  const std::string honest = scratch_.path() + "/honest/kernel.py";
  Json compare = {{"op", "compare"}, {"task", task},   {"artifacts", {honest, honest}},
                  {"min_calls", 5},  {"max_calls", 7}, {"budget_seconds", 0.01}};
  requests.push_back(compare);
  compare["artifacts"] = {honest, scratch_.path() + "/remembers/kernel.py"};
  requests.push_back(compare);
  const std::vector<Json> answers = Serve(requests, stub);
  for (size_t i = 0; i < kernels.size(); ++i) {
    SCOPED_TRACE(kernels[i].name);
    const Json &build = answers[3 * i], &check = answers[3 * i + 1], &time = answers[3 * i + 2];
    EXPECT_EQ(build.value("status", ""), "ok") << build.dump();
    EXPECT_EQ(check.value("status", ""), kernels[i].check) << check.dump();
    EXPECT_EQ(time.value("status", ""), kernels[i].time) << time.dump();
    if (check.value("status", "") != "ok") {
      EXPECT_FALSE(check.value("message", "").empty()) << check.dump();
      continue;
    }
    EXPECT_EQ(check["checked_calls"], 3);
    EXPECT_LE(check["errors"]["rel_l2"].get<double>(), 2e-5);
    ASSERT_EQ(time["series"].size(), 2u) << time.dump();
    for (const Json& series : time["series"]) {
      EXPECT_GE(series.size(), 5u);
      EXPECT_LE(series.size(), 7u);
      for (const Json& seconds : series) EXPECT_GT(seconds.get<double>(), 0);
    }
    EXPECT_EQ(time["checked_calls"], 4);
  }
  EXPECT_NE(answers[4].value("message", "").find("not finite"), std::string::npos) << answers[4].dump();
  EXPECT_NE(answers[7].value("message", "").find("changed its input 'x'"), std::string::npos) << answers[7].dump();
  EXPECT_NE(answers[13].value("log", "").find("ValueError: no"), std::string::npos) << answers[13].dump();
  const Json& pairs = answers[answers.size() - 2];
  ASSERT_EQ(pairs.value("status", ""), "ok") << pairs.dump();
  EXPECT_GE(pairs["pairs"].size(), 5u);
  const Json& wrong = answers.back();
  EXPECT_EQ(wrong.value("status", ""), "runtime_error") << wrong.dump();
  EXPECT_NE(wrong.value("message", "").find("kernel B was wrong"), std::string::npos) << wrong.dump();
}

}  // namespace
}  // namespace accelopt
