#include "targets/cuda/cuda_target.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include <fmt/core.h>

#include "core/clock.h"
#include "core/format.h"
#include "core/json_io.h"
#include "core/paths.h"
#include "core/scratch.h"
#include "eval/calls.h"
#include "eval/compare.h"
#include "eval/draw.h"
#include "eval/expected.h"
#include "eval/machine.h"
#include "eval/sandbox.h"
#include "eval/stats.h"
#include "targets/cuda/gpu_scoring.h"
#include "targets/cuda/hardware_store.h"

namespace accelopt::cuda {
namespace fs = std::filesystem;
namespace {

constexpr const char* kNotScored =
    "not scored: this GPU has no calibration (HBM bandwidth, GEMM and FMA peaks) stored; run `accelopt calibrate "
    "--target cuda`";

class CudaBuilt : public targets::Built {
 public:
  const Profile& BuildProfile() const override { return profile_; }
  Profile profile_;
  suite::BoundTask bound_;  // the task at the request's shape, bound once
  std::string library_;
  std::unique_ptr<ScratchDir> scratch_;  // holds the library when builds are not cached
};

// What the harness wrote (harness.cu: RESULT).
struct HarnessReport {
  std::vector<double> seconds;  // per call, in order (written in integer nanoseconds)
  std::vector<long> inputs_changed;
  std::vector<std::pair<long, long>> canaries;  // (call, output) written past
  double handshake_seconds = 0;     // the fastest empty call, prepared and timed as a call, calling nothing
  double empty_launch_seconds = 0;  // the same, launching an empty kernel
  std::string fail_kind, fail_message, device;
  bool done = false;
};

HarnessReport ReadReport(const std::string& text) {
  HarnessReport r;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream words(line);
    std::string key;
    words >> key;
    if (key == "call") {
      long c = 0;
      long long ns = 0;
      words >> c >> ns;
      r.seconds.push_back(static_cast<double>(ns) * 1e-9);
    } else if (key == "inputs_changed") {
      long c = 0;
      words >> c;
      r.inputs_changed.push_back(c);
    } else if (key == "canary") {
      long c = 0, o = 0;
      words >> c >> o;
      r.canaries.emplace_back(c, o);
    } else if (key == "handshake_ns" || key == "empty_launch_ns") {
      long long ns = 0;
      words >> ns;
      (key == "handshake_ns" ? r.handshake_seconds : r.empty_launch_seconds) = static_cast<double>(ns) * 1e-9;
    } else if (key == "device") {
      std::getline(words, r.device);
    } else if (key == "fail") {
      words >> r.fail_kind;
      if (r.fail_kind == "call") {
        long c = 0;
        words >> c;
        r.fail_kind += " " + std::to_string(c + 1);
      }
      std::getline(words, r.fail_message);
    } else if (key == "done") {
      r.done = true;
    }
  }
  return r;
}

// What compute-sanitizer's run over `calls` correctness calls leaves in the
// profile: that it ran, its error summary, and its report when it found any.
std::string SanitizerEvidence(const eval::SandboxOutcome& run, size_t calls) {
  const std::string output = run.out + run.err;
  std::string summary;
  if (size_t at = output.rfind("ERROR SUMMARY:"); at != std::string::npos)
    summary = output.substr(at, output.find('\n', at) - at);
  else
    summary = fmt::format("no error summary (exit status {})", run.exit_code);
  std::string text = fmt::format("compute-sanitizer memcheck ran over the {} correctness calls: {}", calls, summary);
  if (run.exit_code != 0 && !output.empty()) text += "\n" + eval::TruncateLog(output, 8 << 10);
  return text;
}

// Input `t`'s float32 values in its element type, as the harness copies them
// to the device (a bf16 value is the high half of its float32, exactly).
void WriteTensor(std::ostream& out, const suite::BoundTensor& t, const float* values) {
  std::vector<char> bytes(static_cast<size_t>(t.elements) * suite::DTypeBytes(t.dtype));
  for (long i = 0; i < t.elements; ++i) {
    if (t.dtype == suite::DType::kBf16) {
      const uint16_t high = static_cast<uint16_t>(std::bit_cast<uint32_t>(values[i]) >> 16);
      std::memcpy(bytes.data() + 2 * i, &high, 2);
    } else if (t.dtype == suite::DType::kInt32) {
      const int32_t n = static_cast<int32_t>(values[i]);
      std::memcpy(bytes.data() + 4 * i, &n, 4);
    } else {
      std::memcpy(bytes.data() + 4 * i, &values[i], 4);
    }
  }
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

// One set's inputs (every input back to back), each in its element type.
void WriteSet(std::ostream& out, const std::vector<suite::BoundTensor>& inputs, const float* values) {
  for (const auto& t : inputs) {
    WriteTensor(out, t, values);
    values += t.elements;
  }
}

class GpuDeviceLayer : public DeviceLayer {
 public:
  Result<NvccOutcome> Compile(const std::string& source, const std::string& shape_header, const NvccOptions& options,
                              const std::string& scratch_dir) override {
    return CompileCuda(source, shape_header, options, scratch_dir);
  }
  Result<std::string> Harness(const NvccOptions& options) override { return BuildHarness(options); }
  Result<eval::SandboxOutcome> Run(const eval::SandboxRequest& request) override {
    return eval::RunSandboxed(request);
  }
};

// The device every cuda evaluation and calibration locks (calibrate.cc names it alike).
constexpr const char* kLockedDevice = "cuda:0";

class CudaTarget : public targets::Target {
 public:
  explicit CudaTarget(const CudaTargetOptions& options) : options_(options) {
    if (!options_.device_layer) options_.device_layer = MakeGpuDeviceLayer();
  }

  std::string name() const override { return "cuda"; }
  targets::TargetInfo Describe() const override {
    return {"cuda",
            "cuda",
            kCudaExtension,
            {"cuda", "cu", "cpp", "c++"},
            "nvcc -arch=" + options_.nvcc.arch + " -O3 -std=c++17 -lineinfo -Xcompiler -fPIC -shared -Xptxas -v",
            "prompts/cuda"};
  }
  std::string Machine() const override { return options_.device ? options_.device->Machine() : "no-device"; }
  std::string Device() const override { return "cuda:0"; }
  Json Hardware() const override { return options_.hardware ? ToJson(*options_.hardware) : Json(nullptr); }
  // The float32 tasks' rates; a task with bf16 inputs takes the bf16 GEMM peak.
  suite::PeakRates Rates() const override {
    return options_.hardware ? cuda::RatesFor(*options_.hardware, false) : suite::PeakRates{};
  }
  suite::PeakRates RatesFor(const suite::Task& task) const override {
    return options_.hardware ? cuda::RatesFor(*options_.hardware, task.Bf16Inputs()) : suite::PeakRates{};
  }
  std::string MachineText() const override {
    if (!options_.device) return "";
    std::string text = fmt::format("{} ({}), {} MB L2; the L2 is flushed before every call", options_.device->name,
                                   options_.device->Arch(), options_.device->l2_bytes >> 20);
    if (const GpuHardwareProfile* h = options_.hardware ? &*options_.hardware : nullptr)
      text += fmt::format(
          "; measured on this GPU: HBM bandwidth {:.0f} GB/s, fp32 GEMM (cuBLASLt, no TF32) {:.0f} GFLOP/s, bf16 "
          "GEMM {:.0f} GFLOP/s, FP32 FMA peak {:.0f} GFLOP/s",
          h->hbm.measured, h->fp32_gemm.measured, h->bf16_gemm.measured, h->fp32_fma.measured);
    return text;
  }
  std::string Signature(const suite::Task& task) const override {
    return Target::Signature(task) + ", cudaStream_t stream";
  }
  std::string DefaultShape(const suite::Task& task) const override { return CudaDefaultShape(task); }
  bool Supports(const suite::Task& task) const override {
    std::error_code ec;
    return fs::exists(task.baseline_path(kCudaExtension), ec) && fs::exists(task.reference_path(".cpp"), ec);
  }

  std::vector<Result<std::unique_ptr<targets::Built>>> Build(std::span<const targets::EvalRequest> requests) override {
    std::vector<Result<std::unique_ptr<targets::Built>>> out;
    for (const auto& request : requests) out.push_back(BuildOne(request));
    return out;
  }

  std::vector<Result<Profile>> Run(std::span<targets::Built* const> built, const OnResult& on_result) override {
    std::vector<Result<Profile>> out;
    // The whole batch, reference runs included, under the device's lock: no
    // other process's evaluation or calibration runs on the GPU meanwhile.
    std::unique_ptr<eval::DeviceLock> lock;
    if (options_.device_lock && !built.empty() && options_.device) {
      const auto* first = static_cast<CudaBuilt*>(built.front());
      auto acquired = eval::DeviceLock::Acquire(
          kLockedDevice, "measuring " + first->profile_.task + " (" + first->profile_.shape + ")",
          options_.on_device_wait ? options_.on_device_wait : eval::PrintWaitToStderr(kLockedDevice));
      if (!acquired) {
        for (size_t k = 0; k < built.size(); ++k) {
          out.push_back(acquired.error());
          if (on_result) on_result(k, out.back());
        }
        return out;
      }
      lock = std::move(*acquired);
    }
    for (size_t k = 0; k < built.size(); ++k) {
      out.push_back(RunOne(*static_cast<CudaBuilt*>(built[k])));
      if (on_result) on_result(k, out.back());
    }
    return out;
  }

 private:
  Result<std::unique_ptr<targets::Built>> BuildOne(const targets::EvalRequest& request) {
    auto built = std::make_unique<CudaBuilt>();
    Profile& p = built->profile_;
    p.task = request.task->name;
    p.shape = request.shape;
    p.target = name();
    p.tolerance = request.task->tolerance;
    p.seeds = options_.seeds;
    auto bound = suite::Bind(*request.task, request.shape);
    if (!bound) return bound.error();
    built->bound_ = std::move(*bound);
    auto scratch = ScratchDir::Create(options_.work_dir, request.task->name, false);
    if (!scratch) return scratch.error();
    auto compiled = options_.device_layer->Compile(request.candidate.source, built->bound_.ShapeHeader(), options_.nvcc,
                                                   (*scratch)->path());
    if (!compiled) return compiled.error();
    p.compile_log = compiled->log;
    p.register_report = compiled->register_report;
    p.compile_seconds = compiled->seconds;
    p.compile_cached = compiled->cached;
    built->library_ = compiled->library_path;
    if (!compiled->ok) {
      p.status = Verdict::kCompileError;
      p.message = compiled->refused.empty() ? "the kernel does not compile (see the compile log)"
                                            : "the kernel is refused before compiling: " + compiled->refused;
    } else if (options_.nvcc.cache_dir.empty()) {
      // Without a cache the library lives in the scratch folder: keep it.
      built->scratch_ = std::move(*scratch);
    }
    return std::unique_ptr<targets::Built>(std::move(built));
  }

  // The correctness calls on each drawn set, warm-up calls, then the timed
  // calls on fresh inputs, `checked_calls` of them (at positions drawn here)
  // on inputs whose reference outputs are known.
  std::vector<long> Schedule(size_t seeds, size_t checked) {
    std::vector<long> calls;
    for (size_t s = 0; s < seeds; ++s) calls.push_back(static_cast<long>(s));
    for (int w = 0; w < options_.warmup_calls; ++w) calls.push_back(-1);
    std::vector<long> timed(std::max<size_t>(options_.timed_calls, checked), -1);
    for (size_t k = 0; k < checked; ++k) timed[k] = static_cast<long>(seeds + k);
    std::shuffle(timed.begin(), timed.end(), rng_);
    calls.insert(calls.end(), timed.begin(), timed.end());
    return calls;
  }

  Result<eval::Expected*> ExpectedFor(const suite::BoundTask& bound, const fs::path& dir) {
    const std::string key = bound.task->name + "/" + bound.shape_name;
    if (expected_ && expected_key_ == key) return expected_.get();
    expected_ = std::make_unique<eval::Expected>(bound, options_.reference, dir.string(), options_.seeds, 1.0,
                                                 options_.checked_calls);
    expected_key_ = key;
    if (!expected_->status()) {
      Error e = expected_->status().error();
      expected_.reset();
      return e;
    }
    return expected_.get();
  }

  // Every slot's inputs back to back, each in its element type: the drawn
  // sets, then the checked calls' (a set perturbed with the call's seed,
  // input by input, and its page tables drawn afresh, as the reference's
  // calls derive them).
  static Status WriteSlots(const suite::BoundTask& bound, const eval::Expected& expected, const fs::path& path) {
    const long per_set = eval::ElementsPerSet(bound.inputs);
    std::ofstream out(path, std::ios::binary);
    std::vector<float> derived(static_cast<size_t>(per_set));
    for (size_t s = 0; s < expected.seeds(); ++s) WriteSet(out, bound.inputs, expected.set(s));
    for (size_t k = 0; k < expected.checked_count(); ++k) {
      const float* base = expected.set(expected.checked(k).set);
      long at = 0;
      for (size_t i = 0; i < bound.inputs.size(); at += bound.inputs[i].elements, ++i)
        eval::DeriveInput(bound.inputs[i], base + at, derived.data() + at, 0, bound.inputs[i].elements,
                          expected.checked(k).seed, i);
      WriteSet(out, bound.inputs, derived.data());
    }
    if (!out) return Error{"cannot write the input sets to " + path.string()};
    return Ok{};
  }

  // The fixed inputs (constants, offsets, page ids) of every fresh call, back
  // to back in call order, each in its element type: drawn here, each call
  // from a seed of its own, as the harness draws the random ones on the device.
  Status WriteTables(const suite::BoundTask& bound, const std::vector<long>& calls, const fs::path& path) {
    std::ofstream out(path, std::ios::binary);
    std::vector<float> values;
    for (long slot : calls) {
      if (slot >= 0) continue;
      const uint64_t seed = rng_();
      for (size_t i = 0; i < bound.inputs.size(); ++i) {
        const suite::BoundTensor& t = bound.inputs[i];
        if (t.dist.random()) continue;
        values.resize(static_cast<size_t>(t.elements));
        eval::DrawInput(t, values.data(), seed, i);
        WriteTensor(out, t, values.data());
      }
    }
    if (!out) return Error{"cannot write the fresh calls' fixed inputs to " + path.string()};
    return Ok{};
  }

  std::string Plan(const suite::BoundTask& bound, const std::vector<long>& calls, size_t slots) {
    auto list = [](const std::vector<suite::BoundTensor>& tensors, auto field) {
      std::string text;
      for (const auto& t : tensors) text += " " + std::to_string(field(t));
      return text;
    };
    const auto elements = [](const suite::BoundTensor& t) { return t.elements; };
    const auto type = [](const suite::BoundTensor& t) { return static_cast<int>(t.dtype); };
    std::string plan = "inputs " + std::to_string(bound.inputs.size()) + list(bound.inputs, elements);
    plan += "\nitypes" + list(bound.inputs, type) + "\ndists";
    for (const auto& t : bound.inputs)
      plan += fmt::format(" {} {:.17g} {:.17g}",
                          !t.dist.random()          ? 2
                          : t.dist.kind == "normal" ? 1
                                                    : 0,
                          t.dist.a, t.dist.b);
    plan += "\noutputs " + std::to_string(bound.outputs.size()) + list(bound.outputs, elements);
    plan += "\notypes" + list(bound.outputs, type);
    plan += "\nslots " + std::to_string(slots) + " slots.bin\ntables tables.bin\ncalls " + std::to_string(calls.size());
    for (long c : calls) plan += " " + std::to_string(c);
    return plan + "\nseed " + std::to_string(rng_() >> 1) + "\nflush_bytes 0\n";
  }

  Result<Profile> RunOne(CudaBuilt& built) {
    Profile profile = built.profile_;
    if (!built.ok()) return profile;
    if (!options_.device) return Error{"the cuda target has no CUDA device to run on"};
    const double started = NowSeconds();
    auto harness = options_.device_layer->Harness(options_.nvcc);
    if (!harness) return harness.error();
    const suite::BoundTask& bound = built.bound_;
    auto scratch = ScratchDir::Create(options_.work_dir, profile.task, options_.keep_work);
    if (!scratch) return scratch.error();
    const fs::path dir = (*scratch)->path();
    if (options_.keep_work) profile.work_dir = dir.string();
    auto expected = ExpectedFor(bound, dir);
    if (!expected) return expected.error();
    // Written again for every evaluation, into its own folder: a file shared
    // by a batch would let one kernel (in whose process the harness runs)
    // change the inputs of the candidates after it.
    if (auto s = WriteSlots(bound, **expected, dir / "slots.bin"); !s) return s.error();

    if (options_.memcheck) {
      // Correctness calls only, under the sanitizer: its slowdown must not reach the timings.
      std::vector<long> calls;
      for (size_t s = 0; s < (*expected)->seeds(); ++s) calls.push_back(static_cast<long>(s));
      if (auto s = RunHarness(*harness, built, bound, **expected, calls, dir, true, profile); !s) return s.error();
      if (profile.status != Verdict::kOk) return profile;
    }
    const std::vector<long> calls = Schedule((*expected)->seeds(), (*expected)->checked_count());
    if (auto s = RunHarness(*harness, built, bound, **expected, calls, dir, false, profile); !s) return s.error();
    profile.wall_seconds = NowSeconds() - started;
    return profile;
  }

  // Runs the harness on `calls` and fills the verdict, the errors and (when
  // not under the sanitizer) the latency and score.
  Status RunHarness(const std::string& harness, const CudaBuilt& built, const suite::BoundTask& bound,
                    const eval::Expected& expected, const std::vector<long>& calls, const fs::path& dir, bool memcheck,
                    Profile& profile) {
    if (auto s =
            WriteFile((dir / "plan.txt").string(), Plan(bound, calls, expected.seeds() + expected.checked_count()));
        !s)
      return s;
    if (auto s = WriteTables(bound, calls, dir / "tables.bin"); !s) return s;
    eval::SandboxRequest request;
    request.workdir = dir.string();
    if (memcheck) {
      const std::string sanitizer = fs::path(options_.nvcc.nvcc.empty() ? FindNvcc() : options_.nvcc.nvcc)
                                        .replace_filename("compute-sanitizer")
                                        .string();
      request.argv = {sanitizer, "--tool", "memcheck", "--error-exitcode", "3", "--print-limit", "20"};
    }
    for (const std::string& a :
         {harness, built.library_, std::string("plan.txt"), std::string("result.txt"), std::string("outputs.bin")})
      request.argv.push_back(a);
    request.limits.wall_seconds = options_.wall_seconds;
    request.limits.address_space_bytes = 0;  // the CUDA driver reserves far more address space than it uses
    auto run = options_.device_layer->Run(request);
    if (!run) return run.error();
    auto written = ReadFile((dir / "result.txt").string());
    const HarnessReport report = ReadReport(written ? *written : "");
    profile.run_log = eval::TruncateLog(
        (run->out.empty() ? "" : "--- stdout\n" + run->out) + (run->err.empty() ? "" : "--- stderr\n" + run->err),
        32 << 10);
    profile.phase = memcheck ? "compute-sanitizer memcheck" : "";
    if (report.fail_kind == "setup") return Error{"the cuda harness failed:" + report.fail_message};
    auto verdict = [&](Verdict v, const std::string& why) {
      profile.status = v;
      profile.message = why;
      return Ok{};
    };
    if (run->timed_out)
      return verdict(Verdict::kTimeout, fmt::format("the kernel's process did not finish within {} s "
                                                    "({} calls done)",
                                                    options_.wall_seconds, report.seconds.size()));
    if (memcheck) profile.sanitizer = SanitizerEvidence(*run, calls.size());
    if (!report.canaries.empty()) {
      const auto [call, output] = report.canaries.front();
      return verdict(Verdict::kRuntimeError,
                     fmt::format("the kernel wrote past the end of output '{}' (call {})",
                                 static_cast<size_t>(output) < bound.outputs.size() ? bound.outputs[output].name : "?",
                                 call + 1));
    }
    if (!report.fail_kind.empty()) return verdict(Verdict::kRuntimeError, report.fail_kind + ":" + report.fail_message);
    if (memcheck && run->exit_code == 3)
      return verdict(Verdict::kRuntimeError, "compute-sanitizer memcheck found errors (see the run log)");
    if (!run->exited_cleanly() || !report.done)
      return verdict(Verdict::kRuntimeError,
                     run->term_signal ? fmt::format("the kernel's process died of signal {}", run->term_signal)
                                      : fmt::format("the kernel's process exited with status {}", run->exit_code));
    if (!report.inputs_changed.empty())
      return verdict(Verdict::kWrongAnswer,
                     fmt::format("the kernel wrote into its inputs (call {})", report.inputs_changed.front() + 1));
    if (auto s = Compare(bound, expected, calls, dir, profile); !s || profile.status != Verdict::kOk) return s;
    if (memcheck) return Ok{};

    const size_t first_timed = expected.seeds() + options_.warmup_calls;
    std::vector<double> samples(report.seconds.begin() + std::min(first_timed, report.seconds.size()),
                                report.seconds.end());
    profile.latency = eval::Summarize(samples);
    // What every call includes whatever it launches: an empty call, prepared
    // and timed as a call (an empty launch costs more, and only a kernel that
    // launches something pays it).
    profile.handshake_seconds = report.handshake_seconds;
    for (double s : report.seconds) profile.kernel_seconds += s;
    profile.checked_calls = static_cast<int>(expected.checked_count());
    profile.conditions = fmt::format(
        "each call on fresh inputs written on the device, outputs poisoned with NaN, the L2 flushed by a write "
        "of twice its size, timed on the host clock around the call and a device-wide synchronization (every "
        "stream), in nanoseconds; every latency includes the handshake, the time of a call that calls nothing "
        "({}: the fastest of 5, each prepared and timed as a call), and a kernel that launches pays a launch "
        "too (a call that launches an empty kernel: {})",
        FormatSeconds(report.handshake_seconds), FormatSeconds(report.empty_launch_seconds));
    profile.message =
        fmt::format("correct on {} seeds and {} checked timed calls", expected.seeds(), profile.checked_calls);
    if (!profile.sanitizer.empty()) profile.message += "; " + profile.sanitizer;
    if (measuring_again_) return Ok{};  // for ScoreOnGpu below, which scores the slower of the two
    if (!options_.hardware) {
      profile.message += std::string("; ") + kNotScored;
      return Ok{};
    }
    auto measure_again = [&](Profile& again) {
      measuring_again_ = true;
      Status s = RunHarness(harness, built, bound, expected, Schedule(expected.seeds(), expected.checked_count()), dir,
                            false, again);
      measuring_again_ = false;
      return s;
    };
    return ScoreOnGpu(bound, SourceHashOf(built.library_), *options_.hardware, profile, measure_again,
                      options_.on_beyond_calibration);
  }

  // Compares each slot call's outputs (outputs.bin, in call order) with the reference's.
  Status Compare(const suite::BoundTask& bound, const eval::Expected& expected, const std::vector<long>& calls,
                 const fs::path& dir, Profile& profile) {
    const size_t per_set = static_cast<size_t>(eval::ElementsPerSet(bound.outputs));
    std::ifstream in(dir / "outputs.bin", std::ios::binary);
    std::vector<float> out(per_set);
    ErrorStats worst;
    bool first = true;
    for (size_t c = 0; c < calls.size(); ++c) {
      if (calls[c] < 0) continue;
      const size_t slot = static_cast<size_t>(calls[c]);
      if (!in.read(reinterpret_cast<char*>(out.data()), per_set * sizeof(float)))
        return Error{"the cuda harness wrote too few outputs in " + (dir / "outputs.bin").string()};
      const std::string label =
          slot < expected.seeds() ? fmt::format("seed {}", slot + 1) : fmt::format("timed call {}", c + 1);
      std::string why;
      const ErrorStats e = expected.Judge(bound, slot, out.data(), label, profile.tolerance, why);
      if (profile.status == Verdict::kOk && !why.empty()) {
        profile.status = Verdict::kWrongAnswer;
        profile.message = why;
      }
      worst = first ? e : eval::Worst(worst, e);
      first = false;
    }
    profile.errors = worst;
    return Ok{};
  }

  CudaTargetOptions options_;
  std::mt19937_64 rng_{eval::FreshSeed()};
  std::unique_ptr<eval::Expected> expected_;
  std::string expected_key_;
  bool measuring_again_ = false;  ///< RunHarness runs a kernel again that ran faster than the roofline
};

}  // namespace

std::shared_ptr<DeviceLayer> MakeGpuDeviceLayer() { return std::make_shared<GpuDeviceLayer>(); }

std::unique_ptr<targets::Target> MakeCudaTarget(const CudaTargetOptions& options) {
  return std::make_unique<CudaTarget>(options);
}

namespace {

// The profile to score against: the recorded one in `settings.hardware` (a
// resumed run's), else this GPU's saved one; nullopt: no scoring.
Result<std::optional<GpuHardwareProfile>> HardwareFor(const targets::TargetSettings& settings,
                                                      const std::string& machine) {
  if (!settings.hardware.is_null()) {
    auto recorded = GpuHardwareProfileFromJson(settings.hardware);
    if (!recorded) return Error{"the recorded hardware profile: " + recorded.error().message};
    return std::optional<GpuHardwareProfile>(*recorded);
  }
  return LoadGpuHardwareProfile((settings.data_dir.empty() ? DataDir() : settings.data_dir) + "/hardware", machine);
}

}  // namespace

Result<CudaTargetOptions> OptionsFor(const targets::TargetSettings& settings, const std::optional<Device>& device) {
  auto own = targets::SettingsFor("cuda", settings);
  if (!own) return own.error();
  CudaTargetOptions options;
  const std::string cache = settings.cache_dir.empty() ? CacheDir() : settings.cache_dir;
  options.reference.compile.cache_dir = cache + "/build";
  // Named here, not left to a default further down: the reference runs in
  // the cpu target's harness, and a path left empty once made every cuda
  // evaluation fail to start it.
  options.reference.run.harness_path = HarnessPath();
  options.reference.run.cpus = (*own)["cpus"].get<std::vector<int>>();
  options.reference.run.bind_openmp = (*own)["bind_openmp"].get<bool>();
  if (auto allowed = eval::CheckCoresAllowed(options.reference.run.cpus, "--cpus"); !allowed) return allowed.error();
  options.reference.run.wall_seconds = settings.timeout;
  options.nvcc.cache_dir = cache + "/cuda-build";
  options.work_dir = cache + "/work";
  options.seeds = settings.seeds;
  options.wall_seconds = settings.timeout;
  options.keep_work = settings.keep_work;
  options.device_lock = settings.device_lock;
  options.memcheck = getenv("ACCELOPT_CUDA_MEMCHECK") != nullptr;
  if (device) {
    options.device = *device;
    options.nvcc.arch = device->Arch();
    auto hardware = HardwareFor(settings, device->Machine());
    if (!hardware) return hardware.error();
    options.hardware = *hardware;
  }
  // Only `accelopt calibrate` writes the saved profile; an evaluation tells.
  const auto say = settings.say;
  options.on_beyond_calibration = [say](const eval::PeakEvidence& e) {
    say(eval::BeyondCalibrationNote(e, "GPU", "accelopt calibrate --target cuda"));
  };
  return options;
}

targets::TargetKind Registration() {
  targets::TargetKind kind;
  kind.name = "cuda";
  kind.summary = "CUDA kernels (.cu) built with nvcc, run on this machine's NVIDIA GPU";
  kind.isolation = [] {
    return targets::TargetKind::Isolation{
        false,
        "the harness runs as the engine's user in the engine's namespaces (limits only); the saved "
        "hardware profile changes only through `accelopt calibrate`"};
  };
  kind.unavailable = [](const targets::TargetSettings&) -> std::string {
    if (FindNvcc().empty()) return "nvcc is not on $PATH or in /usr/local/cuda/bin";
    auto device = FindDevice();
    return device ? "" : device.error().message;
  };
  kind.make = [](const targets::TargetSettings& settings) -> Result<std::unique_ptr<targets::Target>> {
    auto device = FindDevice();
    auto options = OptionsFor(settings, device ? std::optional<Device>(*device) : std::nullopt);
    if (!options) return options.error();
    return MakeCudaTarget(*options);
  };
  kind.settings = targets::HostCoreSettings();  // of the CPU reference
  kind.calibrator = MakeCudaCalibrator;
  kind.fib_language = targets::FibLanguage{"cuda", "kernel.cu", true};
  kind.free_form_languages = {"cuda", "cu"};
  // The GPU demo: the paged decode tasks, one plan each.
  kind.demo = targets::TargetKind::Demo{
      {"gqa_paged_decode_h32_kv4_d128_ps1", "gqa_paged_decode_h32_kv8_d128_ps1"}, "demo/recording_cuda.jsonl", 1, 1};
  return kind;
}

}  // namespace accelopt::cuda
