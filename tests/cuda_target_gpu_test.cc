// The cuda target on a GPU: every suite baseline is ok, and a kernel that
// cheats against each trust rule is not. Each test is skipped with the
// reason where the target is unavailable (no nvcc, no CUDA device).

#include <gtest/gtest.h>

#include <cstdio>
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
 public:
  targets::Target& target() { return *target_; }
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

// A kernel of the project's own (kernels/cuda/FILE) is ok on `tasks` at the
// test and bench shapes, and faster than each task's naive baseline at the
// target's default shape.
void ExpectOwnKernelOkAndFaster(CudaGpuTest& test, const std::string& file, std::initializer_list<const char*> tasks) {
  auto source = ReadFile(testing::SourceDir() + "/kernels/cuda/" + file);
  ASSERT_TRUE(source) << source.error().message;
  for (const char* name : tasks) {
    auto task = suite::LoadTask(testing::SourceDir() + "/suite/" + name);
    ASSERT_TRUE(task) << task.error().message;
    for (const char* shape : {"test", "bench"}) {
      Profile p = test.Evaluate(*task, *source, shape);
      EXPECT_EQ(p.status, Verdict::kOk) << name << " " << shape << ": " << p.message << "\n" << p.run_log;
    }
    const std::string shape = test.target().DefaultShape(*task);
    Profile own = test.Evaluate(*task, *source, shape);
    Profile baseline = test.Evaluate(*task, *test.target().Baseline(*task), shape);
    ASSERT_TRUE(own.latency && baseline.latency) << name;
    EXPECT_LT(own.latency->median_s, baseline.latency->median_s) << name;
  }
}

TEST_F(CudaGpuTest, OwnDecodeKernelIsOkAndBeatsTheBaseline) {
  ExpectOwnKernelOkAndFaster(*this, "gqa_paged_decode_split.cu",
                             {"gqa_paged_decode_h32_kv4_d128_ps1", "gqa_paged_decode_h32_kv8_d128_ps1"});
}

TEST_F(CudaGpuTest, OwnPrefillKernelIsOkAndBeatsTheBaseline) {
  ExpectOwnKernelOkAndFaster(*this, "gqa_paged_prefill_causal.cu",
                             {"gqa_paged_prefill_causal_h32_kv4_d128_ps1", "gqa_paged_prefill_causal_h32_kv8_d128_ps1"});
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

// The four kernels that were accepted as ok on an H100 by the harness that
// ran in the kernel's own process, one per class, each against the same
// honest work: silu plus 0.5 ms of spinning (so that what a cheat saves is
// far above the noise of the handshake). Each must be caught or gain nothing.
const char* kHonestSlowSilu = R"(
#include <cstdio>
#include <thread>
#include <atomic>
#include <mutex>
#include <condition_variable>
#include <chrono>
__global__ void silu(const float* x, float* out, long n) {
  const long i = blockIdx.x * static_cast<long>(blockDim.x) + threadIdx.x;
  if (i < n) out[i] = x[i] / (1.0f + expf(-x[i]));
}
__global__ void spin(long long cycles) {
  const long long start = clock64();
  while (clock64() - start < cycles) {}
}
static void Work(const float* x, float* out, cudaStream_t s) {
  spin<<<1, 1, 0, s>>>(1000000LL);
  silu<<<(M * N + 255) / 256, 256, 0, s>>>(x, out, M * N);
}
)";

class CudaCheatTest : public CudaGpuTest {
 protected:
  // The honest kernel's latency, once per test.
  double Honest() {
    Profile p = Evaluate(Silu(), std::string(kHonestSlowSilu) +
                                     "extern \"C\" void kernel(const float* x, float* out, cudaStream_t s) { "
                                     "Work(x, out, s); }\n");
    EXPECT_EQ(p.status, Verdict::kOk) << p.message << "\n" << p.run_log;
    return p.latency ? p.latency->median_s : 0;
  }
  // Caught, or no faster than 0.8 of the honest kernel.
  void ExpectCaughtOrNoGain(const std::string& cheat_body) {
    const double honest = Honest();
    Profile p = Evaluate(Silu(), std::string(kHonestSlowSilu) + cheat_body);
    if (p.status == Verdict::kOk) {
      ASSERT_TRUE(p.latency);
      EXPECT_GT(p.latency->median_s, 0.8 * honest)
          << "the cheat gained: " << p.latency->median_s << " s against " << honest << " s\n"
          << p.conditions;
    }
    std::printf("[ cheat    ] %s: %s, %s (honest %s)\n", ::testing::UnitTest::GetInstance()->current_test_info()->name(),
                VerdictName(p.status), p.latency ? std::to_string(p.latency->median_s).c_str() : "-",
                std::to_string(honest).c_str());
    last_ = p;
  }
  Profile last_;
};

