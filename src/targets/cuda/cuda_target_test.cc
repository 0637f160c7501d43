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

#include <unistd.h>

#include "core/json_io.h"
#include "core/paths.h"
#include "eval/perturb_bits.h"
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
  if (!why.empty()) {
    EXPECT_TRUE(why.rfind("nvcc", 0) == 0 || why.rfind("no CUDA device", 0) == 0) << why;
  }
}

// A device layer that needs neither nvcc nor a GPU. It "builds" a candidate
// by keeping its source, and "runs" the harness as its monitor would: it
// reads the plan, the base sets and the tables the target wrote, derives each
// call's inputs with perturb_bits as the device does, and reports on the two
// descriptors it is given what harness.cu reports, with silu's outputs
// computed on the CPU (or wrong ones, or past an output, or changed late).
class CpuDeviceLayer : public DeviceLayer {
 public:
  enum class Behaviour { kRight, kWrong, kWrongWhenChecked, kOverflow, kChangedAfter, kLate, kStray };
  Behaviour behaviour = Behaviour::kRight;
  int sanitizer_errors = 0;  // what compute-sanitizer "finds", when the run is under it
  std::function<void()> on_run;  // called as each run starts
  std::vector<eval::SandboxRequest> runs;
  std::vector<std::string> plans;  // each run's plan, as it read it
  bool inputs_left = false;        // a plan, set or table was left where the kernel could read it

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
    auto text = ReadFile((dir / request.argv.back()).string());
    if (!text) return text.error();
    plans.push_back(*text);
    std::istringstream plan(*text);
    std::string key;
    long elements = 0, sets = 0, returned = 0, timed_from = 0, checks = 0;
    uint32_t flip = 0;
    struct Call {
      long set = 0;
      int perturbed = 0;
      uint32_t lo = 0, hi = 0;
    };
    std::vector<Call> calls;
    while (plan >> key) {
      if (key == "inputs" || key == "outputs") {
        long count = 0;
        plan >> count >> elements;  // silu: one input, one output, as large
      } else if (key == "flip") {
        plan >> flip;
      } else if (key == "sets") {
        std::string file;
        plan >> sets >> file;
      } else if (key == "call") {
        Call c;
        plan >> c.set >> c.perturbed >> c.lo >> c.hi;
        calls.push_back(c);
      } else if (key == "returned" || key == "timed_from" || key == "checks") {
        plan >> (key == "returned" ? returned : key == "timed_from" ? timed_from : checks);
      } else {
        std::string rest;
        std::getline(plan, rest);
      }
    }
    std::vector<float> base(static_cast<size_t>(sets * elements));
    std::ifstream(dir / "sets.bin", std::ios::binary)
        .read(reinterpret_cast<char*>(base.data()), static_cast<std::streamsize>(base.size() * sizeof(float)));
    // The monitor deletes what it read before the kernel's process starts.
    for (const char* f : {"sets.bin", "tables.bin"}) fs::remove(dir / f);
    fs::remove(dir / request.argv.back());
    std::string result = "device Fake GPU sm_90 52428800\nhandshake_ns 3000\nempty_launch_ns 9000\nprobe_ns 4000 10000\n";
    std::vector<float> kept;
    const long last_checks_from = static_cast<long>(calls.size()) - checks;
    for (size_t c = 0; c < calls.size(); ++c) {
      if (behaviour == Behaviour::kStray && c == 4) result += "stray 4 900000\n";
      result += "call " + std::to_string(c) + " " + std::to_string(23000 + 7 * static_cast<long>(c)) + "\n";  // ns
      if (behaviour == Behaviour::kLate && static_cast<long>(c) >= timed_from) result += "late " + std::to_string(c) + " 1000000\n";
      if (behaviour == Behaviour::kOverflow && c == 1) result += "canary " + std::to_string(c) + " 0\n";
      if (behaviour == Behaviour::kChangedAfter && c == 5) result += "changed_after 5\n";
      const bool checked = static_cast<long>(c) >= std::max(timed_from, last_checks_from);
      if (checked) result += "checked " + std::to_string(c) + "\n";
      if (static_cast<long>(c) >= returned && !checked) continue;
      for (long i = 0; i < elements; ++i) {
        uint32_t bits = 0;
        std::memcpy(&bits, &base[static_cast<size_t>(calls[c].set * elements + i)], 4);
        bits = perturb_bits::Perturbed(bits, i, calls[c].lo, calls[c].hi, calls[c].perturbed ? flip : 0u);
        float x = 0;
        std::memcpy(&x, &bits, 4);
        const bool wrong = behaviour == Behaviour::kWrong || (behaviour == Behaviour::kWrongWhenChecked && checked);
        kept.push_back(wrong ? x : x / (1.0f + std::exp(-x)));
      }
    }
    result += "done\n";
    if (::write(request.inherit_fds.at(0), result.data(), result.size()) != static_cast<ssize_t>(result.size()) ||
        ::write(request.inherit_fds.at(1), kept.data(), kept.size() * sizeof(float)) !=
            static_cast<ssize_t>(kept.size() * sizeof(float)))
      return Error{"cannot write the fake harness's report"};
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

// The real harness, built with nvcc, on a machine without a GPU: it reads the
// plan, the base sets and the tables the engine wrote for a float32 task and
// for one with bf16 and int32 inputs, finds their sizes as the plan says,
// deletes them before anything else could run, and only then fails, at the
// device. Skipped where nvcc is missing, or where a GPU would run it all.
TEST(CudaHarnessWithoutGpu, ReadsTheEnginesPlanAndInputsUpToTheDevice) {
  if (FindNvcc().empty()) GTEST_SKIP() << "nvcc is not here";
  if (FindDevice()) GTEST_SKIP() << "a GPU is here: the GPU tests run the harness to its end";
  testing::TempDir home;
  testing::ScopedEnv lock_dir("ACCELOPT_LOCK_DIR", home.path());
  targets::TargetSettings settings;
  settings.cache_dir = home.path() + "/cache";
  settings.data_dir = home.path() + "/data";
  auto options = OptionsFor(settings, Device{"Fake GPU", 9, 0, 50 << 20});
  ASSERT_TRUE(options) << options.error().message;
  options->keep_work = true;
  options->work_dir = home.path() + "/work";
  auto target = MakeCudaTarget(*options);
  for (const char* name : {"silu", "gqa_paged_decode_h32_kv4_d128_ps1"}) {
    auto task = suite::LoadTask(std::string(ACCELOPT_SOURCE_DIR) + "/suite/" + name);
    ASSERT_TRUE(task) << task.error().message;
    auto baseline = target->Baseline(*task);
    ASSERT_TRUE(baseline) << baseline.error().message;
    targets::EvalRequest request{&*task, "test", {*baseline, "baseline", {}}};
    auto results = target->Evaluate(std::span(&request, 1));
    ASSERT_FALSE(results.front()) << name << ": ran without a GPU";
    const std::string& why = results.front().error().message;
    EXPECT_NE(why.find("the cuda harness failed:"), std::string::npos) << why;
    EXPECT_NE(why.find("after reading its plan: 35 calls, 3 sets of"), std::string::npos) << why;
    EXPECT_EQ(why.find("cannot read"), std::string::npos) << why;
    for (const auto& entry : fs::recursive_directory_iterator(options->work_dir))
      for (const char* left : {"plan.txt", "sets.bin", "tables.bin"})
        EXPECT_NE(entry.path().filename(), left) << entry.path();
  }
}

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
  // Calls of 23000 + 7c ns less the handshake's 3000: nanoseconds survive,
  // not rounded to microseconds.
  EXPECT_GT(p.latency->median_s, 20.0e-6);
  EXPECT_LT(p.latency->median_s, 21.0e-6);
  EXPECT_TRUE(p.handshake_subtracted);
  EXPECT_NE(std::fmod(p.latency->median_s * 1e9, 1000.0), 0.0) << p.latency->median_s;
  EXPECT_DOUBLE_EQ(p.handshake_seconds, 3e-6);
  EXPECT_NE(p.message.find("not scored"), std::string::npos) << p.message;
}

