// Every way a kernel can misbehave ends as a status in its profile, never as a
// crash, hang or leak of the engine.

#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <signal.h>
#include <sys/ipc.h>
#include <sys/shm.h>
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "core/json_io.h"
#include "eval/sandbox.h"
#include "suite/task.h"
#include "targets/cpu/register.h"
#include "testing/cpu_test_target.h"

namespace accelopt {
namespace {

const std::string kScaleTask = std::string(ACCELOPT_SOURCE_DIR) + "/tests/fixtures/scale";

// A kernel from tests/bad_kernels/ (empty when missing: the evaluation then fails to compile).
std::string BadKernelSource(const std::string& file) {
  auto source = ReadFile(std::string(ACCELOPT_SOURCE_DIR) + "/tests/bad_kernels/" + file);
  EXPECT_TRUE(source.ok()) << file;
  return source.ok() ? *source : "";
}

struct Case {
  std::string file;
  Verdict expected;
  std::string message_part;  // must appear in the profile's message
};

std::ostream& operator<<(std::ostream& os, const Case& c) { return os << c.file; }

class BadKernel : public ::testing::TestWithParam<Case> {
 protected:
  static void SetUpTestSuite() {
    auto task = suite::LoadTask(kScaleTask);
    ASSERT_TRUE(task.ok()) << task.error().message;
    task_ = new suite::Task(*task);
  }
  static void TearDownTestSuite() { delete task_; }

  Result<Profile> Evaluate(const std::string& file, double wall_seconds = 10, int series = 1) {
    std::string source = BadKernelSource(file);
    cpu::CpuTargetOptions options = testing::TestTargetOptions(scratch_);
    options.wall_seconds = wall_seconds;
    if (series > 1) {  // no spread is small enough: every series runs, each of 50 calls
      options.timing.max_series = series;
      // Below zero, not zero: calls so short that the clock cannot tell them
      // apart have a spread of exactly 0, which would end the series early.
      options.timing.spread_tolerance = -1;
      options.timing.min_calls = options.timing.max_calls = 50;
    }
    auto target = cpu::MakeCpuTarget(options);
    targets::EvalRequest request{task_, "test", {source, file, {}}};
    return std::move(target->Evaluate({&request, 1})[0]);
  }

