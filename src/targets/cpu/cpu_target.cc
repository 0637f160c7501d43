#include "targets/cpu/cpu_target.h"

#include <sched.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <future>
#include <mutex>
#include <optional>
#include <random>
#include <thread>

#include <fmt/core.h>

#include "core/clock.h"
#include "core/hash.h"
#include "core/paths.h"
#include "core/scratch.h"
#include "eval/calls.h"
#include "eval/expected.h"
#include "eval/machine_facts.h"
#include "eval/scoring.h"
#include "targets/cpu/candidate_run.h"
#include "targets/cpu/hardware_store.h"
#include "targets/cpu/symbols.h"

namespace accelopt::cpu {
namespace fs = std::filesystem;
using eval::CompileOptions;
using eval::CompileOutcome;
using eval::Expected;

namespace {

// Where the k-th candidate of a batch is built and run.
fs::path CandidateDir(const fs::path& batch_dir, size_t k) { return batch_dir / ("candidate-" + std::to_string(k)); }

// Where a candidate is built and run for another shape of its task.
fs::path OtherShapeDir(const fs::path& candidate_dir, const std::string& shape) {
  return candidate_dir / ("shape-" + shape);
}

// A kernel must be right for the task, not for one shape and one data set:
// it is checked once more, untimed, on the task's other shapes no larger than
// the evaluated one (larger ones would multiply the cost of every
// evaluation), with inputs drawn at a different scale than the timed ones.
constexpr double kOtherShapeScale = 3;

// Under what conditions each timed call runs, for the user and the planner.
std::string CallConditions(const CpuTargetOptions& options) {
  std::string text =
      "every timed call gets fresh inputs (values never seen by an earlier call) and NaN-poisoned "
      "outputs";
  if (options.timing.flush_caches) text += ", with every argument evicted from the caches (cold: from memory)";
  text += "; between calls the kernel's process is stopped while the engine prepares the next one; " +
          std::to_string(options.cpus.size()) + " core(s)";
  text += options.timing.openmp_active ? "; OpenMP threads spin while waiting (OMP_WAIT_POLICY=ACTIVE), so no call "
                                         "pays a wake-up from sleep"
                                       : "; OpenMP threads wait with the runtime's default policy (libgomp: spin "
                                         "for a count of polls, then sleep); the process is stopped mid-spin between "
                                         "calls, so each call finds its pool still spinning, as back-to-back calls do";
  if (options.bind_openmp) text += "; OpenMP threads bound one per core";
  return text;
}

void RecordCompile(const CompileOutcome& built, Profile& profile) {
  profile.compile_seconds = built.seconds;
  profile.compile_cached = built.cached;
  profile.compile_log = built.log;
  profile.vectorization_report = built.vectorization_report;
  profile.not_vectorized = built.not_vectorized;
  profile.hot_loop = built.hot_loop;
}

class CpuTarget : public targets::Target {
 public:
  explicit CpuTarget(CpuTargetOptions options) : options_(std::move(options)), machine_(DetectMachine()) {
    if (options_.harness_path.empty()) options_.harness_path = HarnessPath();
    if (options_.work_dir.empty()) options_.work_dir = CacheDir() + "/work";
    // Folders left by evaluations that were killed outright.
    SweepStaleScratchDirs(options_.work_dir);
    if (options_.reference_compile.cache_dir.empty()) options_.reference_compile.cache_dir = CacheDir() + "/build";
    if (options_.cpus.empty()) {
      cpu_set_t allowed;
      if (sched_getaffinity(0, sizeof allowed, &allowed) == 0)
        for (int c = 0; c < CPU_SETSIZE; ++c)
          if (CPU_ISSET(c, &allowed)) options_.cpus.push_back(c);
    }
  }

  std::string name() const override { return kCpuTarget; }
  targets::TargetInfo Describe() const override {
    std::string command = options_.kernel_compile.compiler;
    for (const auto& flag : options_.kernel_compile.flags) command += " " + flag;
    targets::TargetInfo info{
        name(), "c++", kKernelExtension, {"cpp", "c++", "cc", "cxx", "c"}, command + " -fPIC -shared", "prompts/cpu"};
    // The vendor anchor: vendor.cpp on OpenBLAS.
    info.vendor_label = "openblas";
    info.vendor_libraries = {"openblas"};
    return info;
  }

