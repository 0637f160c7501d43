// The cuda target without a GPU: every suite task's baseline.cu builds with
// nvcc, a syntax error is a compile_error with its diagnostic, ptxas' report
// is kept, the harness builds, and the target says why it cannot run here.
// Each test is skipped with a message where nvcc is absent.
// Then everything of the target that needs no device, with the device layer
// replaced by one that computes on the CPU: the reference, the inputs and plan
// written for the harness, the judging of what it wrote, the device lock.

#include "targets/cuda/cuda_target.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <future>
#include <mutex>
#include <sstream>

#include "core/json_io.h"
#include "core/paths.h"
#include "suite/task.h"
#include "targets/registry.h"
#include "testing/cpu_test_target.h"
#include "testing/scoped_env.h"
#include "testing/temp_dir.h"

namespace accelopt::cuda {
namespace {

namespace fs = std::filesystem;

class CudaBuildTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (FindNvcc().empty()) GTEST_SKIP() << "nvcc is not on $PATH or in /usr/local/cuda/bin: nothing to build";
    dir_ = fs::temp_directory_path() / ("accelopt-cuda-test-" + std::to_string(getpid()));
    fs::create_directories(dir_);
    options_.work_dir = (dir_ / "work").string();
    options_.nvcc.cache_dir = (dir_ / "build").string();
    target_ = MakeCudaTarget(options_);
  }
  void TearDown() override {
    std::error_code ec;
    if (!dir_.empty()) fs::remove_all(dir_, ec);
  }
  Profile BuildOne(const suite::Task& task, const std::string& source) {
    targets::EvalRequest request{&task, "bench", {source, "test", {}}};
    auto built = target_->Build(std::span(&request, 1));
    EXPECT_TRUE(built.front()) << built.front().error().message;
    return built.front() ? (*built.front())->BuildProfile() : Profile{};
  }

  fs::path dir_;
  CudaTargetOptions options_;
  std::unique_ptr<targets::Target> target_;
};

TEST_F(CudaBuildTest, EveryCudaBaselineBuilds) {
  auto tasks = suite::LoadSuite(std::string(ACCELOPT_SOURCE_DIR) + "/suite");
  ASSERT_TRUE(tasks) << tasks.error().message;
  ASSERT_EQ(tasks->size(), 18u);  // the fourteen workloads and four paged-attention tasks
  for (const suite::Task& task : *tasks) {
    ASSERT_TRUE(target_->Supports(task)) << task.name << " has no baseline.cu";
    auto source = target_->Baseline(task);
    ASSERT_TRUE(source) << source.error().message;
    Profile p = BuildOne(task, *source);
    EXPECT_EQ(p.status, Verdict::kOk) << task.name << ": " << p.message << "\n" << p.compile_log;
    EXPECT_NE(p.register_report.find("registers"), std::string::npos) << task.name << ": " << p.register_report;
  }
}

TEST_F(CudaBuildTest, SyntaxErrorIsCompileErrorWithDiagnostic) {
  auto task = suite::LoadTask(std::string(ACCELOPT_SOURCE_DIR) + "/suite/silu");
  ASSERT_TRUE(task) << task.error().message;
  Profile p = BuildOne(*task, "extern \"C\" void kernel(const float* x, float* out, cudaStream_t s) { int y = ; }\n");
  EXPECT_EQ(p.status, Verdict::kCompileError);
  EXPECT_NE(p.compile_log.find("kernel.cu"), std::string::npos) << p.compile_log;
  EXPECT_NE(p.compile_log.find("error"), std::string::npos) << p.compile_log;
}