  static suite::Task* task_;
  testing::TempDir scratch_;
};
suite::Task* BadKernel::task_ = nullptr;

// Processes left behind by an evaluation (a fork bomb's children, a hung
// child): anything still running inside this test's scratch folder. (Tests
// run in parallel, so other tests' children are not counted.)
int StrayProcesses(const std::string& scratch) {
  int count = 0;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator("/proc", ec)) {
    auto cwd = std::filesystem::read_symlink(entry.path() / "cwd", ec);
    if (!ec && cwd.string().rfind(scratch, 0) == 0) ++count;
  }
  return count;
}

TEST_P(BadKernel, EndsWithExpectedStatus) {
  const Case& c = GetParam();
  auto profile = Evaluate(c.file, 3);
  ASSERT_TRUE(profile.ok()) << profile.error().message;
  EXPECT_EQ(VerdictName(profile->status), std::string(VerdictName(c.expected)))
      << profile->message << "\n"
      << profile->run_log << profile->compile_log;
  EXPECT_NE(profile->message.find(c.message_part), std::string::npos) << profile->message;
  EXPECT_LE(profile->run_log.size(), 70u << 10) << "logs must be truncated";
  EXPECT_EQ(StrayProcesses(scratch_.path()), 0);
}

// The table of tests/bad_kernels/verdicts.yaml, which the conformance suite
// checks on every target too: each kernel, the verdict it must get and a part
// of the message that must say why. Its rows that name a test of their own
// (below: their outcome depends on the machine's load, or on a longer
// timing) are not in the table.
std::vector<Case> TableCases() {
  std::vector<Case> cases;
  try {
    for (const YAML::Node& row :
         YAML::LoadFile(std::string(ACCELOPT_SOURCE_DIR) + "/tests/bad_kernels/verdicts.yaml")) {
      if (row["test"]) continue;
      auto verdict = VerdictFromName(row["verdict"].as<std::string>());
      if (!verdict) throw std::runtime_error("no verdict named " + row["verdict"].as<std::string>());
      cases.push_back({row["file"].as<std::string>(), *verdict, row["message"].as<std::string>()});
    }
  } catch (const std::exception& e) {
    ADD_FAILURE() << "tests/bad_kernels/verdicts.yaml: " << e.what();
  }
  return cases;
}

INSTANTIATE_TEST_SUITE_P(Evaluator, BadKernel, ::testing::ValuesIn(TableCases()),
                         [](const auto& info) { return info.param.file.substr(0, info.param.file.find('.')); });

// Issue 24: kernels that attack the machine rather than the harness. Each
// turns what it reached into a wrong answer, so `ok` means it reached nothing:
// not the engine's memory (class 2), not the scheduling of another process
// (class 3), not the engine's folders (class 5).
TEST_F(BadKernel, ReachesNothingOutsideItsSandbox) {
  if (!eval::ProbeIsolation().full())
    GTEST_SKIP() << "this machine does not isolate kernels (" << eval::ProbeIsolation().refused
                 << "); CliBadInput.AnOrdinaryUsersEngineIsIsolatedOrCallsNoResultOk covers that case";
  for (const char* file : {"reads_engine_memory.cpp", "moves_other_processes.cpp"}) {
    auto profile = Evaluate(file);
    ASSERT_TRUE(profile.ok()) << file << ": " << profile.error().message;
    EXPECT_EQ(VerdictName(profile->status), std::string("ok")) << file << ": " << profile->message << "\n"
                                                               << profile->run_log;
  }
}

// Issue 24, class 3, side by side: in `compare` each side is in a sandbox of
// its own, so a kernel that tries to re-schedule every process it can see
// (started second, it sees the first side's harness if anything) reaches
// nothing, and the comparison stands.
TEST_F(BadKernel, TheOtherSideOfAComparisonIsOutOfReach) {
  if (!eval::ProbeIsolation().full()) GTEST_SKIP() << "this machine does not isolate kernels";
  auto target = cpu::MakeCpuTarget(testing::TestTargetOptions(scratch_));
  targets::EvalRequest a{task_, "test", {BadKernelSource("honest_openmp.cpp"), "honest", {}}};
  targets::EvalRequest b{task_, "test", {BadKernelSource("moves_other_processes.cpp"), "mover", {}}};
  auto paired = target->Compare(a, b);
  ASSERT_TRUE(paired.ok()) << paired.error().message;
  EXPECT_EQ(VerdictName(paired->a.status), std::string("ok")) << paired->a.message;
  EXPECT_EQ(VerdictName(paired->b.status), std::string("ok")) << paired->b.message << "\n" << paired->b.run_log;
  EXPECT_TRUE(paired->speedup.has_value()) << "the two were compared side by side";
}

// Issue 24, class 5: System V shared memory is refused (shmget is not among
// the calls a kernel may make), and none is left behind (were it allowed, its
// IPC namespace would end with the evaluation: Isolated.SystemVSharedMemoryDiesWithIt).
TEST_F(BadKernel, SystemVSharedMemoryIsRefusedAndNoneOutlivesIt) {
  if (!eval::ProbeIsolation().full()) GTEST_SKIP() << "this machine does not isolate kernels";
  constexpr key_t kKey = 0x41435a31;                                        // leaves_sysv_shm.cpp's
  if (int id = shmget(kKey, 0, 0); id >= 0) shmctl(id, IPC_RMID, nullptr);  // an earlier build's leftover
  auto profile = Evaluate("leaves_sysv_shm.cpp");
  ASSERT_TRUE(profile.ok()) << profile.error().message;
  EXPECT_EQ(VerdictName(profile->status), std::string("forbidden")) << profile->message << "\n" << profile->run_log;
  const int left = shmget(kKey, 0, 0);
  if (left >= 0) shmctl(left, IPC_RMID, nullptr);
  EXPECT_LT(left, 0) << "the kernel's System V shared memory outlived its evaluation";
}

// Issue 24, class 5: a file it would leave for a later evaluation cannot be
// created (opening for writing is refused), so none is left.
TEST_F(BadKernel, AFileItCreatesIsRefusedAndNoneIsLeft) {
  const char* left = "/tmp/accelopt-left-by-a-kernel";  // leaves_a_file.cpp's
  std::filesystem::remove(left);
  auto profile = Evaluate("leaves_a_file.cpp");
  ASSERT_TRUE(profile.ok()) << profile.error().message;
  EXPECT_EQ(VerdictName(profile->status), std::string("forbidden")) << profile->message << "\n" << profile->run_log;
  EXPECT_NE(profile->message.find("openat: open a file"), std::string::npos) << profile->message;
  EXPECT_FALSE(std::filesystem::exists(left)) << "the kernel's file outlived its evaluation";
}

TEST_F(BadKernel, CloseButWrongReportsTheError) {
  auto profile = Evaluate("close_but_wrong.cpp");
  ASSERT_TRUE(profile.ok());
  ASSERT_TRUE(profile->errors.has_value());
  EXPECT_NEAR(profile->errors->rel_l2, 1e-3, 1e-4);
}

TEST_F(BadKernel, FloodedLogIsTruncatedAndKept) {
  auto profile = Evaluate("stdout_flood.cpp", 2);
  ASSERT_TRUE(profile.ok());
  EXPECT_NE(profile->run_log.find("flooding the log"), std::string::npos);
  EXPECT_NE(profile->run_log.find("truncated"), std::string::npos);
}

TEST_F(BadKernel, HonestKernelIsTimedAndScored) {
  auto profile = Evaluate("honest_openmp.cpp");
  ASSERT_TRUE(profile.ok());
  ASSERT_EQ(profile->status, Verdict::kOk) << profile->message << profile->run_log;
  ASSERT_TRUE(profile->latency.has_value());
  EXPECT_GT(profile->latency->median_s, 0);
  EXPECT_GE(profile->latency->calls, 5);
  EXPECT_GT(profile->percent_of_peak, 0);
  EXPECT_EQ(profile->bound, "memory");
  EXPECT_EQ(profile->errors->rel_l2, 0);
  // Every compilation keeps its vectorization remarks for the planner.
  EXPECT_NE(profile->vectorization_report.find("vectorized"), std::string::npos);
}

// A cache by content is right, so only the timing can tell it hit: every timed
// call sees fresh inputs, so none does, and the kernel is timed at its real speed.
TEST_F(BadKernel, CachingByContentGainsNothing) {
  auto profile = Evaluate("caches_by_content.cpp");
  ASSERT_TRUE(profile.ok());
  ASSERT_EQ(profile->status, Verdict::kOk) << profile->message << profile->run_log;
  ASSERT_TRUE(profile->latency.has_value());
  EXPECT_GE(profile->latency->min_s, 0.002) << "a timed call was answered from the cache";
  EXPECT_NE(profile->message.find("checked timed calls"), std::string::npos) << profile->message;
}

// Each series has checked calls of its own, drawn once each call returned;
// the reference runs on their inputs after the series.
TEST_F(BadKernel, EverySeriesIsChecked) {
  auto honest = Evaluate("honest_openmp.cpp", 10, 3);
  ASSERT_TRUE(honest.ok());
  ASSERT_EQ(honest->status, Verdict::kOk) << honest->message;
  // A disturbed series is measured again, up to disturbed_retries more.
  EXPECT_GE(honest->latency->series, 3);
  EXPECT_LE(honest->latency->series, 3 + std::min(honest->disturbed_series, cpu::TimingOptions{}.disturbed_retries));
  // Two checked calls in every series run, a series measured again included.
  EXPECT_NE(honest->message.find("and " + std::to_string(2 * honest->latency->series) + " checked timed calls"),
            std::string::npos)
      << honest->message;

  auto cheat = Evaluate("garbage_in_later_series.cpp", 10, 3);
  ASSERT_TRUE(cheat.ok());
  EXPECT_EQ(cheat->status, Verdict::kWrongAnswer) << cheat->message;
  EXPECT_NE(cheat->message.find("of series 2, with fresh inputs"), std::string::npos) << cheat->message;
}

// Work left to a thread after the return gains nothing. Either it misses the
// outputs, which the monitor takes once the process stopped (wrong answer); or
// its CPU time outside the calls gives it away (wrong answer); or, when the
// stop comes late on a busy machine, it is done before the stop and so inside
// the timed call; or the leftover thread is caught making a system call while
// the harness has signals blocked (forbidden). Which one depends on the
// machine's load; none of them is an untimed ok.
TEST_F(BadKernel, WorkAfterTheReturnIsMissedOrTimed) {
  for (const char* file : {"finishes_in_background.cpp", "writes_after_return.cpp"}) {
    auto profile = Evaluate(file);
    ASSERT_TRUE(profile.ok()) << profile.error().message;
    if (profile->status == Verdict::kOk) {
      ASSERT_TRUE(profile->latency.has_value());
      EXPECT_GE(profile->latency->min_s, 0.002) << file << ": work after the return went untimed";
      continue;
    }
    EXPECT_TRUE(profile->status == Verdict::kWrongAnswer || profile->status == Verdict::kForbidden)
        << file << ": " << VerdictName(profile->status) << ": " << profile->message;
    const bool explained = profile->message.find("(seed ") != std::string::npos ||
                           profile->message.find("kept computing after returning") != std::string::npos ||
                           profile->message.find("forbidden system call") != std::string::npos;
    EXPECT_TRUE(explained) << file << ": " << profile->message;
  }
}

// A kernel that marks its call done in the control memory halfway through its
// 2 ms of work gains nothing: the monitor times a call until it sees the
// process stopped, which only the harness does after the kernel returned, so
// the forged mark only makes it look for the stop sooner.
TEST_F(BadKernel, ForgingTheReturnGainsNothing) {
  auto profile = Evaluate("forges_done.cpp");
  ASSERT_TRUE(profile.ok()) << profile.error().message;
  ASSERT_EQ(profile->status, Verdict::kOk) << profile->message;
  ASSERT_TRUE(profile->latency.has_value());
  EXPECT_GE(profile->latency->min_s, 0.002) << "a forged return shortened a timed call";
}

// A thread that marks the next call done the moment the harness marks this
// one, racing the stop: when it wins, the monitor finds "done" changed while
// the process was stopped (forbidden); when it loses, nothing was forged and
// the calls are timed as they are (at least the 20 us the kernel waits for
// its thread). Never a call timed as instant.
TEST_F(BadKernel, PreAcknowledgingIsCaughtOrGainsNothing) {
  auto profile = Evaluate("pre_acknowledges.cpp", 10, 3);
  ASSERT_TRUE(profile.ok()) << profile.error().message;
  if (profile->status == Verdict::kOk) {
    ASSERT_TRUE(profile->latency.has_value());
    EXPECT_GE(profile->latency->min_s, 10e-6) << "a pre-acknowledged call was timed as instant";
  } else {
    EXPECT_EQ(profile->status, Verdict::kForbidden) << profile->message;
    EXPECT_NE(profile->message.find("control memory"), std::string::npos) << profile->message;
  }
}

// Every call is prepared and collected the same way, so the time between
// calls says nothing about which were checked: a kernel that computes only
// after an unusually long gap cheats on nearly every call, checked ones
// included. (Run for three series: each checks two calls at random, and a
// kernel that cheats on a fraction f of its calls passes one with (1 - f)^2.)
TEST_F(BadKernel, GapsBetweenCallsTellNothing) {
  auto profile = Evaluate("detects_checked_by_gap.cpp", 10, 3);
  ASSERT_TRUE(profile.ok()) << profile.error().message;
  EXPECT_EQ(profile->status, Verdict::kWrongAnswer) << profile->message;
  EXPECT_NE(profile->message.find("timed call"), std::string::npos) << profile->message;
}

TEST_F(BadKernel, CompileErrorKeepsTheDiagnostics) {
  auto profile = Evaluate("syntax_error.cpp");
  ASSERT_TRUE(profile.ok());
  EXPECT_NE(profile->compile_log.find("expected primary-expression"), std::string::npos) << profile->compile_log;
}

// A kernel that would read a file at compile time is a compile_error,
// refused before the file's lines reach the log.
TEST_F(BadKernel, ReadingAFileAtCompileTimeIsRefused) {
  for (const char* file : {"includes_passwd.cpp", "incbin_passwd.cpp"}) {
    auto profile = Evaluate(file);
    ASSERT_TRUE(profile.ok()) << profile.error().message;
    EXPECT_EQ(profile->status, Verdict::kCompileError) << file << ": " << profile->message;
    EXPECT_NE(profile->message.find("refused before compiling"), std::string::npos) << profile->message;
    EXPECT_EQ(profile->compile_log.find("root:"), std::string::npos) << profile->compile_log;
  }
}

TEST_F(BadKernel, MissingHarnessIsAnErrorNotAVerdict) {
  cpu::CpuTargetOptions options = testing::TestTargetOptions(scratch_);
  options.harness_path = "/nonexistent/accelopt-harness";
  auto target = cpu::MakeCpuTarget(options);
  targets::EvalRequest request{task_, "test", {"extern \"C\" void kernel(const float*, float*) {}", "x", {}}};
  auto result = target->Evaluate({&request, 1});
  ASSERT_FALSE(result[0].ok());
  EXPECT_NE(result[0].error().message.find("cannot start /nonexistent/accelopt-harness: execute failed"),
            std::string::npos)
      << result[0].error().message;
}

// A correct kernel scored against rates a thousand times too low looks faster
// than the hardware: that is never "ok".
TEST(Suspect, FasterThanTheRooflineIsNotTrusted) {
  auto task = suite::LoadTask(kScaleTask);
  ASSERT_TRUE(task.ok());
  testing::TempDir scratch;
  cpu::CpuTargetOptions options = testing::TestTargetOptions(scratch);
  options.rates = {1e-6, 1e-6, 1e-6};
  auto target = cpu::MakeCpuTarget(options);
  auto source = ReadFile(kScaleTask + "/baseline.cpp");
  targets::EvalRequest request{&*task, "test", {*source, "baseline", {}}};
  auto profile = std::move(target->Evaluate({&request, 1})[0]);
  ASSERT_TRUE(profile.ok()) << profile.error().message;
  EXPECT_EQ(profile->status, Verdict::kSuspect) << profile->message;
  EXPECT_GT(profile->percent_of_peak, 100);
  EXPECT_NE(profile->message.find("not trusted"), std::string::npos);
  EXPECT_EQ(profile->ToJson()["status"], "suspect");
}

// An honest kernel faster than a calibrated rate that was a little low is
// evidence, not guilt: measured again, it stays ok and its claim is told as
// evidence (the kernel's hash with it) for the next calibration, but no rate
// moves (issue 24, "moving the yardstick"). Far beyond what the calibration
// could have missed, it is suspect.
class BeyondPeak : public ::testing::Test {
 protected:
  void SetUp() override {
    auto task = suite::LoadTask(kScaleTask);
    ASSERT_TRUE(task.ok());
    task_ = std::move(*task);
    source_ = *ReadFile(kScaleTask + "/baseline.cpp");
    // What the kernel achieves here, scored against generous rates.
    auto first = Evaluate(testing::TestTargetOptions(scratch_));
    ASSERT_EQ(first.status, Verdict::kOk) << first.message;
    achieved_gbs_ = first.achieved_gbs;
    ASSERT_GT(achieved_gbs_, 0);
  }
  Profile Evaluate(cpu::CpuTargetOptions options) {
    auto target = cpu::MakeCpuTarget(options);
    targets::EvalRequest request{&task_, "test", {source_, "baseline", {}}};
    auto profile = std::move(target->Evaluate({&request, 1})[0]);
    EXPECT_TRUE(profile.ok()) << profile.error().message;
    return profile.ok() ? *profile : Profile{};
  }
  // A profile calibrated at `bandwidth`, with generous arithmetic rates.
  cpu::CpuTargetOptions Calibrated(double bandwidth) {
    cpu::CpuTargetOptions options = testing::TestTargetOptions(scratch_);
    options.rates = {bandwidth, 1e6, 1e6};
    cpu::HardwareProfile h;
    h.bandwidth_gbs = bandwidth;
    h.peak_mm_gflops = h.peak_vec_gflops = 1e6;
    h.theoretical_mm_gflops = h.theoretical_vec_gflops = 2e6;
    h.spreads = {{"bandwidth", 0.01}};
    options.hardware = h;
    options.on_beyond_calibration = [this](const cpu::PeakEvidence& e) { evidence_.push_back(e); };
    return options;
  }
  testing::TempDir scratch_;
  suite::Task task_;
  std::string source_;
  double achieved_gbs_ = 0;
  std::vector<cpu::PeakEvidence> evidence_;
};

TEST_F(BeyondPeak, ACorrectKernelBeyondACalibratedRateIsEvidenceNotANewRate) {
  // A rate far below what the kernel reached (its calls last microseconds, so
  // a busy machine can slow them severalfold); the allowance covers it.
  const double calibrated = 0.01 * achieved_gbs_;
  cpu::CpuTargetOptions options = Calibrated(calibrated);
  options.raise_allowance = 1e4;
  auto target = cpu::MakeCpuTarget(options);
  for (int round = 0; round < 2; ++round) {
    targets::EvalRequest request{&task_, "test", {source_, "baseline", {}}};
    auto result = std::move(target->Evaluate({&request, 1})[0]);
    ASSERT_TRUE(result.ok()) << result.error().message;
    const Profile& profile = *result;
    ASSERT_EQ(profile.status, Verdict::kOk) << profile.message;
    EXPECT_GT(profile.percent_of_peak, 100.0);
    EXPECT_NE(profile.message.find("evidence for the next `accelopt calibrate`"), std::string::npos) << profile.message;
    // The second evaluation is scored against the same calibrated rate: nothing moved it.
    ASSERT_TRUE(profile.scored_against.has_value());
    EXPECT_EQ(profile.scored_against->bandwidth_gbs, calibrated);
  }
  ASSERT_EQ(evidence_.size(), 2u);
  const cpu::PeakEvidence& e = evidence_[0];
  EXPECT_EQ(e.figure, "bandwidth");
  EXPECT_EQ(e.task, task_.name);
  EXPECT_EQ(e.kernel_hash.size(), 64u);  // SHA-256
  EXPECT_GT(e.value, e.previous);
  EXPECT_EQ(e.previous, calibrated);
  EXPECT_EQ(evidence_[1].previous, calibrated);
}

// Issue 24, class 4: a kernel just past the roofline, evaluation after
// evaluation, through the target as the registry builds it (its saved profile
// under the data folder): the saved profile is never written, and every
// evaluation scores against the calibrated rate.
TEST_F(BeyondPeak, NoEvaluationWritesTheSavedHardwareProfile) {
  testing::TempDir data;
  targets::TargetSettings settings;
  settings.data_dir = data.path();
  settings.cache_dir = scratch_.path() + "/cache";
  settings.calibrate_if_missing = false;
  std::vector<std::string> said;
  settings.say = [&](const std::string& line) { said.push_back(line); };
  const double calibrated = 0.01 * achieved_gbs_;
  cpu::CpuTargetOptions options = Calibrated(calibrated);
  options.raise_allowance = 1e4;
  // What the registry tells of such a kernel (OptionsFor), on the test's target.
  auto registered = cpu::OptionsFor(settings, options.hardware);
  ASSERT_TRUE(registered.ok()) << registered.error().message;
  options.on_beyond_calibration = registered->on_beyond_calibration;
  auto target = cpu::MakeCpuTarget(options);
  for (int round = 0; round < 2; ++round) {
    targets::EvalRequest request{&task_, "test", {source_, "baseline", {}}};
    auto result = std::move(target->Evaluate({&request, 1})[0]);
    ASSERT_TRUE(result.ok()) << result.error().message;
    ASSERT_EQ(result->status, Verdict::kOk) << result->message;
    ASSERT_TRUE(result->scored_against.has_value());
    EXPECT_EQ(result->scored_against->bandwidth_gbs, calibrated);
  }
  EXPECT_FALSE(std::filesystem::exists(data.path() + "/hardware")) << "an evaluation wrote the hardware profile";
  ASSERT_FALSE(said.empty());
  EXPECT_NE(said[0].find("run `accelopt calibrate`"), std::string::npos) << said[0];
}

TEST_F(BeyondPeak, FarBeyondWhatTheCalibrationCouldMissIsSuspect) {
  cpu::CpuTargetOptions options = Calibrated(1e-4 * achieved_gbs_);
  const Profile profile = Evaluate(options);
  EXPECT_EQ(profile.status, Verdict::kSuspect) << profile.message;
  EXPECT_NE(profile.message.find("measured twice faster than the roofline"), std::string::npos) << profile.message;
  EXPECT_TRUE(evidence_.empty());
}

// Timed on the bench shape, checked on the test shape as well.
TEST(OtherShapes, SpecialCasingTheTimedShapeIsCaught) {
  auto task = suite::LoadTask(kScaleTask);
  ASSERT_TRUE(task.ok());
  testing::TempDir scratch;
  auto target = cpu::MakeCpuTarget(testing::TestTargetOptions(scratch));
  for (const char* file : {"special_cases_shape.cpp", "honest_openmp.cpp"}) {
    targets::EvalRequest request{&*task, "bench", {BadKernelSource(file), file, {}}};
    auto profile = std::move(target->Evaluate({&request, 1})[0]);
    ASSERT_TRUE(profile.ok()) << profile.error().message;
    if (std::string(file) == "honest_openmp.cpp") {
      EXPECT_EQ(profile->status, Verdict::kOk) << profile->message;
      continue;
    }
    EXPECT_EQ(profile->status, Verdict::kWrongAnswer) << profile->message;
    EXPECT_NE(profile->message.find("on shape 'test' with inputs scaled x3"), std::string::npos) << profile->message;
  }
}

// Requests for the same task and shape share inputs and reference outputs;
// each is still judged on its own, and reported as soon as it is measured.
TEST(Batch, SharesInputsAndReferenceNotVerdicts) {
  auto task = suite::LoadTask(kScaleTask);
  ASSERT_TRUE(task.ok());
  testing::TempDir scratch;
  auto target = cpu::MakeCpuTarget(testing::TestTargetOptions(scratch));
  std::vector<targets::EvalRequest> requests = {
      {&*task, "test", {BadKernelSource("honest_openmp.cpp"), "a", {}}},
      {&*task, "test", {BadKernelSource("replays_output_when_timed.cpp"), "b", {}}},
      {&*task, "test", {BadKernelSource("modify_input.cpp"), "c", {}}},
      {&*task, "bench", {BadKernelSource("honest_openmp.cpp"), "d", {}}},
  };
  std::vector<size_t> reported;
  auto results = target->Evaluate(requests, [&](size_t i, const Result<Profile>& r) {
    EXPECT_TRUE(r.ok());
    reported.push_back(i);
  });
  EXPECT_EQ(reported, (std::vector<size_t>{0, 1, 2, 3}));
  ASSERT_EQ(results.size(), 4u);
  for (const auto& r : results) ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(results[0]->status, Verdict::kOk) << results[0]->message;
  EXPECT_EQ(results[1]->status, Verdict::kWrongAnswer) << results[1]->message;
  EXPECT_EQ(results[2]->status, Verdict::kRuntimeError) << results[2]->message;
  EXPECT_EQ(results[3]->status, Verdict::kOk) << results[3]->message;
  // The reference ran once for the first three (test shape), once for the last (bench).
  EXPECT_EQ(results[0]->phase_seconds.count("reference"), 1u);
  EXPECT_EQ(results[1]->phase_seconds.count("reference"), 0u);
  EXPECT_EQ(results[2]->phase_seconds.count("reference"), 0u);
  EXPECT_EQ(results[3]->phase_seconds.count("reference"), 1u);
}

}  // namespace
}  // namespace accelopt