// What the kernel's process could read tells it nothing: the harness gets
// only the library and the plan's name (its reports go to two anonymous
// files, no path), and the plan names no checked call: the monitor draws
// them after they ran, every timed call derived alike from a set and a key.
TEST_F(CudaWithoutGpuTest, ThePlanNamesNoCheckedCallAndTheReportsHaveNoPath) {
  Profile p = Evaluate();
  ASSERT_EQ(p.status, Verdict::kOk) << p.message;
  const eval::SandboxRequest& run = layer_->runs.front();
  ASSERT_EQ(run.argv.size(), 3u);
  EXPECT_EQ(run.argv[2], "plan.txt");
  EXPECT_EQ(run.inherit_fds.size(), 2u);
  const std::string& plan = layer_->plans.front();
  EXPECT_NE(plan.find("\nchecks 3\n"), std::string::npos) << plan;
  EXPECT_EQ(plan.find("checked"), std::string::npos) << plan;
  long perturbed = 0, plain = 0;
  std::istringstream in(plan);
  for (std::string line; std::getline(in, line);) {
    std::istringstream words(line);
    std::string key;
    int set = 0, is_perturbed = 0;
    if (words >> key >> set >> is_perturbed && key == "call") (is_perturbed ? perturbed : plain) += 1;
  }
  EXPECT_EQ(plain, options_.seeds);
  EXPECT_EQ(perturbed, options_.warmup_calls + options_.timed_calls);
}