TEST_F(CudaBuildTest, PtxasReportIsKeptApartFromTheLog) {
  auto task = suite::LoadTask(std::string(ACCELOPT_SOURCE_DIR) + "/suite/silu");
  ASSERT_TRUE(task) << task.error().message;
  auto source = ReadFile(task->baseline_path(kCudaExtension));
  ASSERT_TRUE(source);
  Profile p = BuildOne(*task, *source);
  ASSERT_EQ(p.status, Verdict::kOk) << p.compile_log;
  EXPECT_NE(p.register_report.find("Used"), std::string::npos) << p.register_report;
  EXPECT_NE(p.register_report.find("spill"), std::string::npos) << p.register_report;
  EXPECT_EQ(p.compile_log.find("ptxas info"), std::string::npos) << p.compile_log;
  // Built again: from the cache, with the same report.
  Profile again = BuildOne(*task, *source);
  EXPECT_TRUE(again.compile_cached);
  EXPECT_EQ(again.register_report, p.register_report);
}

// The project's own decode kernel (kernels/cuda) builds for both decode tasks,
// within the registers that let four warps per block keep many blocks resident.
TEST_F(CudaBuildTest, OwnDecodeKernelBuildsForBothDecodeTasks) {
  auto source = ReadFile(std::string(ACCELOPT_SOURCE_DIR) + "/kernels/cuda/gqa_paged_decode_split.cu");
  ASSERT_TRUE(source) << source.error().message;
  for (const char* name : {"gqa_paged_decode_h32_kv4_d128_ps1", "gqa_paged_decode_h32_kv8_d128_ps1"}) {
    auto task = suite::LoadTask(std::string(ACCELOPT_SOURCE_DIR) + "/suite/" + name);
    ASSERT_TRUE(task) << task.error().message;
    Profile p = BuildOne(*task, *source);
    ASSERT_EQ(p.status, Verdict::kOk) << name << ": " << p.compile_log;
    // ptxas' line after the function's name: "N bytes stack frame, N bytes spill stores, ...".
    const size_t at = p.register_report.find("Function properties for _Z12split_decode");
    ASSERT_NE(at, std::string::npos) << p.register_report;
    const size_t line = p.register_report.find('\n', at) + 1;
    const std::string frame = p.register_report.substr(line, p.register_report.find('\n', line) - line);
    EXPECT_NE(frame.find(" 0 bytes spill stores, 0 bytes spill loads"), std::string::npos) << name << ": " << frame;
  }
}

TEST_F(CudaBuildTest, HarnessBuilds) {
  auto harness = BuildHarness(options_.nvcc);
  ASSERT_TRUE(harness) << harness.error().message;
  EXPECT_TRUE(fs::exists(*harness));
}

TEST(CudaToolchain, PtxasReportSplit) {
  std::string rest;
  const std::string report = SplitPtxasReport(
      "kernel.cu(3): warning: unused\n"
      "ptxas info    : 0 bytes gmem\n"
      "ptxas info    : Function properties for _Z4silu\n"
      "    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
      "ptxas info    : Used 10 registers, used 0 barriers, 368 bytes cmem[0]\n",
      &rest);
  EXPECT_EQ(rest, "kernel.cu(3): warning: unused\n");
  EXPECT_NE(report.find("spill stores"), std::string::npos);
  EXPECT_NE(report.find("Used 10 registers"), std::string::npos);
  EXPECT_EQ(report.find("gmem"), std::string::npos);
}

TEST(CudaToolchain, ArchOfTheDevice) {
  EXPECT_EQ((Device{"H100", 9, 0, 0}).Arch(), "sm_90a");
  EXPECT_EQ((Device{"A100", 8, 0, 0}).Arch(), "sm_80");
}

TEST(CudaRegistration, ListedWithWhyItCannotRunHere) {
  const targets::TargetKind* cuda = nullptr;
  for (const auto& kind : targets::RegisteredTargets())
    if (kind.name == "cuda") cuda = &kind;
  ASSERT_NE(cuda, nullptr);
  const std::string why = targets::WhyUnavailable(*cuda, targets::TargetSettings{});
  if (FindNvcc().empty())
    EXPECT_EQ(why, "nvcc is not on $PATH or in /usr/local/cuda/bin");
  else if (!FindDevice())
    EXPECT_EQ(why, FindDevice().error().message);
  else
    EXPECT_EQ(why, "");
  if (!why.empty()) EXPECT_TRUE(why.rfind("nvcc", 0) == 0 || why.rfind("no CUDA device", 0) == 0) << why;
}