  std::string Machine() const override { return machine_.fingerprint; }
  suite::PeakRates Rates() const override { return options_.rates; }

  Json Hardware() const override { return options_.hardware ? ToJson(*options_.hardware) : Json(nullptr); }

  std::string MachineText() const override {
    std::string text = std::to_string(machine_.cores) + " cores, " + std::to_string(machine_.simd_bits) + "-bit SIMD";
    for (const auto& f : machine_.isa) text += " " + f;
    if (std::string caches = DescribeCaches(); !caches.empty()) text += "; caches: " + caches;
    if (options_.hardware)
      text += fmt::format(
          "; measured on this machine: memory bandwidth {:.1f} GB/s (the best of a read-only sum, a non-temporal "
          "copy and a triad with plain and with non-temporal stores, each pass from arrays evicted from the "
          "caches; bytes counted as read plus written, without the write-allocate read a plain store adds), FMA "
          "peak {:.0f} GFLOP/s, non-FMA vector peak {:.0f} GFLOP/s (all cores)",
          options_.hardware->bandwidth_gbs, options_.hardware->peak_mm_gflops, options_.hardware->peak_vec_gflops);
    // Read when first asked (it runs the compiler): what an expert asks next.
    std::call_once(facts_once_, [this] { facts_ = eval::DescribeMachineFacts(eval::ReadCpuInfo(), options_.kernel_compile.compiler); });
    return text + "; " + facts_;
  }

  double MemoryNeededBytes(const suite::BoundTask& bound) const override { return cpu::MemoryNeededBytes(bound); }
  std::vector<std::string> CheckedShapes(const suite::Task& task, const std::string& shape) const override {
    return cpu::CheckedShapes(task, shape);
  }

  bool ComparesSideBySide() const override { return true; }
  Result<targets::PairedResult> Compare(const targets::EvalRequest& a, const targets::EvalRequest& b) override;

  bool Supports(const suite::Task& task) const override {
    std::error_code ec;
    return task.PlainFloat32() && fs::exists(task.baseline_path(kKernelExtension), ec) &&
           fs::exists(task.reference_path(kKernelExtension), ec);
  }

  // Consecutive requests for the same task and shape form a batch that shares
  // its inputs and reference outputs.
  std::vector<Result<std::unique_ptr<targets::Built>>> Build(std::span<const targets::EvalRequest> requests) override;
  std::vector<Result<Profile>> Run(std::span<targets::Built* const> built, const OnResult& on_result) override;

 private:
  // A shape of the task other than the evaluated one, for the untimed extra check.
  struct OtherShape {
    std::string shape;
    Result<suite::BoundTask> bound = Error{""};
  };
  // What the candidates of a batch share: inputs and reference outputs for the
  // evaluated shape and for each other shape (parallel to the OtherShape list).
  struct Shared {
    std::optional<Expected> expected;
    std::vector<std::optional<Expected>> others;
  };
  // One candidate's builds: for the evaluated shape and for each other shape.
  struct Built {
    Result<CompileOutcome> main = Error{""};
    std::vector<Result<CompileOutcome>> others;
    double started = 0;  // steady-clock seconds when the candidate's evaluation began
  };

