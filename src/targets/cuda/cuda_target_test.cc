// The cuda target without a GPU: every suite task's baseline.cu builds with
// nvcc, a syntax error is a compile_error with its diagnostic, ptxas' report
// is kept, the harness builds, and the target says why it cannot run here.
// Each test is skipped with a message where nvcc is absent.

#include "targets/cuda/cuda_target.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "core/json_io.h"
#include "suite/task.h"
#include "targets/registry.h"

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

}  // namespace
}  // namespace accelopt::cuda