// A device layer that needs neither nvcc nor a GPU. It "builds" a candidate
// by keeping its source, and "runs" the harness by reading the plan and the
// input slots the target wrote and writing what harness.cu writes, with
// silu's outputs computed on the CPU (or wrong ones, or past an output).
class CpuDeviceLayer : public DeviceLayer {
 public:
  enum class Behaviour { kRight, kWrong, kOverflow };
  Behaviour behaviour = Behaviour::kRight;
  int sanitizer_errors = 0;  // what compute-sanitizer "finds", when the run is under it
  std::function<void()> on_run;  // called as each run starts
  std::vector<eval::SandboxRequest> runs;

  Result<NvccOutcome> Compile(const std::string& source, const std::string&, const NvccOptions&,
                              const std::string& scratch_dir) override {
    const fs::path dir = fs::path(scratch_dir) / "fake-build";
    fs::create_directories(dir);
    if (auto s = WriteFile((dir / "kernel.cu").string(), source); !s) return s.error();
    if (auto s = WriteFile((dir / "kernel.so").string(), ""); !s) return s.error();
    NvccOutcome out;
    out.ok = true;
    out.library_path = (dir / "kernel.so").string();
    return out;
  }
  Result<std::string> Harness(const NvccOptions&) override { return std::string("fake-cuda-harness"); }

  Result<eval::SandboxOutcome> Run(const eval::SandboxRequest& request) override {
    if (on_run) on_run();
    runs.push_back(request);
    const fs::path dir = request.workdir;
    const size_t n = request.argv.size();
    std::ifstream plan(dir / request.argv[n - 3]);
    std::string key, slots_file;
    long slots = 0, elements = 0;
    std::vector<long> calls;
    while (plan >> key) {
      if (key == "inputs" || key == "outputs") {
        long count = 0;
        plan >> count;
        for (long i = 0; i < count; ++i) plan >> elements;  // silu: one input, one output, as large
      } else if (key == "slots") {
        plan >> slots >> slots_file;
      } else if (key == "calls") {
        long count = 0;
        plan >> count;
        calls.resize(static_cast<size_t>(count));
        for (long& c : calls) plan >> c;
      } else {
        std::string rest;
        std::getline(plan, rest);
      }
    }
    std::vector<float> inputs(static_cast<size_t>(slots * elements));
    std::ifstream(dir / slots_file, std::ios::binary)
        .read(reinterpret_cast<char*>(inputs.data()), static_cast<std::streamsize>(inputs.size() * sizeof(float)));
    std::ofstream result(dir / request.argv[n - 2]);
    std::ofstream outputs(dir / request.argv[n - 1], std::ios::binary);
    result << "device Fake GPU sm_90 52428800\nhandshake_ns 3000\nempty_launch_ns 9000\n";
    for (size_t c = 0; c < calls.size(); ++c) {
      result << "call " << c << " " << 20000 + 7 * static_cast<long>(c) << "\n";  // ns
      if (behaviour == Behaviour::kOverflow && c == 1) result << "canary " << c << " 0\n";
      if (calls[c] < 0) continue;
      std::vector<float> out(static_cast<size_t>(elements));
      for (long i = 0; i < elements; ++i) {
        const float x = inputs[static_cast<size_t>(calls[c] * elements + i)];
        out[static_cast<size_t>(i)] = behaviour == Behaviour::kWrong ? x : x / (1.0f + std::exp(-x));
      }
      outputs.write(reinterpret_cast<const char*>(out.data()),
                    static_cast<std::streamsize>(out.size() * sizeof(float)));
    }
    result << "done\n";
    eval::SandboxOutcome outcome;
    outcome.exit_code = 0;
    if (request.argv.front().ends_with("compute-sanitizer")) {
      if (sanitizer_errors) outcome.err = "========= Invalid __global__ write of size 4 bytes\n";
      outcome.err += "========= ERROR SUMMARY: " + std::to_string(sanitizer_errors) + " errors\n";
      if (sanitizer_errors) outcome.exit_code = 3;
    }
    return outcome;
  }
};