// Outputs right on the correctness calls and wrong on the timed calls the
// monitor chose to check: their reference runs afterwards, on the inputs the
// device derived, and finds it.
TEST_F(CudaWithoutGpuTest, AKernelWrongOnlyWhenCheckedIsAWrongAnswer) {
  layer_->behaviour = CpuDeviceLayer::Behaviour::kWrongWhenChecked;
  Profile p = Evaluate();
  EXPECT_EQ(p.status, Verdict::kWrongAnswer) << p.message;
  EXPECT_NE(p.message.find("timed call"), std::string::npos) << p.message;
}

// GPU work the monitor's probe found still running after a call answered is
// the call's: added to its time.
TEST_F(CudaWithoutGpuTest, LateWorkIsAddedToTheCallsTime) {
  layer_->behaviour = CpuDeviceLayer::Behaviour::kLate;
  Profile p = Evaluate();
  ASSERT_EQ(p.status, Verdict::kOk) << p.message;
  ASSERT_TRUE(p.latency);
  EXPECT_GT(p.latency->median_s, 1.0e-3);
  EXPECT_NE(p.conditions.find("added (30 of 30 calls"), std::string::npos) << p.conditions;
}

// Outputs that changed after the monitor took them, and GPU work running
// while the kernel's process was stopped, are runtime errors that say so.
TEST_F(CudaWithoutGpuTest, WorkAfterTheCallOrBetweenCallsIsARuntimeError) {
  layer_->behaviour = CpuDeviceLayer::Behaviour::kChangedAfter;
  Profile changed = Evaluate();
  EXPECT_EQ(changed.status, Verdict::kRuntimeError);
  EXPECT_NE(changed.message.find("changed its outputs after its call had returned"), std::string::npos)
      << changed.message;
  layer_->behaviour = CpuDeviceLayer::Behaviour::kStray;
  Profile stray = Evaluate();
  EXPECT_EQ(stray.status, Verdict::kRuntimeError);
  EXPECT_NE(stray.message.find("while the kernel's process was stopped between calls"), std::string::npos)
      << stray.message;
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
