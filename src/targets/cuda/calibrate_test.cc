// The cuda target's calibration without a GPU: the program builds with nvcc
// and, with no device, says why; its output is read (or refused with a clear
// error); a calibration is checked, saved and loaded per machine; the peaks
// a profile is scored against are chosen by its inputs' type. The
// measurement itself runs in tests/cuda_calibration_gpu_test.cc (label gpu).

#include "targets/cuda/calibrate.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "core/hash.h"
#include "core/json_io.h"
#include "eval/sandbox.h"
#include "suite/task.h"
#include "targets/cuda/arch_peaks.h"
#include "targets/cuda/gpu_scoring.h"
#include "targets/cuda/hardware_store.h"
#include "testing/run_command.h"
#include "testing/temp_dir.h"

namespace accelopt::cuda {
namespace {

// What the program prints on an H100 SXM (figures of the right size, not a measurement).
const std::string kGoodOutput =
    "accelopt-cuda-calibration 1\n"
    "device NVIDIA H100 80GB HBM3\n"
    "compute_capability 9 0\n"
    "sm_count 132\n"
    "sm_clock_khz 1980000\n"
    "memory_clock_khz 2619000\n"
    "memory_bus_bits 5120\n"
    "l2_bytes 52428800\n"
    "detail hbm_memcpy_gbs 2950.5 0.004 cudaMemcpyAsync device to device, 1600 MiB\n"
    "detail hbm_copy_kernel_gbs 3010.25 0.003 16-byte vector copy kernel, 1600 MiB\n"
    "figure hbm_gbs 3010.25 0.003 3352.32 copy kernel, 1600 MiB, read + write counted\n"
    "figure bf16_gemm_gflops 740000 0.01 1.07044e+06 cuBLASLt bf16 8192^3, fastest of 4 heuristic algorithms (#1)\n"
    "figure fp32_gemm_gflops 51000 0.005 66908.2 cuBLASLt fp32 8192^3, CUBLAS_COMPUTE_32F (no TF32)\n"
    "figure fp32_fma_gflops 62000 0.002 66908.2 8 FMA chains per thread, 32 blocks of 256 per SM\n"
    "done\n";

GpuHardwareProfile Parsed(const std::string& text = kGoodOutput) {
  auto p = ParseCalibrationOutput(text);
  EXPECT_TRUE(p) << p.error().message;
  return p ? *p : GpuHardwareProfile{};
}

std::string ParseError(const std::string& text) {
  auto p = ParseCalibrationOutput(text);
  EXPECT_FALSE(p) << "accepted:\n" << text;
  return p ? "" : p.error().message;
}

// kGoodOutput without its lines that begin with `prefix`.
std::string Without(const std::string& prefix) {
  std::string out, line;
  std::istringstream in(kGoodOutput);
  while (std::getline(in, line))
    if (line.rfind(prefix, 0) != 0) out += line + "\n";
  return out;
}

// ---------------------------------------------------------------------------
// The program.

TEST(CudaCalibrator, BuildsWithNvccAndSaysWhyWithoutADevice) {
  if (FindNvcc().empty()) GTEST_SKIP() << "nvcc is not on $PATH or in /usr/local/cuda/bin: nothing to build";
  testing::TempDir dir;
  NvccOptions options;
  options.cache_dir = dir.path() + "/build";
  auto program = BuildCalibrator(options);
  ASSERT_TRUE(program) << program.error().message;
  EXPECT_TRUE(std::filesystem::exists(*program));
  auto again = BuildCalibrator(options);
  ASSERT_TRUE(again) << again.error().message;
  EXPECT_EQ(*again, *program) << "built twice instead of found in the cache";
  if (FindDevice()) return;  // it would measure the GPU: tests/cuda_calibration_gpu_test.cc does
  // It runs (cuBLASLt found where nvcc's toolkit keeps it) and says there is no device, as FindDevice does.
  eval::SandboxRequest request;
  request.argv = {*program, "--repeats", "1"};
  request.workdir = dir.path();
  request.limits.address_space_bytes = 0;
  auto run = eval::RunSandboxed(request);
  ASSERT_TRUE(run) << run.error().message;
  EXPECT_EQ(run->exit_code, 1) << run->out << run->err;
  const std::string error = ParseError(run->out);
  EXPECT_EQ(error.rfind("the cuda calibration failed: no CUDA device: cudaGetDeviceCount returned", 0), 0u) << error;
}

TEST(CudaCalibrator, WithoutADeviceCalibrateSaysWhy) {
  auto device = FindDevice();
  if (device) GTEST_SKIP() << "this machine has a CUDA device (" << device->name << ")";
  testing::TempDir home;
  bool saved = true;
  auto calibration = CalibrateGpuAndSave(
      GpuCalibrationOptions{}, home.path(), [](const std::string&) {}, &saved);
  ASSERT_FALSE(calibration);
  EXPECT_FALSE(saved);
  EXPECT_EQ(calibration.error().message, "cannot calibrate the cuda target: " + device.error().message);
  EXPECT_FALSE(std::filesystem::exists(home.path() + "/hardware"));

  testing::CommandRun cli = testing::Accelopt("calibrate --target cuda");
  EXPECT_EQ(cli.exit_code, 1) << cli.out;
  EXPECT_NE(cli.out.find("cannot calibrate the cuda target: no CUDA device"), std::string::npos) << cli.out;
  testing::CommandRun cpu_flag = testing::Accelopt("calibrate --target cuda --fma-units 1");
  EXPECT_EQ(cpu_flag.exit_code, 2) << cpu_flag.out;
}

// ---------------------------------------------------------------------------
// Reading its output.

TEST(CudaCalibrationOutput, GoodOutputIsRead) {
  const GpuHardwareProfile p = Parsed();
  EXPECT_EQ(p.device, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(p.cc_major, 9);
  EXPECT_EQ(p.cc_minor, 0);
  EXPECT_EQ(p.sm_count, 132);
  EXPECT_DOUBLE_EQ(p.sm_clock_mhz, 1980);
  EXPECT_DOUBLE_EQ(p.memory_clock_mhz, 2619);
  EXPECT_EQ(p.memory_bus_bits, 5120);
  EXPECT_EQ(p.l2_bytes, 52428800);
  EXPECT_DOUBLE_EQ(p.hbm.measured, 3010.25);
  EXPECT_DOUBLE_EQ(p.hbm.spread, 0.003);
  EXPECT_DOUBLE_EQ(p.hbm.theoretical, 3352.32);
  EXPECT_EQ(p.hbm.method, "copy kernel, 1600 MiB, read + write counted");
  EXPECT_DOUBLE_EQ(p.bf16_gemm.measured, 740000);
  EXPECT_DOUBLE_EQ(p.fp32_gemm.measured, 51000);
  EXPECT_DOUBLE_EQ(p.fp32_fma.measured, 62000);
  ASSERT_EQ(p.details.size(), 2u);
  EXPECT_DOUBLE_EQ(p.details.at("hbm_memcpy_gbs").measured, 2950.5);
  EXPECT_EQ(p.details.at("hbm_copy_kernel_gbs").method, "16-byte vector copy kernel, 1600 MiB");
  EXPECT_TRUE(p.machine.empty());
}

TEST(CudaCalibrationOutput, TruncatedOutputSaysItWasCutOff) {
  const std::string cut = kGoodOutput.substr(0, kGoodOutput.find("figure fp32_gemm_gflops"));
  const std::string error = ParseError(cut);
  EXPECT_NE(error.find("ends before 'done'"), std::string::npos) << error;
  EXPECT_NE(error.find("line 12 ('figure bf16_gemm_gflops 740000"), std::string::npos) << error;
  EXPECT_NE(error.find("cut off"), std::string::npos) << error;
  // Cut in the middle of a line: that line is refused by name.
  const std::string mid = kGoodOutput.substr(0, kGoodOutput.find("0.005 66908.2"));
  EXPECT_NE(ParseError(mid).find("line 13 ('figure fp32_gemm_gflops 51000 '): expected NAME BEST SPREAD THEORETICAL"),
            std::string::npos)
      << ParseError(mid);
}

TEST(CudaCalibrationOutput, MissingLinesAreNamed) {
  EXPECT_EQ(ParseError(Without("figure fp32_fma_gflops")),
            "the cuda calibration's output lacks the figure 'fp32_fma_gflops'");
  EXPECT_EQ(ParseError(Without("sm_count")), "the cuda calibration's output lacks its 'sm_count' line");
  EXPECT_EQ(ParseError(""), "the cuda calibration printed nothing");
}

TEST(CudaCalibrationOutput, GarbageIsRefusedWithItsLine) {
  EXPECT_NE(ParseError("Segmentation fault\n")
                .find("line 1 ('Segmentation fault'): the output does not begin with "
                      "'accelopt-cuda-calibration 1'"),
            std::string::npos);
  std::string unknown = kGoodOutput;
  unknown.insert(unknown.find("done"), "frobnicate 3\n");
  EXPECT_NE(ParseError(unknown).find("line 15 ('frobnicate 3'): not a line the calibration program prints"),
            std::string::npos)
      << ParseError(unknown);
  std::string bad_number = kGoodOutput;
  bad_number.replace(bad_number.find("62000 0.002"), 11, "lots 0.002");
  EXPECT_NE(ParseError(bad_number).find("expected NAME BEST SPREAD THEORETICAL METHOD"), std::string::npos);
  std::string nan = kGoodOutput;
  nan.replace(nan.find("62000 0.002"), 11, "nan 0.002");
  EXPECT_NE(ParseError(nan).find("expected NAME BEST SPREAD THEORETICAL METHOD"), std::string::npos);
  std::string unknown_figure = kGoodOutput;
  unknown_figure.insert(unknown_figure.find("done"), "figure fp64_gflops 1 0 0 x\n");
  EXPECT_NE(ParseError(unknown_figure).find("no figure of that name"), std::string::npos);
  EXPECT_NE(ParseError(kGoodOutput + "sm_count 3\n").find("after 'done'"), std::string::npos);
}

TEST(CudaCalibrationOutput, TheProgramsFailureIsItsMessage) {
  EXPECT_EQ(ParseError("fail no CUDA device: cudaGetDeviceCount returned 100 (no CUDA-capable device is detected)\n"),
            "the cuda calibration failed: no CUDA device: cudaGetDeviceCount returned 100 (no CUDA-capable device "
            "is detected)");
  EXPECT_EQ(ParseError(kGoodOutput.substr(0, kGoodOutput.find("figure")) + "fail cudaMalloc (GEMM A): out of memory\n"),
            "the cuda calibration failed: cudaMalloc (GEMM A): out of memory");
}

// ---------------------------------------------------------------------------
// Its checks, the theoretical figures, storing and scoring.

TEST(CudaCalibrationChecks, AGoodCalibrationPassesAndImpossibleFiguresDoNot) {
  const GpuCalibrationOptions options;
  GpuHardwareProfile p = Parsed();
  EXPECT_TRUE(CheckGpuProfile(p, options).empty());

  GpuHardwareProfile above = p;
  above.fp32_fma.measured = 1.2 * above.fp32_fma.theoretical;
  ASSERT_EQ(CheckGpuProfile(above, options).size(), 1u);
  EXPECT_NE(CheckGpuProfile(above, options)[0].find("arch_peaks.h do not fit sm_90"), std::string::npos);

  GpuHardwareProfile tf32 = p;
  tf32.fp32_gemm.measured = 2 * tf32.fp32_fma.measured;
  tf32.fp32_gemm.theoretical = 0;
  ASSERT_EQ(CheckGpuProfile(tf32, options).size(), 1u);
  EXPECT_NE(CheckGpuProfile(tf32, options)[0].find("above the FMA peak"), std::string::npos);

  GpuHardwareProfile busy = p;
  busy.hbm.measured = 0.3 * busy.hbm.theoretical;
  busy.bf16_gemm.spread = 0.3;
  EXPECT_EQ(CheckGpuProfile(busy, options).size(), 2u);

  GpuHardwareProfile volta = p;  // no bf16 tensor cores: a bf16 figure of 0 is no problem
  volta.bf16_gemm = {0, 0, 0, "none: no bf16 tensor cores before sm_80"};
  EXPECT_TRUE(CheckGpuProfile(volta, options).empty());
  volta.fp32_fma.measured = 0;
  EXPECT_FALSE(CheckGpuProfile(volta, options).empty());
}

TEST(CudaArchPeaks, TheConstantsGiveTheDatasheetFigures) {
  // H100 SXM: 989.4 TFLOP/s dense bf16 at its 1830 MHz boost, 66.9 TFLOP/s FP32 at 1980 MHz, 3.35 TB/s.
  EXPECT_NEAR(FmaGflops(132, 1830000, Bf16TensorFmasPerSm(9, 0)), 989430, 10);
  EXPECT_NEAR(FmaGflops(132, 1980000, Fp32FmaLanesPerSm(9, 0)), 66908, 1);
  EXPECT_NEAR(MemoryGbs(2619000, 5120), 3352.3, 0.1);
  // A100: 312 TFLOP/s bf16 and 19.5 TFLOP/s FP32 at 1410 MHz on 108 SMs.
  EXPECT_NEAR(FmaGflops(108, 1410000, Bf16TensorFmasPerSm(8, 0)), 311869, 10);
  EXPECT_NEAR(FmaGflops(108, 1410000, Fp32FmaLanesPerSm(8, 0)), 19492, 1);
  EXPECT_EQ(Bf16TensorFmasPerSm(7, 0), 0);  // Volta: no bf16
  EXPECT_EQ(Fp32FmaLanesPerSm(99, 0), 0);   // unknown
}

TEST(CudaHardwareStore, SavedAndLoadedPerMachine) {
  testing::TempDir dir;
  GpuHardwareProfile p = Parsed();
  p.machine = "NVIDIA H100 80GB HBM3 sm_90a";
  p.measured_at = "2026-01-02T03:04:05Z";
  p.evidence.push_back({"peak_mm", 52000, 51000, "abcd", "matmul", "bench", "2026-01-03T00:00:00Z"});
  EXPECT_EQ(GpuHardwareProfilePath(dir.path(), p.machine), dir.path() + "/cuda-NVIDIA_H100_80GB_HBM3_sm_90a.json");
  ASSERT_TRUE(SaveGpuHardwareProfile(dir.path(), p));

  auto loaded = LoadGpuHardwareProfile(dir.path(), p.machine);
  ASSERT_TRUE(loaded) << loaded.error().message;
  ASSERT_TRUE(loaded->has_value());
  const GpuHardwareProfile& q = **loaded;
  EXPECT_EQ(ToJson(q), ToJson(p));
  EXPECT_EQ(q.device, p.device);
  EXPECT_DOUBLE_EQ(q.bf16_gemm.theoretical, p.bf16_gemm.theoretical);
  EXPECT_EQ(q.details.at("hbm_memcpy_gbs").method, p.details.at("hbm_memcpy_gbs").method);
  ASSERT_EQ(q.evidence.size(), 1u);
  EXPECT_EQ(q.evidence[0].kernel_hash, "abcd");
  // The rates readers of a run's hardware know (accelopt show) are written beside the figures.
  const Json j = ToJson(p);
  EXPECT_DOUBLE_EQ(j["bandwidth_gbs"].get<double>(), p.hbm.measured);
  EXPECT_DOUBLE_EQ(j["peak_mm_gflops"].get<double>(), p.fp32_gemm.measured);
  EXPECT_EQ(j["fingerprint"], p.machine);

  // Another GPU has no profile yet; a file that is not this machine's is an error naming it.
  auto other = LoadGpuHardwareProfile(dir.path(), "NVIDIA A100-SXM4-80GB sm_80");
  ASSERT_TRUE(other) << other.error().message;
  EXPECT_FALSE(other->has_value());
  std::filesystem::copy_file(GpuHardwareProfilePath(dir.path(), p.machine),
                             GpuHardwareProfilePath(dir.path(), "NVIDIA A100-SXM4-80GB sm_80"));
  auto copied = LoadGpuHardwareProfile(dir.path(), "NVIDIA A100-SXM4-80GB sm_80");
  ASSERT_FALSE(copied);
  EXPECT_NE(copied.error().message.find("holds the profile of 'NVIDIA H100 80GB HBM3 sm_90a'"), std::string::npos);
}

TEST(CudaHardwareStore, CorruptOrForeignProfilesAreErrors) {
  testing::TempDir dir;
  const std::string machine = "NVIDIA H100 80GB HBM3 sm_90a";
  const std::string path = GpuHardwareProfilePath(dir.path(), machine);
  std::ofstream(path) << "{\"kind\": \"cuda\", \"fingerprint\": ";
  auto corrupt = LoadGpuHardwareProfile(dir.path(), machine);
  ASSERT_FALSE(corrupt);
  EXPECT_NE(corrupt.error().message.find("accelopt calibrate --target cuda --force"), std::string::npos)
      << corrupt.error().message;

  Json missing = ToJson(Parsed());
  missing["figures"].erase("fp32_fma_gflops");
  auto no_fma = GpuHardwareProfileFromJson(missing);
  ASSERT_FALSE(no_fma);
  EXPECT_NE(no_fma.error().message.find("fp32_fma_gflops"), std::string::npos) << no_fma.error().message;

  // Another target's profile, as the cpu target saves one: no "kind".
  const Json cpu_json = {{"machine", {{"fingerprint", "f00d"}}},
                         {"bandwidth_gbs", 20.0},
                         {"peak_mm_gflops", 100.0},
                         {"peak_vec_gflops", 50.0}};
  auto cpu_profile = GpuHardwareProfileFromJson(cpu_json);
  ASSERT_FALSE(cpu_profile);
  EXPECT_NE(cpu_profile.error().message.find("no \"kind\": \"cuda\""), std::string::npos);
}

TEST(CudaPeakChoice, Bf16InputsTakeTheTensorCorePeak) {
  const GpuHardwareProfile h = Parsed();
  const suite::PeakRates fp32 = RatesFor(h, false), bf16 = RatesFor(h, true);
  EXPECT_DOUBLE_EQ(fp32.bandwidth_gbs, 3010.25);
  EXPECT_DOUBLE_EQ(fp32.peak_mm_gflops, 51000);
  EXPECT_DOUBLE_EQ(fp32.peak_vec_gflops, 62000);
  EXPECT_DOUBLE_EQ(bf16.peak_mm_gflops, 740000);
  EXPECT_DOUBLE_EQ(bf16.bandwidth_gbs, fp32.bandwidth_gbs);
  EXPECT_DOUBLE_EQ(bf16.peak_vec_gflops, fp32.peak_vec_gflops);
  const eval::ScoringPeaks peaks = PeaksFor(h, true);
  EXPECT_DOUBLE_EQ(peaks.theoretical.peak_mm_gflops, h.bf16_gemm.theoretical);
  EXPECT_DOUBLE_EQ(peaks.spreads.at("peak_mm"), h.bf16_gemm.spread);
  EXPECT_DOUBLE_EQ(PeaksFor(h, false).theoretical.peak_mm_gflops, h.fp32_gemm.theoretical);
  // A GPU without bf16 tensor cores computes bf16 inputs at its fp32 rate.
  GpuHardwareProfile volta = h;
  volta.bf16_gemm = {};
  EXPECT_DOUBLE_EQ(RatesFor(volta, true).peak_mm_gflops, 51000);
}

// A raise's evidence names the kernel by its source's hash, found beside the library CompileCuda built.
TEST(CudaScoringEvidence, TheKernelsHashIsItsSources) {
  if (FindNvcc().empty()) GTEST_SKIP() << "nvcc is not on $PATH or in /usr/local/cuda/bin: nothing to build";
  testing::TempDir dir;
  NvccOptions options;
  options.cache_dir = dir.path() + "/build";
  const std::string source = "extern \"C\" void kernel(const float* x, float* out, cudaStream_t) {}\n";
  auto built = CompileCuda(source, "#pragma once\n", options, dir.path());
  ASSERT_TRUE(built) << built.error().message;
  ASSERT_TRUE(built->ok) << built->log;
  EXPECT_EQ(SourceHashOf(built->library_path), ContentHash(source));
  EXPECT_EQ(SourceHashOf(dir.path() + "/none/kernel.so"), "");
}

class CudaScoring : public ::testing::Test {
 protected:
  void SetUp() override {
    auto task = suite::LoadTask(std::string(ACCELOPT_SOURCE_DIR) + "/suite/gqa_full");
    ASSERT_TRUE(task) << task.error().message;
    task_ = *task;
    auto bound = suite::Bind(task_, "bench");
    ASSERT_TRUE(bound) << bound.error().message;
    bound_ = std::make_unique<suite::BoundTask>(*bound);
    auto counts = suite::CountRoofline(*bound_);
    ASSERT_TRUE(counts);
    hardware_ = Parsed();
    hardware_.machine = "NVIDIA H100 80GB HBM3 sm_90a";
    roofline_ = suite::ComputeRooflineTime(*counts, RatesFor(hardware_, false)).seconds;
  }
  Profile Timed(double median) {
    Profile p;
    p.task = "gqa_full";
    p.shape = "bench";
    p.latency.emplace();
    p.latency->median_s = median;
    return p;
  }

  suite::Task task_;
  std::unique_ptr<suite::BoundTask> bound_;
  GpuHardwareProfile hardware_;
  double roofline_ = 0;
};

TEST_F(CudaScoring, AFloat32AttentionIsScoredAgainstTheFp32GemmPeak) {
  ASSERT_FALSE(InputsAreBf16(*bound_));
  Profile p = Timed(2 * roofline_);
  auto no_measure = [](Profile&) -> Status { return Error{"not expected"}; };
  ASSERT_TRUE(ScoreOnGpu(*bound_, "hash", hardware_, p, no_measure, {}));
  EXPECT_NEAR(p.percent_of_peak, 50, 1e-9);
  EXPECT_EQ(p.bound, "mm");
  ASSERT_TRUE(p.scored_against);
  EXPECT_DOUBLE_EQ(p.scored_against->peak_mm_gflops, 51000);
  EXPECT_EQ(p.scored_against->fingerprint, hardware_.machine);
}

// A paged-attention task has bf16 inputs: its matmul term divides by the bf16 GEMM peak.
TEST_F(CudaScoring, ABf16PagedAttentionIsScoredAgainstTheBf16GemmPeak) {
  auto task = suite::LoadTask(std::string(ACCELOPT_SOURCE_DIR) + "/suite/gqa_paged_prefill_causal_h32_kv8_d128_ps1");
  ASSERT_TRUE(task) << task.error().message;
  auto bound = suite::Bind(*task, "bench");
  ASSERT_TRUE(bound) << bound.error().message;
  ASSERT_TRUE(InputsAreBf16(*bound));
  auto counts = suite::CountRoofline(*bound);
  ASSERT_TRUE(counts);
  const auto roofline = suite::ComputeRooflineTime(*counts, RatesFor(hardware_, true));
  ASSERT_EQ(roofline.bound, "mm");
  Profile p = Timed(4 * roofline.seconds);
  p.task = task->name;
  auto no_measure = [](Profile&) -> Status { return Error{"not expected"}; };
  ASSERT_TRUE(ScoreOnGpu(*bound, "hash", hardware_, p, no_measure, {}));
  EXPECT_NEAR(p.percent_of_peak, 25, 1e-9);
  ASSERT_TRUE(p.scored_against);
  EXPECT_DOUBLE_EQ(p.scored_against->peak_mm_gflops, hardware_.bf16_gemm.measured);
}

TEST_F(CudaScoring, AKernelJustBeyondTheRooflineIsEvidenceAndRaisesNothing) {
  Profile p = Timed(roofline_ / 1.02);
  int measured_again = 0;
  std::vector<eval::PeakEvidence> evidence;
  auto measure_again = [&](Profile& again) -> Status {
    ++measured_again;
    again.latency.emplace();
    again.latency->median_s = roofline_ / 1.02;
    return Ok{};
  };
  const double gemm = hardware_.fp32_gemm.measured;
  ASSERT_TRUE(ScoreOnGpu(*bound_, "abcd", hardware_, p, measure_again,
                         [&](const eval::PeakEvidence& e) { evidence.push_back(e); }));
  EXPECT_EQ(measured_again, 1);
  EXPECT_EQ(p.status, Verdict::kOk);
  EXPECT_GT(p.percent_of_peak, 100);
  EXPECT_EQ(hardware_.fp32_gemm.measured, gemm);  // the yardstick did not move
  EXPECT_TRUE(hardware_.evidence.empty());
  ASSERT_EQ(evidence.size(), 1u);
  EXPECT_EQ(evidence[0].figure, "peak_mm");
  EXPECT_EQ(evidence[0].kernel_hash, "abcd");
  EXPECT_NEAR(evidence[0].value, 51000 * 1.02, 1);

  // Far beyond it (twice the fp32 FMA peak's theoretical figure): suspect, nothing raised.
  Profile fast = Timed(roofline_ / 3);
  auto as_fast = [&](Profile& again) -> Status {
    again.latency.emplace();
    again.latency->median_s = roofline_ / 3;
    return Ok{};
  };
  ASSERT_TRUE(ScoreOnGpu(*bound_, "ef01", hardware_, fast, as_fast, {}));
  EXPECT_EQ(fast.status, Verdict::kSuspect) << fast.message;
  EXPECT_TRUE(hardware_.evidence.empty());
}

}  // namespace
}  // namespace accelopt::cuda