class CudaWithoutGpuTest : public ::testing::Test {
 protected:
  void SetUp() override {
    settings_.cache_dir = home_.path() + "/cache";
    settings_.data_dir = home_.path() + "/data";
    auto options = OptionsFor(settings_, Device{"Fake GPU", 9, 0, 50 << 20});
    ASSERT_TRUE(options) << options.error().message;
    options_ = *options;
    options_.device_layer = layer_;
    auto task = suite::LoadTask(std::string(ACCELOPT_SOURCE_DIR) + "/suite/silu");
    ASSERT_TRUE(task) << task.error().message;
    task_ = *task;
  }
  Profile Evaluate(const std::string& shape = "test") {
    auto target = MakeCudaTarget(options_);
    targets::EvalRequest request{&task_, shape, {"// any kernel\n", "test", {}}};
    auto results = target->Evaluate(std::span(&request, 1));
    EXPECT_TRUE(results.front()) << results.front().error().message;
    return results.front() ? *results.front() : Profile{};
  }

  testing::TempDir home_;
  testing::ScopedEnv lock_dir_{"ACCELOPT_LOCK_DIR", home_.path()};
  targets::TargetSettings settings_;
  CudaTargetOptions options_;
  std::shared_ptr<CpuDeviceLayer> layer_ = std::make_shared<CpuDeviceLayer>();
  suite::Task task_;
};

// The options the registration makes the target with start the CPU reference
// in a harness that exists: an empty path once made every cuda evaluation
// fail with "cannot start : execute failed", unseen by any test without a GPU.
TEST_F(CudaWithoutGpuTest, TheReferenceHarnessIsNamed) {
  EXPECT_EQ(options_.reference.run.harness_path, HarnessPath());
  EXPECT_TRUE(fs::exists(options_.reference.run.harness_path)) << options_.reference.run.harness_path;
}

// The whole evaluation but the device: the reference is built and run on the
// CPU, the inputs and the plan are written, the outputs the "device" wrote
// are judged right and the latencies read back at full resolution.
TEST_F(CudaWithoutGpuTest, RightOutputsAreOkWithTheirLatency) {
  Profile p = Evaluate();
  ASSERT_EQ(p.status, Verdict::kOk) << p.message << "\n" << p.run_log;
  ASSERT_EQ(layer_->runs.size(), 1u);
  EXPECT_EQ(layer_->runs.front().argv.front(), "fake-cuda-harness");
  ASSERT_TRUE(p.errors);
  EXPECT_EQ(p.checked_calls, options_.checked_calls);
  ASSERT_TRUE(p.latency);
  // Calls of 20000 + 7c ns: nanoseconds survive, not rounded to microseconds.
  EXPECT_GT(p.latency->median_s, 20.0e-6);
  EXPECT_NE(std::fmod(p.latency->median_s * 1e9, 1000.0), 0.0) << p.latency->median_s;
  EXPECT_DOUBLE_EQ(p.handshake_seconds, 3e-6);
  EXPECT_NE(p.message.find("not scored"), std::string::npos) << p.message;
}

// Without --shape the cuda target evaluates a task at its gpu shape (sized
// above launch overhead), bench where the task has none; the cpu target at bench.
TEST_F(CudaWithoutGpuTest, TheDefaultShapeIsGpuWhereTheTaskHasOneAndBenchOnTheCpu) {
  auto target = MakeCudaTarget(options_);
  ASSERT_TRUE(task_.shapes.count("gpu"));
  EXPECT_EQ(target->DefaultShape(task_), "gpu");
  suite::Task without = task_;
  without.shapes.erase("gpu");
  EXPECT_EQ(target->DefaultShape(without), "bench");
  testing::TempDir scratch;
  auto cpu = cpu::MakeCpuTarget(testing::TestTargetOptions(scratch));
  EXPECT_EQ(cpu->DefaultShape(task_), "bench");
  EXPECT_EQ(cpu->DefaultShape(without), "bench");
}

