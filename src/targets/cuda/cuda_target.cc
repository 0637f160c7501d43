#include "targets/cuda/cuda_target.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <sstream>

#include <sys/mman.h>
#include <sys/prctl.h>
#include <unistd.h>

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
#include "eval/perturb.h"
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

// What the monitor reported (harness.cu: fd 3).
struct HarnessReport {
  std::vector<long long> ns;    // per call, release to answer, in order
  std::map<long, long long> late;  // GPU work of a call found running after it answered
  std::vector<std::pair<long, long long>> stray;  // GPU work running while the kernel's process was stopped
  std::vector<long> inputs_changed, changed_after, checked;
  std::vector<std::pair<long, long>> canaries;  // (call, output) written past
  long long handshake_ns = 0;     // median empty call: prepared and timed as a call, calling nothing
  long long empty_launch_ns = 0;  // the same, launching an empty kernel
  long long probe_ns = 0;         // the monitor's probe after an empty call
  long long probe_slack_ns = 0;   // its spread on an idle GPU: late work is beyond probe_ns + this
  std::string fail_kind, fail_message, device, plan;
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
    long c = 0;
    long long ns = 0;
    if (key == "call") {
      words >> c >> ns;
      r.ns.push_back(ns);
    } else if (key == "late") {
      words >> c >> ns;
      r.late[c] = ns;
    } else if (key == "stray") {
      words >> c >> ns;
      r.stray.emplace_back(c, ns);
    } else if (key == "inputs_changed" || key == "changed_after" || key == "checked") {
      words >> c;
      (key == "checked" ? r.checked : key == "changed_after" ? r.changed_after : r.inputs_changed).push_back(c);
    } else if (key == "canary") {
      long o = 0;
      words >> c >> o;
      r.canaries.emplace_back(c, o);
    } else if (key == "handshake_ns") {
      words >> r.handshake_ns;
    } else if (key == "empty_launch_ns") {
      words >> r.empty_launch_ns;
    } else if (key == "probe_ns") {
      words >> r.probe_ns >> r.probe_slack_ns;
    } else if (key == "device") {
      std::getline(words, r.device);
    } else if (key == "plan") {
      std::getline(words, r.plan);
    } else if (key == "fail") {
      words >> r.fail_kind;
      if (r.fail_kind == "call") {
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

// An anonymous file the monitor writes to (its fd 3 or 4) and the engine
// reads back: no path in any folder the kernel's process could open.
class ReportFile {
 public:
  explicit ReportFile(const char* name) : fd_(memfd_create(name, MFD_CLOEXEC)) {}
  ~ReportFile() {
    if (fd_ >= 0) close(fd_);
  }
  ReportFile(const ReportFile&) = delete;
  ReportFile& operator=(const ReportFile&) = delete;
  int fd() const { return fd_; }
  std::string Read() const {
    std::string text;
    char buffer[1 << 16];
    for (off_t at = 0;;) {
      const ssize_t n = pread(fd_, buffer, sizeof buffer, at);
      if (n <= 0) break;
      text.append(buffer, static_cast<size_t>(n));
      at += n;
    }
    return text;
  }

 private:
  int fd_;
};

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

// One set's inputs but the int32 ones (which every call draws afresh), back
// to back, each in its element type: a base set of harness.cu.
void WriteSet(std::ostream& out, const std::vector<suite::BoundTensor>& inputs, const float* values) {
  for (const auto& t : inputs) {
    if (t.dtype != suite::DType::kInt32) WriteTensor(out, t, values);
    values += t.elements;
  }
}

// One call of the harness's plan: its base set, and the seed its inputs are
// derived with (eval::DeriveInput) when `perturbed`; else the set itself.
struct PlannedCall {
  size_t set = 0;
  bool perturbed = false;
  uint64_t seed = 0;
};

class GpuDeviceLayer : public DeviceLayer {
 public:
  Result<NvccOutcome> Compile(const std::string& source, const std::string& shape_header, const NvccOptions& options,
                              const std::string& scratch_dir) override {
    return CompileCuda(source, shape_header, options, scratch_dir);
  }
  Result<std::string> Harness(const NvccOptions& options) override { return BuildHarness(options); }
  Result<eval::SandboxOutcome> Run(const eval::SandboxRequest& request) override {
    // The kernel's process runs as the engine's user: the engine, like the
    // monitor, is then unreadable and untraceable by it (/proc, ptrace).
    prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
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

  // The correctness calls, one on each drawn set as drawn, then warm-up and
  // timed calls, each on a set drawn here perturbed with a fresh seed (the
  // monitor chooses which timed calls are checked, after they ran).
  std::vector<PlannedCall> Schedule(size_t seeds, bool timed) {
    std::vector<PlannedCall> calls;
    for (size_t s = 0; s < seeds; ++s) calls.push_back({s, false, 0});
    if (!timed) return calls;
    const size_t more = static_cast<size_t>(options_.warmup_calls + std::max(options_.timed_calls, options_.checked_calls));
    for (size_t k = 0; k < more; ++k) calls.push_back({static_cast<size_t>(rng_() % seeds), true, rng_()});
    return calls;
  }

  Result<eval::Expected*> ExpectedFor(const suite::BoundTask& bound, const fs::path& dir) {
    const std::string key = bound.task->name + "/" + bound.shape_name;
    if (expected_ && expected_key_ == key) return expected_.get();
    // No checked inputs drawn ahead: the monitor chooses the checked calls
    // after they ran, and their reference runs then (Expected::AddSlots).
    expected_ = std::make_unique<eval::Expected>(bound, options_.reference, dir.string(), options_.seeds, 1.0, 0);
    expected_key_ = key;
    if (!expected_->status()) {
      Error e = expected_->status().error();
      expected_.reset();
      return e;
    }
    return expected_.get();
  }

  // The base sets: every drawn set but its int32 inputs, back to back.
  static Status WriteSets(const suite::BoundTask& bound, const eval::Expected& expected, const fs::path& path) {
    std::ofstream out(path, std::ios::binary);
    for (size_t s = 0; s < expected.seeds(); ++s) WriteSet(out, bound.inputs, expected.set(s));
    if (!out) return Error{"cannot write the input sets to " + path.string()};
    return Ok{};
  }

  // Every call's int32 inputs (offsets, page ids), back to back in call
  // order: a correctness call's from its set, another's drawn from its seed
  // as eval::DeriveInput draws them for the reference.
  static Status WriteTables(const suite::BoundTask& bound, const eval::Expected& expected,
                            const std::vector<PlannedCall>& calls, const fs::path& path) {
    std::ofstream out(path, std::ios::binary);
    std::vector<float> values;
    for (const PlannedCall& call : calls) {
      const float* base = expected.set(call.set);
      for (size_t i = 0; i < bound.inputs.size(); base += bound.inputs[i].elements, ++i) {
        const suite::BoundTensor& t = bound.inputs[i];
        if (t.dtype != suite::DType::kInt32) continue;
        if (!call.perturbed) {
          WriteTensor(out, t, base);
          continue;
        }
        values.resize(static_cast<size_t>(t.elements));
        eval::DeriveInput(t, base, values.data(), 0, t.elements, call.seed, i);
        WriteTensor(out, t, values.data());
      }
    }
    if (!out) return Error{"cannot write the calls' integer inputs to " + path.string()};
    return Ok{};
  }

  std::string Plan(const suite::BoundTask& bound, const std::vector<PlannedCall>& calls, size_t sets,
                   size_t returned, size_t timed_from, size_t checks) {
    auto list = [](const std::vector<suite::BoundTensor>& tensors, auto field) {
      std::string text;
      for (const auto& t : tensors) text += " " + std::to_string(field(t));
      return text;
    };
    const auto elements = [](const suite::BoundTensor& t) { return t.elements; };
    const auto type = [](const suite::BoundTensor& t) { return static_cast<int>(t.dtype); };
    const auto flip = [](const suite::BoundTensor& t) { return eval::PerturbMask(t); };
    std::string plan = "inputs " + std::to_string(bound.inputs.size()) + list(bound.inputs, elements);
    plan += "\nitypes" + list(bound.inputs, type) + "\nflip" + list(bound.inputs, flip);
    plan += "\noutputs " + std::to_string(bound.outputs.size()) + list(bound.outputs, elements);
    plan += "\notypes" + list(bound.outputs, type);
    plan += "\nsets " + std::to_string(sets) + " sets.bin\ntables tables.bin\ncalls " + std::to_string(calls.size());
    for (const PlannedCall& call : calls) {
      plan += fmt::format("\ncall {} {}", call.set, call.perturbed ? 1 : 0);
      for (size_t i = 0; i < bound.inputs.size(); ++i) {
        const eval::PerturbKey key = eval::PerturbKeyOf(call.seed, i);
        plan += fmt::format(" {} {}", key.lo, key.hi);
      }
    }
    return plan + fmt::format("\nreturned {}\ntimed_from {}\nchecks {}\nflush_bytes 0\n", returned, timed_from, checks);
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

    if (options_.memcheck) {
      // Correctness calls only, under the sanitizer: its slowdown must not reach the timings.
      if (auto s = RunHarness(*harness, built, bound, **expected, Schedule((*expected)->seeds(), false), dir, true,
                              profile);
          !s)
        return s.error();
      if (profile.status != Verdict::kOk) return profile;
    }
    if (auto s = RunHarness(*harness, built, bound, **expected, Schedule((*expected)->seeds(), true), dir, false,
                            profile);
        !s)
      return s.error();
    profile.wall_seconds = NowSeconds() - started;
    return profile;
  }

  // Runs the harness on `calls` and fills the verdict, the errors and (when
  // not under the sanitizer) the latency and score.
  Status RunHarness(const std::string& harness, const CudaBuilt& built, const suite::BoundTask& bound,
                    eval::Expected& expected, const std::vector<PlannedCall>& calls, const fs::path& dir,
                    bool memcheck, Profile& profile) {
    const size_t returned = expected.seeds();
    const size_t timed_from = std::min(calls.size(), returned + static_cast<size_t>(options_.warmup_calls));
    const size_t checks =
        std::min(static_cast<size_t>(std::max(options_.checked_calls, 0)), calls.size() - timed_from);
    // Written again for every run, into the evaluation's own folder; the
    // monitor reads and deletes them before the kernel's process starts.
    if (auto s = WriteFile((dir / "plan.txt").string(),
                           Plan(bound, calls, expected.seeds(), returned, timed_from, checks));
        !s)
      return s;
    if (auto s = WriteSets(bound, expected, dir / "sets.bin"); !s) return s;
    if (auto s = WriteTables(bound, expected, calls, dir / "tables.bin"); !s) return s;
    ReportFile results("accelopt-cuda-results"), outputs("accelopt-cuda-outputs");
    if (results.fd() < 0 || outputs.fd() < 0) return Error{std::string("memfd_create failed: ") + strerror(errno)};
    eval::SandboxRequest request;
    request.workdir = dir.string();
    request.inherit_fds = {results.fd(), outputs.fd()};
    if (memcheck) {
      const std::string sanitizer = fs::path(options_.nvcc.nvcc.empty() ? FindNvcc() : options_.nvcc.nvcc)
                                        .replace_filename("compute-sanitizer")
                                        .string();
      request.argv = {sanitizer, "--tool", "memcheck", "--error-exitcode", "3", "--print-limit", "20"};
    }
    for (const std::string& a : {harness, built.library_, std::string("plan.txt")}) request.argv.push_back(a);
    request.limits.wall_seconds = options_.wall_seconds;
    request.limits.address_space_bytes = 0;  // the CUDA driver reserves far more address space than it uses
    auto run = options_.device_layer->Run(request);
    if (!run) return run.error();
    const HarnessReport report = ReadReport(results.Read());
    profile.run_log = eval::TruncateLog(
        (run->out.empty() ? "" : "--- stdout\n" + run->out) + (run->err.empty() ? "" : "--- stderr\n" + run->err),
        32 << 10);
    profile.phase = memcheck ? "compute-sanitizer memcheck" : "";
    if (report.fail_kind == "setup")
      return Error{"the cuda harness failed:" + report.fail_message +
                   (report.plan.empty() ? "" : " (after reading its plan:" + report.plan + ")")};
    auto verdict = [&](Verdict v, const std::string& why) {
      profile.status = v;
      profile.message = why;
      return Ok{};
    };
    if (run->timed_out)
      return verdict(Verdict::kTimeout, fmt::format("the kernel's process did not finish within {} s "
                                                    "({} calls done)",
                                                    options_.wall_seconds, report.ns.size()));
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
    if (!report.changed_after.empty())
      return verdict(Verdict::kRuntimeError,
                     fmt::format("the kernel's GPU work changed its outputs after its call had returned and they "
                                 "had been taken (call {})",
                                 report.changed_after.front() + 1));
    if (!report.stray.empty())
      return verdict(Verdict::kRuntimeError,
                     fmt::format("GPU work was running while the kernel's process was stopped between calls (the "
                                 "monitor's probe before call {} waited {} longer than on an idle GPU): work the "
                                 "kernel left running, or another process's on this GPU",
                                 report.stray.front().first + 1,
                                 FormatSeconds(static_cast<double>(report.stray.front().second) * 1e-9)));
    if (auto s = Compare(bound, expected, calls, returned, report.checked, outputs, profile);
        !s || profile.status != Verdict::kOk)
      return s;
    if (memcheck) return Ok{};

    // Each timed call less the handshake (what a call that calls nothing
    // takes: the release, the context switch back to the kernel's process,
    // the answer), plus GPU work the probe found still running after it.
    std::vector<double> samples;
    long late_calls = 0;
    for (size_t c = timed_from; c < report.ns.size(); ++c) {
      const auto late = report.late.find(static_cast<long>(c));
      late_calls += late != report.late.end();
      const long long ns = report.ns[c] - report.handshake_ns + (late != report.late.end() ? late->second : 0);
      samples.push_back(static_cast<double>(std::max(ns, 1LL)) * 1e-9);
    }
    profile.latency = eval::Summarize(samples);
    profile.handshake_seconds = static_cast<double>(report.handshake_ns) * 1e-9;
    profile.handshake_subtracted = true;
    for (long long ns : report.ns) profile.kernel_seconds += static_cast<double>(ns) * 1e-9;
    profile.checked_calls = static_cast<int>(report.checked.size());
    profile.conditions = fmt::format(
        "the kernel in a process of its own, stopped between calls; each call on fresh inputs written on the "
        "device by the monitor (its own GPU context), outputs poisoned with NaN, the L2 flushed by a write of "
        "twice its size; timed on the monitor's clock from releasing the kernel's process to its answer after "
        "a device-wide synchronization (every stream), in nanoseconds, less the handshake ({}: the median of "
        "9 calls that call nothing, each prepared and timed as a call, mostly the GPU's switch back to the "
        "kernel's context); GPU work still running after the answer is added ({} of {} calls; the monitor's "
        "probe takes {} on an idle GPU, within {}); a call that launches an empty kernel takes {} before the "
        "subtraction",
        FormatSeconds(profile.handshake_seconds), late_calls, samples.size(),
        FormatSeconds(static_cast<double>(report.probe_ns) * 1e-9),
        FormatSeconds(static_cast<double>(report.probe_slack_ns) * 1e-9),
        FormatSeconds(static_cast<double>(report.empty_launch_ns) * 1e-9));
    profile.message = fmt::format("correct on {} seeds and {} checked timed calls (chosen after they ran)",
                                  expected.seeds(), profile.checked_calls);
    if (!profile.sanitizer.empty()) profile.message += "; " + profile.sanitizer;
    if (measuring_again_) return Ok{};  // for ScoreOnGpu below, which scores the slower of the two
    if (!options_.hardware) {
      profile.message += std::string("; ") + kNotScored;
      return Ok{};
    }
    auto measure_again = [&](Profile& again) {
      measuring_again_ = true;
      Status s = RunHarness(harness, built, bound, expected, Schedule(expected.seeds(), true), dir, false, again);
      measuring_again_ = false;
      return s;
    };
    return ScoreOnGpu(bound, SourceHashOf(built.library_), *options_.hardware, profile, measure_again,
                      options_.on_beyond_calibration);
  }

  // Compares the returned calls' outputs (the correctness calls, on the sets
  // as drawn) and the checked calls' (on their derived inputs, whose
  // reference runs now) with the reference's.
  Status Compare(const suite::BoundTask& bound, eval::Expected& expected, const std::vector<PlannedCall>& calls,
                 size_t returned, const std::vector<long>& checked, const ReportFile& outputs, Profile& profile) {
    const size_t per_set = static_cast<size_t>(eval::ElementsPerSet(bound.outputs));
    const std::string bytes = outputs.Read();
    const size_t expected_bytes = (returned + checked.size()) * per_set * sizeof(float);
    if (bytes.size() != expected_bytes)
      return Error{fmt::format("the cuda harness returned {} bytes of outputs where {} were due", bytes.size(),
                               expected_bytes)};
    std::vector<eval::CheckedInputs> derived;
    for (long c : checked) {
      if (c < 0 || static_cast<size_t>(c) >= calls.size() || !calls[static_cast<size_t>(c)].perturbed)
        return Error{fmt::format("the cuda harness checked call {}, which is not a timed call", c + 1)};
      derived.push_back({calls[static_cast<size_t>(c)].set, calls[static_cast<size_t>(c)].seed});
    }
    size_t first_checked_slot = 0;
    if (!derived.empty()) {
      auto added = expected.AddSlots(bound, derived);
      if (!added) return added.error();
      first_checked_slot = *added;
    }
    std::vector<float> out(per_set);
    ErrorStats worst;
    for (size_t k = 0; k < returned + checked.size(); ++k) {
      std::memcpy(out.data(), bytes.data() + k * per_set * sizeof(float), per_set * sizeof(float));
      const bool seed = k < returned;
      const size_t slot = seed ? k : first_checked_slot + (k - returned);
      const std::string label = seed ? fmt::format("seed {}", k + 1)
                                     : fmt::format("timed call {}", checked[k - returned] + 1);
      std::string why;
      const ErrorStats e = expected.Judge(bound, slot, out.data(), label, profile.tolerance, why);
      if (profile.status == Verdict::kOk && !why.empty()) {
        profile.status = Verdict::kWrongAnswer;
        profile.message = why;
      }
      worst = k == 0 ? e : eval::Worst(worst, e);
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