  std::vector<OtherShape> OtherShapesOf(const targets::EvalRequest& request) const;
  void PrepareShared(const suite::BoundTask& bound, const std::vector<OtherShape>& others, const fs::path& dir,
                     Shared& shared) const;
  std::vector<Built> BuildAll(std::span<const targets::EvalRequest> batch, const suite::BoundTask& bound,
                              const std::vector<OtherShape>& others, const fs::path& dir) const;
  // A batch under way: its requests, builds, shared inputs and references,
  // folder and the device it holds.
  struct Batch {
    std::vector<targets::EvalRequest> requests;
    std::optional<suite::BoundTask> bound;
    std::unique_ptr<ScratchDir> scratch;
    std::vector<OtherShape> others;
    Shared shared;
    std::vector<Built> built;
    std::shared_ptr<eval::DeviceLock> device;
    // Taking the device, drawing the inputs and running the reference: for a
    // Build's first batch while its candidates build, for the others when
    // they first run (no reference runs beside another batch's timed calls).
    // Last, so that it is waited for before what it fills is destroyed.
    std::future<Status> preparing;
    std::optional<Status> prepared;
  };
  // One candidate of a batch, built; the batch lives while any of its candidates does.
  struct CpuBuilt : targets::Built {
    std::shared_ptr<Batch> batch;
    size_t k = 0;
    Profile profile;  ///< the build's
    const Profile& BuildProfile() const override { return profile; }
  };
  // Sets a batch up and builds it; `prepare_now`: its preparation starts
  // meanwhile, else when it is first needed.
  Result<std::shared_ptr<Batch>> Begin(std::span<const targets::EvalRequest> requests, bool prepare_now = true);
  // Takes the device and prepares the batch's inputs and references.
  Status Prepare(Batch& batch);
  // The batch's preparation, waited for (begun now when it was not yet).
  Status Prepared(Batch& batch);
  // The machine-wide device lock, shared by this target's batches: taken
  // when none of them holds it, kept while any does.
  Result<std::shared_ptr<eval::DeviceLock>> HoldDevice(const std::string& purpose);
  Result<Profile> RunOne(Batch& batch, size_t k, Profile profile);
  // The build's part of the k-th candidate's profile: its compile log, and
  // why it cannot run when it does not compile or uses what it may not.
  Result<Profile> BuildProfileOf(Batch& batch, size_t k) const;
  // Whether the batch's inputs and references are ready; counts their
  // preparation against its first candidate.
  Status Precheck(Batch& batch, size_t k, Profile& profile);
  Status Postcheck(Batch& batch, size_t k, Profile& profile);
  // Runs the k-th candidate of the batch in its own kernel process.
  Status RunBuilt(Batch& batch, size_t k, bool timed, Profile& profile) const;
  Status CheckOtherShapes(const std::vector<OtherShape>& others, Built& built, Shared& shared, const fs::path& dir,
                          Profile& profile);
  // The rates this target scores against, with what its hardware profile knows of them.
  eval::ScoringPeaks Peaks() const;
  Status ScoreBeyondPeak(Batch& batch, size_t k, Profile& profile);