TEST_F(CudaWithoutGpuTest, WrongOutputsAreAWrongAnswer) {
  layer_->behaviour = CpuDeviceLayer::Behaviour::kWrong;
  Profile p = Evaluate();
  EXPECT_EQ(p.status, Verdict::kWrongAnswer) << p.message;
}

// A write past an output lands in the canary the harness keeps after it, and
// is a runtime error naming the output.
TEST_F(CudaWithoutGpuTest, AWritePastAnOutputIsARuntimeError) {
  layer_->behaviour = CpuDeviceLayer::Behaviour::kOverflow;
  Profile p = Evaluate();
  EXPECT_EQ(p.status, Verdict::kRuntimeError);
  EXPECT_NE(p.message.find("past the end of output 'out' (call 2)"), std::string::npos) << p.message;
}

// ACCELOPT_CUDA_MEMCHECK leaves evidence: the profile says the sanitizer ran
// over the correctness calls and what it found, in its JSON too.
TEST_F(CudaWithoutGpuTest, MemcheckLeavesEvidenceInTheProfile) {
  testing::ScopedEnv memcheck("ACCELOPT_CUDA_MEMCHECK", "1");
  auto options = OptionsFor(settings_, Device{"Fake GPU", 9, 0, 50 << 20});
  ASSERT_TRUE(options) << options.error().message;
  ASSERT_TRUE(options->memcheck);
  options_.memcheck = true;
  Profile p = Evaluate();
  ASSERT_EQ(p.status, Verdict::kOk) << p.message;
  ASSERT_EQ(layer_->runs.size(), 2u);
  EXPECT_TRUE(layer_->runs.front().argv.front().ends_with("compute-sanitizer"));
  EXPECT_NE(p.sanitizer.find("memcheck ran over the 3 correctness calls: ERROR SUMMARY: 0 errors"), std::string::npos)
      << p.sanitizer;
  EXPECT_NE(p.message.find("ERROR SUMMARY: 0 errors"), std::string::npos) << p.message;
  auto back = ProfileFromJson(p.ToJson());
  ASSERT_TRUE(back) << back.error().message;
  EXPECT_EQ(back->sanitizer, p.sanitizer);

  layer_->sanitizer_errors = 2;
  Profile bad = Evaluate();
  EXPECT_EQ(bad.status, Verdict::kRuntimeError);
  EXPECT_NE(bad.sanitizer.find("ERROR SUMMARY: 2 errors"), std::string::npos) << bad.sanitizer;
  EXPECT_NE(bad.sanitizer.find("Invalid __global__ write"), std::string::npos) << bad.sanitizer;
}

// The device is locked for the evaluation: while another process holds it,
// the harness does not run, and it runs once the device is released.
TEST_F(CudaWithoutGpuTest, EvaluatesUnderTheDeviceLock) {
  auto held = eval::DeviceLock::Acquire("cuda:0", "a test", {});
  ASSERT_TRUE(held) << held.error().message;
  std::promise<void> waiting;
  std::once_flag told;
  options_.on_device_wait = [&](const std::string&, double) { std::call_once(told, [&] { waiting.set_value(); }); };
  std::atomic<bool> released = false, ran_while_held = false;
  layer_->on_run = [&] { ran_while_held = ran_while_held || !released; };
  auto evaluated = std::async(std::launch::async, [&] { return Evaluate(); });
  ASSERT_EQ(waiting.get_future().wait_for(std::chrono::seconds(60)), std::future_status::ready)
      << "the evaluation did not wait for the device";
  released = true;
  held->reset();
  Profile p = evaluated.get();
  EXPECT_EQ(p.status, Verdict::kOk) << p.message;
  EXPECT_FALSE(ran_while_held);
}

}  // namespace
}  // namespace accelopt::cuda
