#include "targets/cuda/calibrate.h"

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <set>
#include <sstream>

#include <fmt/core.h>

#include "core/clock.h"
#include "core/paths.h"
#include "eval/device_lock.h"
#include "eval/sandbox.h"
#include "targets/cuda/arch_peaks_source.h"
#include "targets/cuda/calibrate_source.h"
#include "targets/cuda/hardware_store.h"

namespace accelopt::cuda {
namespace fs = std::filesystem;
namespace {

constexpr const char* kHeader = "accelopt-cuda-calibration 1";
constexpr const char* kProgram = "accelopt-cuda-calibrate";

// ---------------------------------------------------------------------------
// Reading the program's output.

struct Line {
  int number = 0;
  std::string text;
};

std::string Clip(const std::string& text, size_t cap = 100) {
  return text.size() <= cap ? text : text.substr(0, cap) + "...";
}

Error BadLine(const Line& line, const std::string& why) {
  return Error{fmt::format("the cuda calibration's output, line {} ('{}'): {}", line.number, Clip(line.text), why)};
}

// The next word as a finite number; false when there is none or it is not one.
bool ReadNumber(std::istringstream& words, double& value) {
  std::string word;
  if (!(words >> word)) return false;
  char* end = nullptr;
  value = std::strtod(word.c_str(), &end);
  return end != word.c_str() && *end == '\0' && std::isfinite(value);
}

// The rest of the line without its leading blanks.
std::string Rest(std::istringstream& words) {
  std::string rest;
  std::getline(words, rest);
  const size_t first = rest.find_first_not_of(" \t");
  return first == std::string::npos ? "" : rest.substr(first);
}

GpuFigure* FigureNamed(GpuHardwareProfile& p, const std::string& name) {
  if (name == "hbm_gbs") return &p.hbm;
  if (name == "bf16_gemm_gflops") return &p.bf16_gemm;
  if (name == "fp32_gemm_gflops") return &p.fp32_gemm;
  if (name == "fp32_fma_gflops") return &p.fp32_fma;
  return nullptr;
}

// The rest of "figure NAME BEST SPREAD THEORETICAL METHOD" or "detail NAME BEST SPREAD METHOD" after NAME.
Status ReadFigure(const Line& line, const std::string& name, std::istringstream& words, bool figure,
                  GpuHardwareProfile& p) {
  GpuFigure f;
  if (name.empty()) return BadLine(line, "no name");
  if (!ReadNumber(words, f.measured) || !ReadNumber(words, f.spread) || (figure && !ReadNumber(words, f.theoretical)))
    return BadLine(line, figure ? "expected NAME BEST SPREAD THEORETICAL METHOD" : "expected NAME BEST SPREAD METHOD");
  if (f.measured < 0 || f.spread < 0 || f.theoretical < 0) return BadLine(line, "a negative figure");
  f.method = Rest(words);
  if (!figure) {
    p.details[name] = f;
    return Ok{};
  }
  GpuFigure* slot = FigureNamed(p, name);
  if (!slot) return BadLine(line, "no figure of that name");
  *slot = f;
  return Ok{};
}

// The device's properties: "device NAME", "compute_capability MAJOR MINOR", "sm_count N", ...
Status ReadProperty(const Line& line, const std::string& key, std::istringstream& words, GpuHardwareProfile& p) {
  if (key == "device") {
    p.device = Rest(words);
    return p.device.empty() ? BadLine(line, "no device name") : Status(Ok{});
  }
  double a = 0, b = 0;
  if (!ReadNumber(words, a) || a < 0 || (key == "compute_capability" && (!ReadNumber(words, b) || b < 0)))
    return BadLine(line, "expected a non-negative number" + std::string(key == "compute_capability" ? " pair" : ""));
  if (key == "compute_capability") {
    p.cc_major = static_cast<int>(a);
    p.cc_minor = static_cast<int>(b);
  } else if (key == "sm_count") {
    p.sm_count = static_cast<int>(a);
  } else if (key == "sm_clock_khz") {
    p.sm_clock_mhz = a / 1e3;
  } else if (key == "memory_clock_khz") {
    p.memory_clock_mhz = a / 1e3;
  } else if (key == "memory_bus_bits") {
    p.memory_bus_bits = static_cast<int>(a);
  } else {
    p.l2_bytes = static_cast<long>(a);
  }
  return Ok{};
}

const std::set<std::string> kProperties = {"device",           "compute_capability", "sm_count", "sm_clock_khz",
                                           "memory_clock_khz", "memory_bus_bits",    "l2_bytes"};
const std::vector<std::string> kFigures = {"hbm_gbs", "bf16_gemm_gflops", "fp32_gemm_gflops", "fp32_fma_gflops"};

// Every property and figure the program prints came.
Status CheckComplete(const std::set<std::string>& seen) {
  for (const std::string& key : kProperties)
    if (!seen.count(key)) return Error{"the cuda calibration's output lacks its '" + key + "' line"};
  for (const std::string& name : kFigures)
    if (!seen.count("figure " + name)) return Error{"the cuda calibration's output lacks the figure '" + name + "'"};
  return Ok{};
}

// ---------------------------------------------------------------------------
// Running the program.

Result<eval::SandboxOutcome> RunCalibrator(const std::string& program, const GpuCalibrationOptions& o) {
  eval::SandboxRequest request;
  request.workdir = o.work_dir.empty() ? fs::temp_directory_path().string() : o.work_dir;
  std::error_code ec;
  fs::create_directories(request.workdir, ec);
  if (ec) return Error{"cannot create " + request.workdir + " for the cuda calibration: " + ec.message()};
  request.argv = {program,
                  "--repeats",
                  std::to_string(o.repeats),
                  "--gemm-n",
                  std::to_string(o.gemm_n),
                  "--copy-bytes",
                  std::to_string(o.copy_bytes)};
  request.limits.wall_seconds = o.timeout_seconds;
  request.limits.address_space_bytes = 0;  // the CUDA driver reserves far more address space than it uses
  request.limits.capture_bytes = 1 << 20;
  return eval::RunSandboxed(request);
}

// What the program's stderr adds to an error, if it wrote anything.
std::string StderrNote(const eval::SandboxOutcome& run) {
  if (run.err.empty()) return "";
  return "; its stderr:\n" + eval::TruncateLog(run.err, 2000);
}

// Why a run that ended this way produced no calibration ("" when it finished).
std::string HowItEnded(const eval::SandboxOutcome& run, const GpuCalibrationOptions& o) {
  if (run.timed_out) return fmt::format("the cuda calibration did not finish within {} s", o.timeout_seconds);
  if (run.term_signal) return "the cuda calibration died of " + eval::SignalName(run.term_signal);
  return "";
}

std::string Percent(double x) { return fmt::format("{:.0f}%", 100 * x); }

}  // namespace

Result<GpuHardwareProfile> ParseCalibrationOutput(const std::string& output) {
  GpuHardwareProfile p;
  std::set<std::string> seen;
  std::istringstream in(output);
  Line line, last;  // the line read, the last one that was not empty
  bool header = false, done = false;
  while (std::getline(in, line.text)) {
    ++line.number;
    if (line.text.empty()) continue;
    last = line;
    std::istringstream words(line.text);
    std::string key;
    words >> key;
    if (key == "fail") return Error{"the cuda calibration failed: " + Rest(words)};
    if (done) return BadLine(line, "after 'done'");
    if (!header) {
      if (line.text != kHeader)
        return BadLine(line, std::string("the output does not begin with '") + kHeader +
                                 "': not the calibration program's, or another version's");
      header = true;
      continue;
    }
    Status read = Ok{};
    if (key == "done") {
      done = true;
    } else if (kProperties.count(key)) {
      read = ReadProperty(line, key, words, p);
      seen.insert(key);
    } else if (key == "figure" || key == "detail") {
      std::string name;
      words >> name;
      read = ReadFigure(line, name, words, key == "figure", p);
      seen.insert(key + " " + name);
    } else {
      return BadLine(line, "not a line the calibration program prints");
    }
    if (!read) return read.error();
  }
  if (!header) return Error{"the cuda calibration printed nothing"};
  if (!done)
    return Error{
        fmt::format("the cuda calibration's output ends before 'done', after line {} ('{}'): the program was cut off",
                    last.number, Clip(last.text))};
  if (auto s = CheckComplete(seen); !s) return s.error();
  return p;
}

Result<std::string> BuildCalibrator(const NvccOptions& options) {
  const std::string nvcc = options.nvcc.empty() ? FindNvcc() : options.nvcc;
  if (nvcc.empty()) return Error{"nvcc is not on $PATH or in /usr/local/cuda/bin"};
  ProgramSource source;
  source.program = kProgram;
  source.files = {{"calibrate.cu", kCalibrateSource}, {"arch_peaks.h", kArchPeaksSource}};
  // cuBLASLt is a shared library of the toolkit: the program finds it where nvcc's toolkit keeps it.
  source.link_args = {"-lcublasLt", "-Xlinker", "-rpath=" + ToolkitLibraryDir(nvcc)};
  return BuildProgram(options, source);
}

std::vector<std::string> CheckGpuProfile(const GpuHardwareProfile& p, const GpuCalibrationOptions& o) {
  struct Named {
    const char* name;
    const GpuFigure* figure;
    const char* unit;
  };
  const Named figures[] = {{"HBM bandwidth", &p.hbm, "GB/s"},
                           {"bf16 GEMM", &p.bf16_gemm, "GFLOP/s"},
                           {"fp32 GEMM", &p.fp32_gemm, "GFLOP/s"},
                           {"FP32 FMA peak", &p.fp32_fma, "GFLOP/s"}};
  std::vector<std::string> problems;
  for (const Named& n : figures) {
    const GpuFigure& f = *n.figure;
    if (f.measured <= 0 && !(n.figure == &p.bf16_gemm && f.theoretical == 0)) {
      problems.push_back(fmt::format("the {} measured nothing ({})", n.name, f.method));
      continue;
    }
    if (f.theoretical > 0 && f.measured > o.max_over_theory * f.theoretical)
      problems.push_back(fmt::format(
          "the {} measured {:.1f} {}, above the theoretical {:.1f} {} of this device ({} SMs at {:.0f} MHz): the "
          "per-architecture constants of src/targets/cuda/arch_peaks.h do not fit sm_{}{}",
          n.name, f.measured, n.unit, f.theoretical, n.unit, p.sm_count, p.sm_clock_mhz, p.cc_major, p.cc_minor));
    if (f.spread > o.max_spread)
      problems.push_back(
          fmt::format("the {} did not hold still: its best repetitions differ by {} (at most {}). "
                      "Calibrate again when nothing else runs on the GPU.",
                      n.name, Percent(f.spread), Percent(o.max_spread)));
  }
  if (p.fp32_gemm.measured > o.max_over_theory * p.fp32_fma.measured)
    problems.push_back(
        fmt::format("the fp32 GEMM measured {:.1f} GFLOP/s, above the FMA peak of {:.1f}: impossible "
                    "in plain FP32 (TF32 or emulation was used, or the FMA test was disturbed)",
                    p.fp32_gemm.measured, p.fp32_fma.measured));
  auto low = [&](const char* name, const GpuFigure& f, double share) {
    if (f.theoretical > 0 && f.measured > 0 && f.measured < share * f.theoretical)
      problems.push_back(
          fmt::format("the {} measured {} of its theoretical figure (at least {} expected): a busy "
                      "GPU, or clocks held low. Calibrate again when nothing else runs on it.",
                      name, Percent(f.measured / f.theoretical), Percent(share)));
  };
  low("FP32 FMA peak", p.fp32_fma, o.min_fma_share);
  low("HBM bandwidth", p.hbm, o.min_hbm_share);
  return problems;
}

Result<GpuCalibration> CalibrateGpu(const GpuCalibrationOptions& options) {
  auto device = FindDevice();
  if (!device) return Error{"cannot calibrate the cuda target: " + device.error().message};
  NvccOptions nvcc = options.nvcc;
  nvcc.arch = device->Arch();
  auto program = BuildCalibrator(nvcc);
  if (!program) return Error{"cannot calibrate the cuda target: " + program.error().message};
  std::unique_ptr<eval::DeviceLock> lock;
  if (options.device_lock) {
    auto acquired = eval::DeviceLock::Acquire("cuda:0", "calibrating", eval::PrintWaitToStderr("cuda:0"));
    if (!acquired) return acquired.error();
    lock = std::move(*acquired);
  }
  auto run = RunCalibrator(*program, options);
  if (!run) return run.error();
  lock.reset();
  if (std::string ended = HowItEnded(*run, options); !ended.empty()) return Error{ended + StderrNote(*run)};
  auto parsed = ParseCalibrationOutput(run->out);
  if (!parsed) return Error{parsed.error().message + StderrNote(*run)};
  GpuCalibration calibration;
  calibration.profile = std::move(*parsed);
  calibration.profile.machine = device->Machine();
  calibration.profile.measured_at = IsoUtcNow();
  calibration.problems = CheckGpuProfile(calibration.profile, options);
  return calibration;
}

Result<GpuCalibration> CalibrateGpuAndSave(const GpuCalibrationOptions& options, const std::string& data_dir,
                                           const std::function<void(const std::string&)>& say, bool* saved) {
  *saved = false;
  if (auto device = FindDevice(); !device) return Error{"cannot calibrate the cuda target: " + device.error().message};
  // Found out before the measurement, not after it.
  if (auto s = CheckWritableDir(data_dir + "/hardware"); !s)
    return Error{"the GPU's hardware profile could not be saved: " + s.error().message +
                 " (set $ACCELOPT_HOME to a writable folder)"};
  say("Calibrating the GPU: HBM copy bandwidth, cuBLASLt bf16 and fp32 GEMM, FP32 FMA peak (the program is built "
      "with nvcc first; a minute or two)...");
  auto calibration = CalibrateGpu(options);
  if (!calibration) return calibration;
  if (!calibration->problems.empty()) {
    std::string text = "The calibration is not saved as this GPU's profile:";
    for (const auto& problem : calibration->problems) text += "\n  - " + problem;
    say(text);
    return calibration;
  }
  if (auto s = SaveGpuHardwareProfile(data_dir + "/hardware", calibration->profile); !s) return s.error();
  *saved = true;
  return calibration;
}

}  // namespace accelopt::cuda