  CpuTargetOptions options_;
  std::mutex device_mu_;
  std::weak_ptr<eval::DeviceLock> device_;
  MachineIdentity machine_;  ///< read once: the machine does not change while the target lives
  mutable std::once_flag facts_once_;
  mutable std::string facts_;  ///< eval::DescribeMachineFacts, once MachineText is first called
};

std::vector<CpuTarget::OtherShape> CpuTarget::OtherShapesOf(const targets::EvalRequest& request) const {
  std::vector<OtherShape> others;
  for (const std::string& shape : CheckedShapes(*request.task, request.shape))
    others.push_back({shape, suite::Bind(*request.task, shape)});
  return others;
}

// Draws the batch's inputs and runs the reference on them, for the evaluated
// shape (the inputs of the correctness calls) and for each other shape (one
// set at another scale, untimed).
void CpuTarget::PrepareShared(const suite::BoundTask& bound, const std::vector<OtherShape>& others, const fs::path& dir,
                              Shared& shared) const {
  std::error_code ec;
  fs::create_directories(dir / "reference", ec);
  // The correctness calls' inputs: each seed's set, perturbed as a timed
  // call's is. The checked timed calls' inputs are known only once they ran
  // (each candidate's run has the reference run on them then).
  shared.expected.emplace(bound, ReferenceOptionsOf(options_), (dir / "reference").string(), options_.seeds, 1.0,
                          options_.seeds);
  shared.others.resize(others.size());
  for (size_t i = 0; i < others.size(); ++i) {
    if (!others[i].bound) continue;
    fs::path reference_dir = dir / ("reference-" + others[i].shape);
    fs::create_directories(reference_dir, ec);
    shared.others[i].emplace(*others[i].bound, ReferenceOptionsOf(options_), reference_dir.string(), 1,
                             kOtherShapeScale, 1);
  }
}

// Every build of a batch (each candidate for the evaluated shape and for each
// other shape), run `jobs` at a time, before anything of the batch is timed.
std::vector<CpuTarget::Built> CpuTarget::BuildAll(std::span<const targets::EvalRequest> batch,
                                                  const suite::BoundTask& bound, const std::vector<OtherShape>& others,
                                                  const fs::path& dir) const {
  std::vector<Built> built(batch.size());
  std::vector<std::function<void()>> jobs;
  for (size_t k = 0; k < batch.size(); ++k) {
    built[k].started = NowSeconds();
    built[k].others.assign(others.size(), Error{""});
    CompileOptions compile = options_.kernel_compile;
    compile.libraries.insert(compile.libraries.end(), batch[k].candidate.libraries.begin(),
                             batch[k].candidate.libraries.end());
    const fs::path candidate_dir = CandidateDir(dir, k);
    jobs.push_back([&, k, compile, candidate_dir] {
      built[k].main =
          eval::CompileKernel(batch[k].candidate.source, bound.ShapeHeader(), compile, candidate_dir.string());
    });
    for (size_t i = 0; i < others.size(); ++i) {
      if (!others[i].bound) {
        built[k].others[i] = others[i].bound.error();
        continue;
      }
      const fs::path odir = OtherShapeDir(candidate_dir, others[i].shape);
      std::error_code ec;
      fs::create_directories(odir, ec);
      jobs.push_back([&, k, i, compile, odir] {
        built[k].others[i] =
            eval::CompileKernel(batch[k].candidate.source, others[i].bound->ShapeHeader(), compile, odir.string());
      });
    }
  }
  const size_t workers = std::min(
      jobs.size(),
      static_cast<size_t>(options_.build_jobs > 0 ? options_.build_jobs : std::max<size_t>(1, options_.cpus.size())));
  std::atomic<size_t> next{0};
  std::vector<std::thread> pool;
  for (size_t w = 0; w < workers; ++w)
    pool.emplace_back([&] {
      for (size_t j; (j = next++) < jobs.size();) jobs[j]();
    });
  for (auto& t : pool) t.join();
  return built;
}

Status CpuTarget::CheckOtherShapes(const std::vector<OtherShape>& others, Built& built, Shared& shared,
                                   const fs::path& dir, Profile& profile) {
  for (size_t i = 0; i < others.size(); ++i) {
    const std::string& shape = others[i].shape;
    auto fail = [&](Verdict verdict, const std::string& why) {
      profile.status = verdict;
      profile.message = "on shape '" + shape + "' with inputs scaled x3: " + why;
      return Ok{};
    };
    const auto& build = built.others[i];
    if (!others[i].bound) return fail(Verdict::kRuntimeError, others[i].bound.error().message);
    if (!build) return build.error();
    if (!build->ok)
      return fail(Verdict::kCompileError,
                  "the kernel does not compile:\n" + (build->log.empty() ? "(no diagnostics)" : build->log));
    Expected& expected = *shared.others[i];
    if (!expected.status()) return expected.status().error();
    Profile check;
    check.tolerance = profile.tolerance;
    if (auto s = RunCandidate(*others[i].bound, build->library_path, expected, options_,
                              OtherShapeDir(dir, shape).string(), /*timed=*/false, check);
        !s)
      return s;
    if (check.status != Verdict::kOk) {
      profile.run_log = check.run_log;
      return fail(check.status, check.message);
    }
  }
  return Ok{};
}

// Sets a batch up: its shape bound (refused when too large for the machine),
// its folder and every build; meanwhile, with `prepare_now`, it takes the
// device's lock and, under it, draws its inputs and runs the reference
// (Prepared waits for that). The batch keeps the lock until it is gone.
Result<std::shared_ptr<CpuTarget::Batch>> CpuTarget::Begin(std::span<const targets::EvalRequest> requests,
                                                           bool prepare_now) {
  const targets::EvalRequest& first = requests.front();
  auto batch = std::make_shared<Batch>();
  batch->requests.assign(requests.begin(), requests.end());
  auto bound = suite::Bind(*first.task, first.shape);
  if (!bound) return bound.error();
  if (auto s = CheckMemoryFor(*bound); !s) return s.error();
  batch->bound.emplace(std::move(*bound));
  auto scratch = ScratchDir::Create(options_.work_dir, first.task->name, options_.keep_work);
  if (!scratch) return scratch.error();
  batch->scratch = std::move(*scratch);
  const fs::path& dir = batch->scratch->path();
  batch->others = OtherShapesOf(first);
  for (size_t k = 0; k < requests.size(); ++k) {
    std::error_code ec;
    fs::create_directories(CandidateDir(dir, k), ec);
  }
  if (prepare_now) batch->preparing = std::async(std::launch::async, [this, b = batch.get()] { return Prepare(*b); });
  batch->built = BuildAll(requests, *batch->bound, batch->others, dir);
  return batch;
}

Result<std::shared_ptr<eval::DeviceLock>> CpuTarget::HoldDevice(const std::string& purpose) {
  std::lock_guard lock(device_mu_);
  if (auto held = device_.lock()) return held;
  auto acquired = eval::DeviceLock::Acquire(
      "cpu", purpose, options_.on_device_wait ? options_.on_device_wait : eval::PrintWaitToStderr("cpu"));
  if (!acquired) return acquired.error();
  std::shared_ptr<eval::DeviceLock> held = std::move(*acquired);
  device_ = held;
  return held;
}

Status CpuTarget::Prepare(Batch& batch) {
  if (options_.device_lock) {
    const targets::EvalRequest& first = batch.requests.front();
    auto device = HoldDevice("measuring " + first.task->name + " (" + first.shape + ")");
    if (!device) return device.error();
    batch.device = std::move(*device);
  }
  PrepareShared(*batch.bound, batch.others, batch.scratch->path(), batch.shared);
  return Ok{};
}

Status CpuTarget::Prepared(Batch& batch) {
  if (!batch.prepared) batch.prepared = batch.preparing.valid() ? batch.preparing.get() : Prepare(batch);
  return *batch.prepared;
}

// Every candidate of a batch is built first, all builds in parallel; at the
// same time the batch takes the device and, under its lock, draws the inputs
// and runs the reference once for all candidates (Begin).
std::vector<Result<std::unique_ptr<targets::Built>>> CpuTarget::Build(std::span<const targets::EvalRequest> requests) {
  std::vector<Result<std::unique_ptr<targets::Built>>> out;
  for (size_t i = 0; i < requests.size();) {
    size_t j = i + 1;
    while (j < requests.size() && requests[j].task == requests[i].task && requests[j].shape == requests[i].shape) ++j;
    auto batch = Begin(requests.subspan(i, j - i), /*prepare_now=*/i == 0);
    for (size_t k = 0; k < j - i; ++k) {
      if (!batch) {
        out.push_back(batch.error());
        continue;
      }
      auto profile = BuildProfileOf(**batch, k);
      if (!profile) {
        out.push_back(profile.error());
        continue;
      }
      auto built = std::make_unique<CpuBuilt>();
      built->batch = *batch;
      built->k = k;
      built->profile = std::move(*profile);
      out.push_back(std::unique_ptr<targets::Built>(std::move(built)));
    }
    i = j;
  }
  return out;
}

// The candidates then run one after another, each in its own folder, under
// the device's lock: no timed call shares the machine with a build, a
// reference run or another accelopt process's measurement.
std::vector<Result<Profile>> CpuTarget::Run(std::span<targets::Built* const> built, const OnResult& on_result) {
  std::vector<Result<Profile>> out;
  for (size_t i = 0; i < built.size(); ++i) {
    auto& one = static_cast<CpuBuilt&>(*built[i]);
    out.push_back(RunOne(*one.batch, one.k, one.profile));
    if (on_result) on_result(i, out.back());
  }
  return out;
}

Result<targets::PairedResult> CpuTarget::Compare(const targets::EvalRequest& a, const targets::EvalRequest& b) {
  if (a.task != b.task || a.shape != b.shape) return Error{"compare: both kernels must be for the same task and shape"};
  const targets::EvalRequest requests[2] = {a, b};
  auto begun = Begin(requests);
  if (!begun) return begun.error();
  Batch& batch = **begun;
  targets::PairedResult result;
  Profile* profiles[2] = {&result.a, &result.b};
  bool runnable[2];
  for (size_t k = 0; k < 2; ++k) {
    auto built = BuildProfileOf(batch, k);
    if (!built) return built.error();
    *profiles[k] = std::move(*built);
    runnable[k] = profiles[k]->status == Verdict::kOk;
    if (runnable[k])
      if (auto s = Precheck(batch, k, *profiles[k]); !s) return s.error();
  }
  if (runnable[0] && runnable[1]) {
    auto pair = RunPair(*batch.bound, batch.built[0].main->library_path, batch.built[1].main->library_path,
                        *batch.shared.expected, options_, CandidateDir(batch.scratch->path(), 0).string(),
                        CandidateDir(batch.scratch->path(), 1).string(), result.a, result.b);
    if (!pair) return pair.error();
    if (pair->pairs > 0) result.speedup = *pair;
  } else {
    for (size_t k = 0; k < 2; ++k)
      if (runnable[k])
        if (auto s = RunBuilt(batch, k, options_.timing_enabled, *profiles[k]); !s) return s.error();
  }
  for (size_t k = 0; k < 2; ++k)
    if (runnable[k])
      if (auto s = Postcheck(batch, k, *profiles[k]); !s) return s.error();
  // Scoring may find one of them beyond the roofline: then there is nothing to compare.
  if (result.a.status != Verdict::kOk || result.b.status != Verdict::kOk) result.speedup.reset();
  return result;
}

Result<Profile> CpuTarget::RunOne(Batch& batch, size_t k, Profile profile) {
  if (profile.status != Verdict::kOk) return profile;
  if (auto s = Precheck(batch, k, profile); !s) return s.error();
  if (auto s = RunBuilt(batch, k, options_.timing_enabled, profile); !s) return s.error();
  if (auto s = Postcheck(batch, k, profile); !s) return s.error();
  return profile;
}

Status CpuTarget::RunBuilt(Batch& batch, size_t k, bool timed, Profile& profile) const {
  return RunCandidate(*batch.bound, batch.built[k].main->library_path, *batch.shared.expected, options_,
                      CandidateDir(batch.scratch->path(), k).string(), timed, profile);
}

// Fills what is known before the kernel runs; whether it can run (it
// compiled and imports nothing forbidden).
Result<Profile> CpuTarget::BuildProfileOf(Batch& batch, size_t k) const {
  const targets::EvalRequest& request = batch.requests[k];
  Built& built = batch.built[k];
  Profile profile;
  profile.task = request.task->name;
  profile.shape = request.shape;
  profile.target = name();
  profile.tolerance = request.task->tolerance;
  profile.seeds = options_.seeds;
  if (options_.keep_work) profile.work_dir = CandidateDir(batch.scratch->path(), k).string();
  if (options_.timing_enabled) profile.conditions = CallConditions(options_);
  if (!built.main) return built.main.error();
  RecordCompile(*built.main, profile);
  if (!built.main->ok) {
    profile.status = Verdict::kCompileError;
    profile.message = built.main->refused.empty() ? "the kernel does not compile (see the compile log)"
                                                  : "the kernel is refused before compiling: " + built.main->refused;
    profile.wall_seconds = NowSeconds() - built.started;
    return profile;
  }
  bool allow_blas = !request.candidate.libraries.empty();  // a vendor anchor names its library
  auto forbidden = ForbiddenSymbolUse(built.main->library_path, allow_blas);
  if (!forbidden) return forbidden.error();
  if (*forbidden) {
    profile.status = Verdict::kForbidden;
    profile.message = **forbidden;
    profile.wall_seconds = NowSeconds() - built.started;
  }
  return profile;
}

Status CpuTarget::Precheck(Batch& batch, size_t k, Profile& profile) {
  if (auto s = Prepared(batch); !s) return s;
  Expected& expected = *batch.shared.expected;
  if (!expected.status()) return expected.status().error();
  // Drawn and computed once for the batch: counted where they were waited for.
  if (k == 0) {
    profile.phase_seconds["inputs"] = expected.inputs_seconds();
    profile.phase_seconds["reference"] = expected.reference_seconds();
  }
  return Ok{};
}

// After the kernel ran: the other shapes, then the score.
Status CpuTarget::Postcheck(Batch& batch, size_t k, Profile& profile) {
  const Expected& expected = *batch.shared.expected;
  if (profile.status == Verdict::kOk) {
    profile.message = "correct on " + std::to_string(options_.seeds) + " seeds and " +
                      std::to_string(profile.checked_calls) + " checked timed calls";
    if (!expected.float32_missing().empty())
      profile.message += " (no per-element bound: " + expected.float32_missing() + ")";
    if (auto s = CheckOtherShapes(batch.others, batch.built[k], batch.shared, CandidateDir(batch.scratch->path(), k),
                                  profile);
        !s)
      return s;
  }
  if (profile.status == Verdict::kOk)
    if (auto s = ScoreBeyondPeak(batch, k, profile); !s) return s;
  profile.wall_seconds = NowSeconds() - batch.built[k].started;
  return Ok{};
}

eval::ScoringPeaks CpuTarget::Peaks() const {
  eval::ScoringPeaks peaks;
  peaks.rates = options_.rates;
  peaks.raise_allowance = options_.raise_allowance;
  peaks.raise_spreads = options_.raise_spreads;
  if (const HardwareProfile* h = options_.hardware ? &*options_.hardware : nullptr) {
    peaks.calibrated = true;
    peaks.theoretical.peak_mm_gflops = h->theoretical_mm_gflops;
    peaks.theoretical.peak_vec_gflops = h->theoretical_vec_gflops;
    peaks.spreads = h->spreads;
    peaks.fingerprint = h->machine.fingerprint;
    peaks.measured_at = h->measured_at;
  }
  return peaks;
}

// A correct kernel faster than the roofline is measured again (its slower
// median counts). If it still is, within what the calibration could have
// missed (its spread, an allowance) and below the theoretical peak, it is
// evidence about the machine for the next calibration, told to
// `on_beyond_calibration`; beyond that, no honest measurement explains it:
// suspect. Either way the rates this target scores against stay the
// calibrated ones: no evaluation moves the yardstick.
Status CpuTarget::ScoreBeyondPeak(Batch& batch, size_t k, Profile& profile) {
  if (options_.rates.bandwidth_gbs <= 0) return Ok{};  // no rates, no score
  // A roofline the task loader accepted evaluates; if not, that is the engine's error, never a silent 0%.
  auto counts = suite::CountRoofline(*batch.bound);
  if (!counts) return counts.error();
  eval::ScoringPeaks peaks = Peaks();
  auto proved = eval::ScoreMeasuringAgainBeyondPeak(*counts, peaks, profile, [&](Profile& again) -> Status {
    if (auto s = RunBuilt(batch, k, /*timed=*/true, again); !s) return s;
    if (again.status == Verdict::kOk) profile.phase_seconds["remeasure"] = again.phase_seconds["candidate_process"];
    return Ok{};
  });
  if (!proved) return proved.error();
  if (!options_.on_beyond_calibration) return Ok{};
  for (const eval::ProvedRate& p : *proved)
    options_.on_beyond_calibration({p.figure, p.value, p.previous, ContentHash(batch.requests[k].candidate.source),
                                    profile.task, profile.shape, IsoUtcNow()});
  return Ok{};
}

}  // namespace

// Bytes of memory the machine can still give (MemAvailable), or 0 when unknown.
eval::QuietWait QuietWaitOf(const TimingOptions& timing) {
  eval::QuietWait wait;
  wait.share = timing.disturbed_share;
  wait.max_seconds = timing.quiet_wait_seconds;
  return wait;
}

eval::KernelRunOptions RunOptionsOf(const CpuTargetOptions& options) {
  return {options.cpus,         options.bind_openmp,  options.timing.openmp_active,
          options.wall_seconds, options.memory_bytes, options.harness_path};
}

eval::ReferenceOptions ReferenceOptionsOf(const CpuTargetOptions& options) {
  return {RunOptionsOf(options), options.reference_compile};
}

double MemoryNeededBytes(const suite::BoundTask& bound) { return 16.0 * static_cast<double>(eval::Elements(bound)); }

Status CheckMemoryFor(const suite::BoundTask& bound) {
  const double needed = MemoryNeededBytes(bound);
  const double available = eval::AvailableMemoryBytes();
  if (available > 0 && needed > available) {
    char text[320];
    std::snprintf(text, sizeof text,
                  "task '%s' at shape '%s' needs at least %.1f GB of memory (its %ld argument elements held as the "
                  "kernel's arguments, an input set and a double-precision reference), but this machine has %.1f GB "
                  "available",
                  bound.task->name.c_str(), bound.shape_name.c_str(), needed / 1e9, eval::Elements(bound),
                  available / 1e9);
    return Error{text};
  }
  return Ok{};
}

std::vector<std::string> CheckedShapes(const suite::Task& task, const std::string& shape) {
  auto evaluated = suite::Bind(task, shape);
  const long limit = evaluated ? eval::Elements(*evaluated) : 0;
  std::vector<std::string> others;
  for (const auto& [name, params] : task.shapes) {
    if (name == shape) continue;
    auto bound = suite::Bind(task, name);
    if (!bound || eval::Elements(*bound) <= limit) others.push_back(name);
  }
  return others;
}

std::unique_ptr<targets::Target> MakeCpuTarget(const CpuTargetOptions& options) {
  return std::make_unique<CpuTarget>(options);
}

}  // namespace accelopt::cpu