// 1. A host thread of the kernel's own does the work right after kernel()
// returns (the first calls compute honestly).
TEST_F(CudaCheatTest, WorkLaunchedByAThreadAfterTheReturnIsTimedOrWrong) {
  ExpectCaughtOrNoGain(R"(
static std::mutex m;
static std::condition_variable cv;
static const float* px; static float* pout; static int pending = 0;
static void Later() {
  cudaStream_t side;
  cudaStreamCreateWithFlags(&side, cudaStreamNonBlocking);
  for (;;) {
    std::unique_lock<std::mutex> lock(m);
    cv.wait(lock, [] { return pending > 0; });
    pending = 0;
    lock.unlock();
    Work(px, pout, side);
    cudaStreamSynchronize(side);
  }
}
extern "C" void kernel(const float* x, float* out, cudaStream_t s) {
  static int calls = 0;
  if (calls++ < 3) { Work(x, out, s); return; }
  static std::thread* later = new std::thread(Later);
  (void)later;
  { std::lock_guard<std::mutex> lock(m); px = x; pout = out; pending = 1; }
  cv.notify_one();
}
)");
}

// 2. Telling checked calls from timed ones by the time since the last return,
// and computing only on the calls that look checked.
TEST_F(CudaCheatTest, TellingCheckedCallsByTheGapGainsNothing) {
  ExpectCaughtOrNoGain(R"(
extern "C" void kernel(const float* x, float* out, cudaStream_t s) {
  using clock = std::chrono::steady_clock;
  static clock::time_point last;
  static int calls = 0;
  static double longest = 0;
  const double gap = calls ? std::chrono::duration<double>(clock::now() - last).count() : 0;
  if (calls < 3 || gap > 1.5 * longest) {
    if (calls >= 1 && calls < 3) longest = gap > longest ? gap : longest;
    Work(x, out, s);
    cudaStreamSynchronize(s);
  }
  ++calls;
  last = clock::now();
}
)");
}

// 3. Reading the harness's plan (and its inputs) from the working folder or
// the one above it, to know which calls are checked; and saying what it finds.
TEST_F(CudaCheatTest, TheKernelsFolderHoldsNoPlanAndNoInputs) {
  ExpectCaughtOrNoGain(R"(
#include <dirent.h>
#include <unistd.h>
static bool ListedCheck(int call) {
  for (const char* path : {"plan.txt", "../plan.txt", "sets.bin", "../sets.bin", "tables.bin", "../tables.bin"}) {
    FILE* f = fopen(path, "r");
    if (f) { fprintf(stderr, "cheat: could read %s\n", path); fclose(f); return true; }
  }
  return call < 3;
}
extern "C" void kernel(const float* x, float* out, cudaStream_t s) {
  static int calls = 0;
  if (calls == 0)
    for (const char* dir : {".", ".."}) {
      if (DIR* d = opendir(dir)) {
        while (dirent* e = readdir(d)) fprintf(stderr, "cheat: sees %s/%s\n", dir, e->d_name);
        closedir(d);
      }
    }
  if (ListedCheck(calls++)) Work(x, out, s);
}
)");
  EXPECT_EQ(last_.run_log.find("cheat: could read"), std::string::npos) << last_.run_log;
  for (const char* name : {"plan.txt", "sets.bin", "tables.bin", "result.txt", "outputs.bin"})
    EXPECT_EQ(last_.run_log.find(std::string("/") + name + "\n"), std::string::npos) << name << "\n" << last_.run_log;
}

// 4. Rewriting what the monitor reports: its result file, or its descriptors
// through /proc (the monitor's and the engine's), from kernel() and from a
// destructor; honest otherwise.
TEST_F(CudaCheatTest, NothingTheMonitorReportsCanBeRewritten) {
  ExpectCaughtOrNoGain(R"(
#include <fcntl.h>
#include <unistd.h>
#include <cerrno>
#include <cstring>
#include <string>
static void Forge() {
  std::string paths[] = {"result.txt", "../result.txt", "/proc/" + std::to_string(getppid()) + "/fd/3",
                         "/proc/" + std::to_string(getppid()) + "/mem"};
  for (const std::string& p : paths) {
    const int fd = open(p.c_str(), O_WRONLY | O_APPEND);
    if (fd < 0) { fprintf(stderr, "cheat: cannot open %s: %s\n", p.c_str(), strerror(errno)); continue; }
    fprintf(stderr, "cheat: opened %s\n", p.c_str());
    std::string lines;
    for (int c = 0; c < 40; ++c) lines += "call " + std::to_string(c) + " 1000\n";
    (void)!write(fd, lines.data(), lines.size());
    close(fd);
  }
}
struct OnExit { ~OnExit() { Forge(); } } on_exit;
extern "C" void kernel(const float* x, float* out, cudaStream_t s) {
  static int calls = 0;
  if (calls++ == 10) Forge();
  Work(x, out, s);
}
)");
  EXPECT_EQ(last_.run_log.find("cheat: opened"), std::string::npos) << last_.run_log;
}

}  // namespace
}  // namespace accelopt
