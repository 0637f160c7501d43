// The cuda target on a GPU: every suite baseline is ok, and a kernel that
// cheats against each trust rule is not. Each test is skipped with the
// reason where the target is unavailable (no nvcc, no CUDA device).

#include <gtest/gtest.h>

#include <string>

#include "core/json_io.h"
#include "suite/task.h"
#include "targets/registry.h"
#include "testing/test_paths.h"

namespace accelopt {
namespace {

class CudaGpuTest : public ::testing::Test {
 protected:
  void SetUp() override {
    settings_.cache_dir = testing::TestHome() + "/cuda-cache";
    settings_.data_dir = testing::TestHome() + "/cuda-data";
    settings_.calibrate_if_missing = false;
    for (const auto& kind : targets::RegisteredTargets())
      if (kind.name == "cuda")
        if (std::string why = targets::WhyUnavailable(kind, settings_); !why.empty())
          GTEST_SKIP() << "the cuda target is unavailable here: " << why;
    auto target = targets::MakeTarget("cuda", settings_);
    ASSERT_TRUE(target) << target.error().message;
    target_ = std::move(*target);
  }
  Profile Evaluate(const suite::Task& task, const std::string& source, const std::string& shape = "bench") {
    targets::EvalRequest request{&task, shape, {source, "test", {}}};
    auto results = target_->Evaluate(std::span(&request, 1));
    EXPECT_TRUE(results.front()) << results.front().error().message;
    return results.front() ? *results.front() : Profile{};
  }
  suite::Task Silu() {
    auto task = suite::LoadTask(testing::SourceDir() + "/suite/silu");
    EXPECT_TRUE(task) << task.error().message;
    return *task;
  }

  targets::TargetSettings settings_;
  std::unique_ptr<targets::Target> target_;
};

TEST_F(CudaGpuTest, EveryBaselineIsOk) {
  auto tasks = suite::LoadSuite(testing::SourceDir() + "/suite");
  ASSERT_TRUE(tasks) << tasks.error().message;
  for (const suite::Task& task : *tasks) {
    auto source = target_->Baseline(task);
    ASSERT_TRUE(source) << source.error().message;
    Profile p = Evaluate(task, *source);
    EXPECT_EQ(p.status, Verdict::kOk) << task.name << ": " << p.message << "\n" << p.run_log;
  }
}

// The project's own split-KV decode kernel is ok on both decode tasks, and
// faster than their naive baselines.
TEST_F(CudaGpuTest, OwnDecodeKernelIsOkAndBeatsTheBaseline) {
  auto source = ReadFile(testing::SourceDir() + "/kernels/cuda/gqa_paged_decode_split.cu");
  ASSERT_TRUE(source) << source.error().message;
  for (const char* name : {"gqa_paged_decode_h32_kv4_d128_ps1", "gqa_paged_decode_h32_kv8_d128_ps1"}) {
    auto task = suite::LoadTask(testing::SourceDir() + "/suite/" + name);
    ASSERT_TRUE(task) << task.error().message;
    for (const char* shape : {"test", "bench"}) {
      Profile p = Evaluate(*task, *source, shape);
      EXPECT_EQ(p.status, Verdict::kOk) << name << " " << shape << ": " << p.message << "\n" << p.run_log;
    }
    Profile own = Evaluate(*task, *source);
    Profile baseline = Evaluate(*task, *target_->Baseline(*task));
    ASSERT_TRUE(own.latency && baseline.latency) << name;
    EXPECT_LT(own.latency->median_s, baseline.latency->median_s) << name;
  }
}

const char* kSiluBody = R"(
__global__ void silu(const float* x, float* out, long n) {
  const long i = blockIdx.x * static_cast<long>(blockDim.x) + threadIdx.x;
  if (i < n) out[i] = x[i] / (1.0f + expf(-x[i]));
}
)";

// Side stream and early return: the work, plus 2 ms of spinning, on a stream
// of its own, never waited for. Timing covers every stream until the device is idle.
TEST_F(CudaGpuTest, SideStreamAndEarlyReturnGainNothing) {
  const std::string source = std::string(kSiluBody) + R"(
__global__ void spin(long long cycles) {
  const long long start = clock64();
  while (clock64() - start < cycles) {}
}
extern "C" void kernel(const float* x, float* out, cudaStream_t) {
  static cudaStream_t side = nullptr;
  if (!side) cudaStreamCreateWithFlags(&side, cudaStreamNonBlocking);
  silu<<<(M * N + 255) / 256, 256, 0, side>>>(x, out, M * N);
  spin<<<1, 1, 0, side>>>(4000000LL);  // ~2 ms at 2 GHz
}
)";
  const suite::Task task = Silu();
  Profile p = Evaluate(task, source);
  ASSERT_EQ(p.status, Verdict::kOk) << p.message << "\n" << p.run_log;
  ASSERT_TRUE(p.latency);
  EXPECT_GT(p.latency->median_s, 1.5e-3) << "work left running on a side stream was not timed";
}

// Caching: computes once, then copies what it kept.
// Skipping the flush: the kernel marks its input persisting in L2 (an
// access-policy window on its stream), so that the harness's flush would not
// evict it and the next call would read it from L2. The harness resets
// persisting lines before every flush: the kernel gains nothing over the
// same kernel without the window (silu's bench input, 14.7 MB, fits in an
// H100's 50 MB L2, so a kept input would be read several times faster).
TEST_F(CudaGpuTest, PersistingL2LinesDoNotSurviveTheFlush) {
  const std::string plain = std::string(kSiluBody) + R"(
extern "C" void kernel(const float* x, float* out, cudaStream_t stream) {
  silu<<<(M * N + 255) / 256, 256, 0, stream>>>(x, out, M * N);
}
)";
  const std::string persisting = std::string(kSiluBody) + R"(
extern "C" void kernel(const float* x, float* out, cudaStream_t stream) {
  cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, 32 << 20);
  cudaStreamAttrValue window = {};
  window.accessPolicyWindow.base_ptr = const_cast<float*>(x);
  window.accessPolicyWindow.num_bytes = M * N * sizeof(float);
  window.accessPolicyWindow.hitRatio = 1.0f;
  window.accessPolicyWindow.hitProp = cudaAccessPropertyPersisting;
  window.accessPolicyWindow.missProp = cudaAccessPropertyPersisting;
  cudaStreamSetAttribute(stream, cudaStreamAttributeAccessPolicyWindow, &window);
  silu<<<(M * N + 255) / 256, 256, 0, stream>>>(x, out, M * N);
}
)";
  const suite::Task task = Silu();
  Profile honest = Evaluate(task, plain);
  Profile cheat = Evaluate(task, persisting);
  ASSERT_EQ(honest.status, Verdict::kOk) << honest.message;
  ASSERT_EQ(cheat.status, Verdict::kOk) << cheat.message;
  ASSERT_TRUE(honest.latency && cheat.latency);
  EXPECT_GT(cheat.latency->median_s, 0.8 * honest.latency->median_s)
      << "persisting lines outlived the flush: " << cheat.latency->median_s << " s against " << honest.latency->median_s
      << " s";
}

TEST_F(CudaGpuTest, CachingAcrossCallsIsWrong) {
  const std::string source = std::string(kSiluBody) + R"(
extern "C" void kernel(const float* x, float* out, cudaStream_t stream) {
  static float* kept = nullptr;
  if (!kept) {
    cudaMalloc(&kept, M * N * sizeof(float));
    silu<<<(M * N + 255) / 256, 256, 0, stream>>>(x, kept, M * N);
  }
  cudaMemcpyAsync(out, kept, M * N * sizeof(float), cudaMemcpyDeviceToDevice, stream);
}
)";
  const suite::Task task = Silu();
  Profile p = Evaluate(task, source);
  EXPECT_EQ(p.status, Verdict::kWrongAnswer) << p.message;
}

TEST_F(CudaGpuTest, WritingNothingIsWrong) {
  const suite::Task task = Silu();
  Profile p = Evaluate(task, "extern \"C\" void kernel(const float*, float*, cudaStream_t) {}\n");
  EXPECT_EQ(p.status, Verdict::kWrongAnswer) << p.message;
}

TEST_F(CudaGpuTest, ModifyingInputsIsWrong) {
  const std::string source = std::string(kSiluBody) + R"(
__global__ void scribble(float* x) { x[0] = 0.0f; }
extern "C" void kernel(const float* x, float* out, cudaStream_t stream) {
  silu<<<(M * N + 255) / 256, 256, 0, stream>>>(x, out, M * N);
  scribble<<<1, 1, 0, stream>>>(const_cast<float*>(x));
}
)";
  const suite::Task task = Silu();
  Profile p = Evaluate(task, source);
  EXPECT_EQ(p.status, Verdict::kWrongAnswer) << p.message;
  EXPECT_NE(p.message.find("inputs"), std::string::npos) << p.message;
}

TEST_F(CudaGpuTest, OutOfBoundsWriteIsARuntimeErrorOrWrong) {
  const suite::Task task = Silu();
  Profile p =
      Evaluate(task,
               "__global__ void bad(float* out) { out[1L << 40] = 1.0f; }\n"
               "extern \"C\" void kernel(const float*, float* out, cudaStream_t s) { bad<<<1, 1, 0, s>>>(out); }\n",
               "test");
  EXPECT_NE(p.status, Verdict::kOk) << p.message;
}

// A write just past the output (16 KiB: compute-sanitizer memcheck saw no
// error for it on an H100, and without the canary it landed in the next
// allocation) is a runtime error naming the output.
TEST_F(CudaGpuTest, AWriteJustPastTheOutputIsCaughtByItsCanary) {
  const suite::Task task = Silu();
  Profile p = Evaluate(task,
                       "__global__ void past(const float* x, float* out, long n) {\n"
                       "  const long i = blockIdx.x * static_cast<long>(blockDim.x) + threadIdx.x;\n"
                       "  if (i < n) out[i] = x[i] / (1.0f + expf(-x[i]));\n"
                       "  else if (i < n + 4096) out[i] = 0.0f;\n"
                       "}\n"
                       "extern \"C\" void kernel(const float* x, float* out, cudaStream_t s) {\n"
                       "  past<<<(M * N + 4096 + 255) / 256, 256, 0, s>>>(x, out, M * N);\n"
                       "}\n",
                       "test");
  EXPECT_EQ(p.status, Verdict::kRuntimeError) << p.message;
  EXPECT_NE(p.message.find("past the end of output 'out'"), std::string::npos) << p.message;
}

}  // namespace
}  // namespace accelopt
