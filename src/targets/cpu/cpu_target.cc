#include "targets/cpu/cpu_target.h"

#include <sched.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <future>
#include <map>
#include <random>
#include <sstream>

#include "core/clock.h"
#include "core/hash.h"
#include "core/paths.h"
#include "eval/inputs.h"
#include "eval/perturb.h"
#include "eval/sandbox.h"
#include "eval/shared_memory.h"
#include "eval/trapped_calls.h"
#include "targets/cpu/symbols.h"

namespace accelopt::cpu {
namespace fs = std::filesystem;
using eval::Profile;
using eval::Verdict;

namespace {

// What the harness child reported, parsed from its fd 3 event stream.
struct HarnessRun {
  eval::SandboxOutcome outcome;
  std::vector<Json> events;
  std::string phase = "start";
  std::string foreign;  // the first line on fd 3 the harness did not write
  const Json* Find(const std::string& kind) const {
    for (const auto& e : events)
      if (e.value("event", "") == kind) return &e;
    return nullptr;
  }
};

// Only lines that carry this run's token are the harness's; the first other
// one is kept: the kernel wrote to the event channel.
HarnessRun ParseEvents(eval::SandboxOutcome outcome, const std::string& token) {
  HarnessRun run;
  std::istringstream lines(outcome.events);
  std::string line;
  while (std::getline(lines, line)) {
    Json event = Json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (!event.is_object() || event.value("token", "") != token) {
      if (run.foreign.empty() && !line.empty()) run.foreign = line.substr(0, 80);
      continue;
    }
    if (event.value("event", "") == "phase") run.phase = event.value("phase", run.phase);
    run.events.push_back(std::move(event));
  }
  run.outcome = std::move(outcome);
  return run;
}

Json TensorsJson(const std::vector<suite::BoundTensor>& tensors) {
  Json list = Json::array();
  for (const auto& t : tensors) list.push_back({{"name", t.name}, {"count", t.elements}});
  return list;
}

// Elements of all outputs (or inputs) of one seed, back to back.
long ElementsPerSeed(const std::vector<suite::BoundTensor>& tensors) {
  long n = 0;
  for (const auto& t : tensors) n += t.elements;
  return n;
}

// Elements of all inputs and outputs together (one seed).
long Elements(const suite::BoundTask& bound) { return ElementsPerSeed(bound.inputs) + ElementsPerSeed(bound.outputs); }

long DataBytes(const suite::BoundTask& bound) {
  return Elements(bound) * 8;  // doubles for the reference outputs, copies of the inputs
}

// Where a candidate is built and run for another shape of its task.
fs::path OtherShapeDir(const fs::path& candidate_dir, const std::string& shape) {
  return candidate_dir / ("shape-" + shape);
}

std::vector<uint64_t> FreshSeeds(int count) {
  std::random_device entropy;
  std::vector<uint64_t> seeds;
  for (int i = 0; i < count; ++i) seeds.push_back((uint64_t{entropy()} << 32) | entropy());
  return seeds;
}

std::string RunLog(const eval::SandboxOutcome& o) {
  std::string log;
  if (!o.out.empty()) log += "--- stdout" + std::string(o.out_truncated ? " (truncated)" : "") + "\n" + o.out;
  if (!o.err.empty()) log += "--- stderr" + std::string(o.err_truncated ? " (truncated)" : "") + "\n" + o.err;
  return log;
}

// Turns a child that did not finish normally into a verdict. Returns false when it finished.
bool ClassifyFailure(const HarnessRun& run, Verdict& verdict, std::string& message) {
  const auto& o = run.outcome;
  const std::string during = " during " + run.phase;
  if (!run.foreign.empty()) {
    verdict = Verdict::kForbidden;
    message = "the kernel wrote to the evaluator's event channel (fd 3): \"" + run.foreign + "\"";
    return true;
  }
  // A trapped call reports itself, unless signals were blocked (posix_spawn
  // blocks them all): then the kernel kills with SIGSYS directly.
  const Json* forbidden = run.Find("forbidden");
  if (forbidden || o.term_signal == SIGSYS) {
    verdict = Verdict::kForbidden;
    message = "the kernel made a forbidden system call (" +
              (forbidden ? eval::DescribeTrappedCall(forbidden->value("syscall", -1))
                         : std::string("blocked while signals were blocked")) +
              ")" + during;
    return true;
  }
  if (const Json* e = run.Find("violation")) {
    std::string what = e->value("message", "");
    // Wrong results (inputs or outputs changed when they must not be); else a
    // fault such as a write past the end of an argument.
    bool wrong =
        what.rfind("modified", 0) == 0 || what.rfind("changed", 0) == 0 || what.rfind("kept computing", 0) == 0;
    verdict = wrong ? Verdict::kWrongAnswer : Verdict::kRuntimeError;
    message = "the kernel " + what;
    if (e->contains("seed_index")) message += " (seed " + std::to_string(e->value("seed_index", 0)) + ")";
    return true;
  }
  if (o.timed_out) {
    verdict = Verdict::kTimeout;
    message =
        "killed after the wall-clock limit of " + std::to_string(static_cast<int>(o.wall_seconds)) + " s" + during;
    return true;
  }
  const Json* sig = run.Find("signal");
  int signal_number = sig ? sig->value("signal", 0) : o.term_signal;
  bool alloc_failed = sig && sig->value("alloc_failed", false);
  if (signal_number == SIGXCPU || o.term_signal == SIGXCPU) {
    verdict = Verdict::kTimeout;
    message = "CPU time limit exceeded" + during;
    return true;
  }
  if (signal_number == SIGXFSZ) {
    verdict = Verdict::kResourceLimit;
    message = "file size limit exceeded" + during;
    return true;
  }
  if (alloc_failed) {
    verdict = Verdict::kResourceLimit;
    message = "memory limit: an allocation failed, then " + eval::SignalName(signal_number) + during;
    return true;
  }
  if (signal_number != 0) {
    verdict = o.term_signal == SIGKILL && !sig ? Verdict::kResourceLimit : Verdict::kRuntimeError;
    message = "killed by " + eval::SignalName(signal_number) + during;
    return true;
  }
  if (const Json* e = run.Find("load_error")) {
    verdict = Verdict::kCompileError;
    message = "cannot load the kernel: " + e->value("message", "");
    return true;
  }
  if (!run.Find("done")) {
    verdict = Verdict::kRuntimeError;
    message =
        "the process exited with code " + std::to_string(o.exit_code) + during + " (a kernel must return, not exit)";
    return true;
  }
  return false;
}

class CpuTarget : public targets::Target {
 public:
  explicit CpuTarget(CpuTargetOptions options) : options_(std::move(options)) {
    if (options_.harness_path.empty()) options_.harness_path = HarnessPath();
    if (options_.work_dir.empty()) options_.work_dir = CacheDir() + "/work";
    if (options_.reference_compile.cache_dir.empty()) options_.reference_compile.cache_dir = CacheDir() + "/build";
    if (options_.cpus.empty()) {
      cpu_set_t allowed;
      if (sched_getaffinity(0, sizeof allowed, &allowed) == 0)
        for (int c = 0; c < CPU_SETSIZE; ++c)
          if (CPU_ISSET(c, &allowed)) options_.cpus.push_back(c);
    }
  }

  std::string name() const override { return "cpu"; }

  bool Supports(const suite::Task& task) const override {
    std::error_code ec;
    return fs::exists(task.baseline_path(), ec) && fs::exists(task.reference_path(), ec);
  }

  // Consecutive requests for the same task and shape form a batch that shares
  // its inputs and reference outputs.
  std::vector<Result<Profile>> Evaluate(std::span<const targets::EvalRequest> requests,
                                        const OnResult& on_result) override {
    std::vector<Result<Profile>> out;
    for (size_t i = 0; i < requests.size();) {
      size_t j = i + 1;
      while (j < requests.size() && requests[j].task == requests[i].task && requests[j].shape == requests[i].shape) ++j;
      EvaluateBatch(requests.subspan(i, j - i), out, on_result);
      i = j;
    }
    return out;
  }

 private:
  // Inputs drawn and reference outputs computed, for one batch of evaluations.
  struct Expected {
    Result<eval::SharedMemory> inputs = Error{"inputs not drawn"};  // one set per seed
    // Reference outputs: one set per seed, then one per checked call computed
    // beforehand (the final call's and the first series'); the other series'
    // are computed only if those series run.
    Result<eval::SharedMemory> outputs = Error{"reference not run"};
    size_t seeds = 0, slots = 0, precomputed = 0;  // slots: outputs the candidate may hand back
    Json timing_plan = Json::object();             // how the timed calls perturb the inputs (none when untimed)
    double inputs_seconds = 0, reference_seconds = 0;
    // Reference outputs of checked calls of later series, by slot, computed
    // when a candidate first runs those series.
    std::map<size_t, std::vector<double>> later;
  };
  Expected PrepareExpected(const suite::BoundTask& bound, const std::vector<uint64_t>& seeds, const fs::path& dir,
                           double scale = 1, bool timed = true);
  // A shape of the task other than the evaluated one, for the untimed extra check.
  struct OtherShape {
    std::string shape;
    Result<suite::BoundTask> bound = Error{""};
  };
  std::vector<OtherShape> OtherShapesOf(const targets::EvalRequest& request) const;
  // What the candidates of a batch share: inputs and reference outputs for the
  // evaluated shape and for each other shape (parallel to the OtherShape list).
  struct Shared {
    Expected expected;
    std::vector<Expected> others;
  };
  Shared PrepareShared(const suite::BoundTask& bound, const std::vector<OtherShape>& others, const fs::path& dir);
  // One candidate's builds: for the evaluated shape and for each other shape.
  struct Built {
    Result<CompileOutcome> main = Error{""};
    std::vector<Result<CompileOutcome>> others;
    double started = 0;  // steady-clock seconds when the candidate's evaluation began
  };
  Built Build(const targets::EvalRequest& request, const suite::BoundTask& bound, const std::vector<OtherShape>& others,
              const fs::path& dir);
  void EvaluateBatch(std::span<const targets::EvalRequest> batch, std::vector<Result<Profile>>& out,
                     const OnResult& on_result);
  Result<Profile> EvaluateBuilt(const targets::EvalRequest& request, const suite::BoundTask& bound, Built& built,
                                Shared& shared, const std::vector<OtherShape>& others, const fs::path& dir,
                                bool prepared_here);
  void CheckOtherShapes(const std::vector<OtherShape>& others, Built& built, Shared& shared, const fs::path& dir,
                        Profile& profile);
  Status RunCandidate(const suite::BoundTask& bound, const std::string& library, Expected& expected,
                      const fs::path& dir, Profile& profile, bool timed = true);
  Result<HarnessRun> RunHarness(Json spec, const fs::path& dir, const suite::BoundTask& bound, bool candidate,
                                const eval::SharedMemory& inputs, const eval::SharedMemory& outputs);
  Result<eval::SharedMemory> RunReference(const suite::BoundTask& bound, size_t seeds, const fs::path& dir,
                                          const eval::SharedMemory& inputs);
  // One set of outputs to compare with its reference, and what to call it.
  struct Slot {
    const float* outputs;
    const double* reference;
    std::string label;
  };
  void Compare(const suite::BoundTask& bound, const std::vector<Slot>& slots, Profile& profile);
  Status CompareWithReference(const suite::BoundTask& bound, Expected& expected, const Json& result,
                              const eval::SharedMemory& outputs, const fs::path& dir, Profile& profile);
  void Score(const suite::BoundTask& bound, const Json& result, Profile& profile);

  CpuTargetOptions options_;
};

// The spec travels on fd 6 (shared memory), never as a file in the folder the
// kernel runs in; it is kept as a file only with --keep, for debugging.
Result<HarnessRun> CpuTarget::RunHarness(Json spec, const fs::path& dir, const suite::BoundTask& bound, bool candidate,
                                         const eval::SharedMemory& inputs, const eval::SharedMemory& outputs) {
  const std::string token = Hex64(FreshSeeds(1)[0]);
  spec["token"] = token;
  const std::string text = spec.dump();
  auto spec_memory = eval::SharedMemory::Create("accelopt-spec", text.size());
  if (!spec_memory) return spec_memory.error();
  std::memcpy(spec_memory->data(), text.data(), text.size());
  if (auto s = spec_memory->Seal(); !s) return s.error();
  if (options_.keep_work)
    if (auto s = WriteJsonFile((dir / (candidate ? "candidate.json" : "reference.json")).string(), spec); !s)
      return s.error();
  eval::SandboxRequest request;
  request.argv = {options_.harness_path};
  request.workdir = dir.string();
  request.cpus = options_.cpus;
  request.inherit_fds = {inputs.fd(), outputs.fd(), spec_memory->fd()};
  // OpenBLAS's idle workers otherwise spin for about 2^28 cycles after each
  // call, which the watch after a kernel returns would take for work still going on.
  request.env = {"OPENBLAS_THREAD_TIMEOUT=4"};
  if (options_.bind_openmp) request.env.insert(request.env.end(), {"OMP_PROC_BIND=close", "OMP_PLACES=cores"});
  request.limits.wall_seconds = options_.wall_seconds;
  request.limits.address_space_bytes =
      options_.memory_bytes > 0 ? options_.memory_bytes : (2L << 30) + 4 * DataBytes(bound);
  request.limits.file_size_bytes = 2 * DataBytes(bound) + (64L << 20);
  request.limits.max_processes = 0;
  auto outcome = eval::RunSandboxed(request);
  if (!outcome) return outcome.error();
  return ParseEvents(std::move(*outcome), token);
}

// Draws every seed's inputs into sealed shared memory: the children can read
// them but nobody can change them any more.
// `scale` multiplies every distribution's parameters (mean and spread, or both
// bounds), keeping signs: domains such as "positive" survive it.
Result<eval::SharedMemory> GenerateInputs(const suite::BoundTask& bound, const std::vector<uint64_t>& seeds,
                                          double scale) {
  long per_seed = ElementsPerSeed(bound.inputs);
  auto memory = eval::SharedMemory::Create("accelopt-inputs", seeds.size() * per_seed * sizeof(float));
  if (!memory) return memory.error();
  float* p = static_cast<float*>(memory->data());
  for (uint64_t seed : seeds)
    for (size_t i = 0; i < bound.inputs.size(); ++i) {
      const auto& t = bound.inputs[i];
      eval::FillRandom(p, t.elements, seed, i, {t.dist.kind == "normal", scale * t.dist.a, scale * t.dist.b});
      p += t.elements;
    }
  if (auto s = memory->Seal(); !s) return s.error();
  return memory;
}

// The reference's inputs for checked timed calls: the first `copied` seeds'
// sets as they are, then the perturbed set of each call (as the harness builds it).
Result<eval::SharedMemory> WithCheckedCalls(const suite::BoundTask& bound, const eval::SharedMemory& sets,
                                            size_t copied, const std::vector<Json>& calls) {
  const long per_seed = ElementsPerSeed(bound.inputs);
  auto memory =
      eval::SharedMemory::Create("accelopt-reference-inputs", (copied + calls.size()) * per_seed * sizeof(float));
  if (!memory) return memory.error();
  const float* base = static_cast<const float*>(sets.data());
  float* p = static_cast<float*>(memory->data());
  std::memcpy(p, base, copied * per_seed * sizeof(float));
  p += copied * per_seed;
  for (const auto& call : calls) {
    const float* set = base + call.at("set").get<size_t>() * per_seed;
    for (size_t i = 0; i < bound.inputs.size(); ++i) {
      eval::Perturb(set, p, bound.inputs[i].elements, call.at("seed").get<uint64_t>(), i);
      set += bound.inputs[i].elements;
      p += bound.inputs[i].elements;
    }
  }
  if (auto s = memory->Seal(); !s) return s.error();
  return memory;
}

Result<eval::SharedMemory> CpuTarget::RunReference(const suite::BoundTask& bound, size_t seeds, const fs::path& dir,
                                                   const eval::SharedMemory& inputs) {
  const suite::Task& task = *bound.task;
  auto source = ReadFile(task.reference_path());
  if (!source) return source.error();
  auto built = CompileKernel(*source, bound.ShapeHeader(), options_.reference_compile, dir.string());
  if (!built) return built.error();
  if (!built->ok) return Error{task.reference_path() + " does not compile:\n" + built->log};
  // The expected outputs live only in shared memory that the candidate's process never receives.
  auto outputs =
      eval::SharedMemory::Create("accelopt-reference", seeds * ElementsPerSeed(bound.outputs) * sizeof(double));
  if (!outputs) return outputs.error();
  Json spec = {{"mode", "reference"},
               {"library", built->library_path},
               {"symbol", "reference"},
               {"inputs", TensorsJson(bound.inputs)},
               {"outputs", TensorsJson(bound.outputs)},
               {"seeds", seeds}};
  auto run = RunHarness(spec, dir, bound, false, inputs, *outputs);
  if (!run) return run.error();
  Verdict verdict;
  std::string message;
  if (ClassifyFailure(*run, verdict, message))
    return Error{"the reference of task '" + task.name + "' failed: " + message + "\n" + RunLog(run->outcome)};
  return std::move(*outputs);
}

void CpuTarget::Compare(const suite::BoundTask& bound, const std::vector<Slot>& slots, Profile& profile) {
  eval::ErrorStats worst;
  bool first = true;
  for (const Slot& slot : slots) {
    const double* ref = slot.reference;
    const float* out = slot.outputs;
    for (const auto& t : bound.outputs) {
      size_t n = static_cast<size_t>(t.elements);
      eval::ErrorStats e = eval::CompareOutputs(out, ref, n);
      out += n;
      ref += n;
      if ((!e.finite() || e.rel_l2 > profile.tolerance) && profile.message.empty())
        profile.message = "output '" + t.name + "' (" + slot.label + "): " +
                          (e.finite() ? "relative L2 error " + std::to_string(e.rel_l2) + " exceeds " +
                                            std::to_string(profile.tolerance)
                                      : std::to_string(e.nan_count) + " NaN and " + std::to_string(e.inf_count) +
                                            " Inf of " + std::to_string(e.elements) + " values");
      worst = first ? e : eval::Worst(worst, e);
      first = false;
    }
  }
  profile.errors = worst;
  if (!profile.message.empty()) profile.status = Verdict::kWrongAnswer;
}

void CpuTarget::Score(const suite::BoundTask& bound, const Json& result, Profile& profile) {
  std::vector<std::vector<double>> series;
  for (const auto& s : result.value("series", Json::array())) series.push_back(s.get<std::vector<double>>());
  if (series.empty() || series.front().empty()) return;
  profile.latency = eval::MostStable(series);
  for (const auto& s : series)
    for (double t : s) profile.kernel_seconds += t;
  if (result.contains("counters") && result["counters"].contains("cycles")) {
    profile.counters.available = true;
    profile.counters.cycles = result["counters"].value("cycles", 0.0);
    profile.counters.instructions = result["counters"].value("instructions", 0.0);
    profile.counters.cache_misses = result["counters"].value("cache_misses", 0.0);
  } else {
    profile.counters.unavailable_reason = result.value("counters_error", "hardware counters not supported here");
  }
  auto counts = suite::CountRoofline(bound);
  if (!counts || options_.rates.bandwidth_gbs <= 0) return;
  auto t = suite::ComputeRooflineTime(*counts, options_.rates);
  double median = profile.latency->median_s;
  profile.bound = t.bound;
  profile.roofline_seconds = t.seconds;
  profile.percent_of_peak = 100.0 * t.seconds / median;
  profile.achieved_gbs = counts->min_bytes / median / 1e9;
  profile.achieved_gflops = (counts->flops_mm + counts->flops_vec) / median / 1e9;
}

// A scratch folder for one evaluation, removed afterwards unless kept.
class ScratchDir {
 public:
  static Result<std::unique_ptr<ScratchDir>> Create(const fs::path& parent, const std::string& task, bool keep) {
    static std::atomic<int> counter{0};
    std::random_device entropy;
    fs::path dir = parent / (task + "-" + std::to_string(getpid()) + "-" + std::to_string(counter++) + "-" +
                             std::to_string(entropy() % 100000));
    std::error_code ec;
    fs::create_directories(dir, ec);
    if (ec) return Error{"cannot create evaluation folder " + dir.string() + ": " + ec.message()};
    return std::unique_ptr<ScratchDir>(new ScratchDir(dir, keep));
  }
  ~ScratchDir() {
    std::error_code ec;
    if (!keep_) fs::remove_all(path_, ec);
  }
  const fs::path& path() const { return path_; }

 private:
  ScratchDir(fs::path path, bool keep) : path_(std::move(path)), keep_(keep) {}
  fs::path path_;
  bool keep_;
};

Json TimingJson(const TimingOptions& t, bool enabled, double tolerance, const Json& plan) {
  Json j = {{"enabled", enabled},
            {"tolerance", tolerance},
            {"warmup", t.warmup},
            {"min_calls", t.min_calls},
            {"max_calls", t.max_calls},
            {"budget_seconds", t.budget_seconds},
            {"spread_tolerance", t.spread_tolerance},
            {"max_series", t.max_series},
            {"flush", t.flush_caches}};
  j.update(plan);
  return j;
}

void RecordCompile(const CompileOutcome& built, Profile& profile) {
  profile.compile_seconds = built.seconds;
  profile.compile_cached = built.cached;
  profile.compile_log = built.log;
  profile.vectorization_report = built.vectorization_report;
}

}  // namespace

CpuTarget::Expected CpuTarget::PrepareExpected(const suite::BoundTask& bound, const std::vector<uint64_t>& seeds,
                                               const fs::path& dir, double scale, bool timed) {
  Expected e;
  e.seeds = e.slots = seeds.size();
  auto start = std::chrono::steady_clock::now();
  e.inputs = GenerateInputs(bound, seeds, scale);
  if (!e.inputs) return e;
  Result<eval::SharedMemory> checked_inputs = Error{""};
  const eval::SharedMemory* reference_inputs = &*e.inputs;
  if (timed && options_.timing_enabled) {
    // Which perturbations the checked timed calls use: per_series for each
    // series, then one for the watched call after them.
    const TimingOptions& t = options_.timing;
    std::vector<uint64_t> fresh = FreshSeeds(1 + 1 + t.checked_per_series * t.max_series);
    Json checked = Json::array();
    for (size_t j = 1; j < fresh.size(); ++j) checked.push_back({{"set", (j - 1) % seeds.size()}, {"seed", fresh[j]}});
    e.timing_plan = {{"perturb_seed", fresh[0]}, {"checked_per_series", t.checked_per_series}, {"checked", checked}};
    e.slots += checked.size();
    e.precomputed = std::min<size_t>(checked.size(), 1 + t.checked_per_series);
    checked_inputs = WithCheckedCalls(bound, *e.inputs, seeds.size(),
                                      {checked.begin(), checked.begin() + static_cast<long>(e.precomputed)});
    if (!checked_inputs) {
      e.inputs = checked_inputs.error();
      return e;
    }
    reference_inputs = &*checked_inputs;
  }
  e.inputs_seconds = SecondsSince(start);
  start = std::chrono::steady_clock::now();
  e.outputs = RunReference(bound, e.seeds + e.precomputed, dir, *reference_inputs);
  e.reference_seconds = SecondsSince(start);
  return e;
}

// Compares every seed's outputs and those of the checked timed calls the
// candidate reported with their reference outputs; runs the reference for the
// checked calls of series that were not computed beforehand.
Status CpuTarget::CompareWithReference(const suite::BoundTask& bound, Expected& expected, const Json& result,
                                       const eval::SharedMemory& outputs, const fs::path& dir, Profile& profile) {
  const long per_slot = ElementsPerSeed(bound.outputs);
  auto out_at = [&](size_t slot) { return static_cast<const float*>(outputs.data()) + slot * per_slot; };
  auto ref_at = [&](size_t slot) { return static_cast<const double*>(expected.outputs->data()) + slot * per_slot; };
  std::vector<Slot> slots;
  for (size_t s = 0; s < expected.seeds; ++s) slots.push_back({out_at(s), ref_at(s), "seed " + std::to_string(s)});
  std::vector<std::pair<size_t, std::string>> later;  // checked calls of later series
  std::vector<size_t> missing;                        // ... whose reference is not computed yet
  for (const auto& c : result.value("checked_calls", Json::array())) {
    size_t slot = c.value("slot", size_t{0});
    std::string label = c.value("label", "a timed call") + ", with fresh inputs";
    if (slot < expected.seeds || slot >= expected.slots)
      return Error{"evaluation harness: checked call " + std::to_string(slot) + " out of range"};
    if (slot < expected.seeds + expected.precomputed) {
      slots.push_back({out_at(slot), ref_at(slot), label});
      continue;
    }
    later.emplace_back(slot, label);
    if (!expected.later.count(slot)) missing.push_back(slot);
  }
  if (!missing.empty()) {
    std::vector<Json> calls;
    for (size_t slot : missing) calls.push_back(expected.timing_plan["checked"][slot - expected.seeds]);
    auto inputs = WithCheckedCalls(bound, *expected.inputs, 0, calls);
    if (!inputs) return inputs.error();
    auto start = std::chrono::steady_clock::now();
    auto reference = RunReference(bound, calls.size(), dir, *inputs);
    if (!reference) return reference.error();
    profile.phase_seconds["reference_after"] = SecondsSince(start);
    for (size_t k = 0; k < missing.size(); ++k) {
      const double* p = static_cast<const double*>(reference->data()) + static_cast<long>(k) * per_slot;
      expected.later[missing[k]].assign(p, p + per_slot);
    }
  }
  for (const auto& [slot, label] : later) slots.push_back({out_at(slot), expected.later.at(slot).data(), label});
  auto compare_start = std::chrono::steady_clock::now();
  Compare(bound, slots, profile);
  profile.phase_seconds["compare"] = SecondsSince(compare_start);
  return Ok{};
}

// Runs the built candidate against the expected outputs and fills the profile.
Status CpuTarget::RunCandidate(const suite::BoundTask& bound, const std::string& library, Expected& expected,
                               const fs::path& dir, Profile& profile, bool timed) {
  const size_t seeds = expected.seeds;
  Json spec = {{"mode", "candidate"},
               {"library", library},
               {"symbol", "kernel"},
               {"inputs", TensorsJson(bound.inputs)},
               {"outputs", TensorsJson(bound.outputs)},
               {"seeds", seeds},
               {"counters", options_.counters},
               {"seccomp", true},
               {"timing", TimingJson(options_.timing, options_.timing_enabled && timed, bound.task->tolerance,
                                     expected.timing_plan)}};
  auto outputs =
      eval::SharedMemory::Create("accelopt-outputs", expected.slots * ElementsPerSeed(bound.outputs) * sizeof(float));
  if (!outputs) return outputs.error();
  // NaN until the child hands back a seed's outputs: nothing unwritten can pass.
  std::fill_n(static_cast<float*>(outputs->data()), outputs->size() / sizeof(float), NAN);
  auto run = RunHarness(spec, dir, bound, true, *expected.inputs, *outputs);
  if (!run) return run.error();
  profile.phase_seconds["candidate_process"] = run->outcome.wall_seconds;
  profile.run_log = eval::TruncateLog(RunLog(run->outcome), 64 << 10);
  profile.phase = run->phase;
  if (const Json* e = run->Find("harness_error")) return Error{"evaluation harness: " + e->value("message", "")};
  if (ClassifyFailure(*run, profile.status, profile.message)) return Ok{};

  const Json* result = run->Find("result");
  if (!result) {
    profile.status = Verdict::kRuntimeError;
    profile.message = "the process finished without reporting a result" + std::string(" (during ") + run->phase + ")";
    return Ok{};
  }
  if (auto s = CompareWithReference(bound, expected, *result, *outputs, dir, profile); !s) return s;
  profile.checked_calls = static_cast<int>(result->value("checked_calls", Json::array()).size());
  profile.kernel_seconds = result->value("correctness_seconds", 0.0) + result->value("warmup_seconds", 0.0);
  profile.phase_seconds["timed_call_setup"] = result->value("setup_seconds", 0.0);
  if (profile.status != Verdict::kOk) return Ok{};
  Score(bound, *result, profile);
  profile.message = "correct on " + std::to_string(seeds) + " seeds and " + std::to_string(profile.checked_calls) +
                    " checked timed calls";
  // Faster than the roofline is physically impossible: a broken measurement or a trick.
  if (profile.percent_of_peak > 100) {
    profile.status = Verdict::kSuspect;
    char why[256];
    std::snprintf(why, sizeof why,
                  "correct, but %.1f%% of peak: the median latency is below the roofline time T = %.3g s; not "
                  "trusted (if the machine was busy when calibrated, run `accelopt calibrate --force`)",
                  profile.percent_of_peak, profile.roofline_seconds);
    profile.message = why;
  }
  return Ok{};
}

// A kernel must be right for the task, not for one shape and one data set:
// it is checked once more, untimed, on the task's other shapes no larger than
// the evaluated one (larger ones would multiply the cost of every
// evaluation), with inputs drawn at a different scale than the timed ones.
constexpr double kOtherShapeScale = 3;

std::vector<CpuTarget::OtherShape> CpuTarget::OtherShapesOf(const targets::EvalRequest& request) const {
  auto evaluated = suite::Bind(*request.task, request.shape);
  const long limit = evaluated ? Elements(*evaluated) : 0;
  std::vector<OtherShape> others;
  for (const auto& [shape, params] : request.task->shapes) {
    if (shape == request.shape) continue;
    auto bound = suite::Bind(*request.task, shape);
    // A shape that does not bind is kept, to be reported.
    if (!bound || Elements(*bound) <= limit) others.push_back({shape, std::move(bound)});
  }
  return others;
}

CpuTarget::Shared CpuTarget::PrepareShared(const suite::BoundTask& bound, const std::vector<OtherShape>& others,
                                           const fs::path& dir) {
  Shared shared;
  std::error_code ec;
  fs::create_directories(dir / "reference", ec);
  shared.expected = PrepareExpected(bound, FreshSeeds(options_.seeds), dir / "reference");
  for (const auto& o : others) {
    fs::path reference_dir = dir / ("reference-" + o.shape);
    fs::create_directories(reference_dir, ec);
    if (o.bound)
      shared.others.push_back(PrepareExpected(*o.bound, FreshSeeds(1), reference_dir, kOtherShapeScale,
                                              /*timed=*/false));
    else
      shared.others.emplace_back();
  }
  return shared;
}

// Builds the candidate for the evaluated shape and, at the same time, for the other shapes.
CpuTarget::Built CpuTarget::Build(const targets::EvalRequest& request, const suite::BoundTask& bound,
                                  const std::vector<OtherShape>& others, const fs::path& dir) {
  Built built;
  built.started = NowSeconds();
  CompileOptions compile = options_.kernel_compile;
  compile.libraries.insert(compile.libraries.end(), request.candidate.libraries.begin(),
                           request.candidate.libraries.end());
  std::vector<std::future<Result<CompileOutcome>>> pending;
  for (const auto& o : others) {
    fs::path odir = OtherShapeDir(dir, o.shape);
    std::error_code ec;
    fs::create_directories(odir, ec);
    if (!o.bound) {
      pending.push_back(std::async(std::launch::deferred, [&o] { return Result<CompileOutcome>(o.bound.error()); }));
      continue;
    }
    pending.push_back(std::async(std::launch::async, [&, odir] {
      return CompileKernel(request.candidate.source, o.bound->ShapeHeader(), compile, odir.string());
    }));
  }
  built.main = CompileKernel(request.candidate.source, bound.ShapeHeader(), compile, dir.string());
  for (auto& f : pending) built.others.push_back(f.get());
  return built;
}

void CpuTarget::CheckOtherShapes(const std::vector<OtherShape>& others, Built& built, Shared& shared,
                                 const fs::path& dir, Profile& profile) {
  for (size_t i = 0; i < others.size(); ++i) {
    const std::string& shape = others[i].shape;
    auto fail = [&](Verdict verdict, const std::string& why) {
      profile.status = verdict;
      profile.message = "on shape '" + shape + "' with inputs scaled x3: " + why;
    };
    const auto& build = built.others[i];
    Expected& expected = shared.others[i];
    if (!others[i].bound) return fail(Verdict::kRuntimeError, others[i].bound.error().message);
    if (!build) return fail(Verdict::kRuntimeError, build.error().message);
    if (!build->ok)
      return fail(Verdict::kCompileError,
                  "the kernel does not compile:\n" + (build->log.empty() ? "(no diagnostics)" : build->log));
    if (!expected.inputs) return fail(Verdict::kRuntimeError, expected.inputs.error().message);
    if (!expected.outputs) return fail(Verdict::kRuntimeError, expected.outputs.error().message);
    Profile check;
    check.task = profile.task;
    check.shape = shape;
    check.tolerance = profile.tolerance;
    if (auto s = RunCandidate(*others[i].bound, build->library_path, expected, OtherShapeDir(dir, shape), check,
                              /*timed=*/false);
        !s)
      return fail(Verdict::kRuntimeError, s.error().message);
    if (check.status != Verdict::kOk) return fail(check.status, check.message);
  }
}

// Inputs and reference outputs are drawn and computed once per batch, while
// the first candidate compiles; the candidates then compile and run one after
// another, each in its own folder, so that no timed call shares the machine
// with a build or a reference run.
void CpuTarget::EvaluateBatch(std::span<const targets::EvalRequest> batch, std::vector<Result<Profile>>& out,
                              const OnResult& on_result) {
  const targets::EvalRequest& first = batch.front();
  auto report = [&](Result<Profile> result) {
    out.push_back(std::move(result));
    if (on_result) on_result(out.size() - 1, out.back());
  };
  auto fail_all = [&](const Error& e) {
    for (size_t k = 0; k < batch.size(); ++k) report(e);
  };
  auto bound = suite::Bind(*first.task, first.shape);
  if (!bound) return fail_all(bound.error());
  auto scratch = ScratchDir::Create(options_.work_dir, first.task->name, options_.keep_work);
  if (!scratch) return fail_all(scratch.error());
  const fs::path& dir = (*scratch)->path();
  const std::vector<OtherShape> others = OtherShapesOf(first);
  auto preparing = std::async(std::launch::async, [&] { return PrepareShared(*bound, others, dir); });
  std::optional<Shared> shared;
  for (size_t k = 0; k < batch.size(); ++k) {
    fs::path candidate_dir = dir / ("candidate-" + std::to_string(k));
    std::error_code ec;
    fs::create_directories(candidate_dir, ec);
    Built built = Build(batch[k], *bound, others, candidate_dir);
    bool prepared_here = !shared;
    if (!shared) shared.emplace(preparing.get());
    report(EvaluateBuilt(batch[k], *bound, built, *shared, others, candidate_dir, prepared_here));
  }
}

Result<Profile> CpuTarget::EvaluateBuilt(const targets::EvalRequest& request, const suite::BoundTask& bound,
                                         Built& built, Shared& shared, const std::vector<OtherShape>& others,
                                         const fs::path& dir, bool prepared_here) {
  Profile profile;
  profile.task = request.task->name;
  profile.shape = request.shape;
  profile.tolerance = request.task->tolerance;
  profile.seeds = options_.seeds;
  if (options_.keep_work) profile.work_dir = dir.string();
  if (!built.main) return built.main.error();
  RecordCompile(*built.main, profile);
  std::optional<std::string> forbidden;
  if (built.main->ok) {
    bool allow_blas = !request.candidate.libraries.empty();  // a vendor anchor names its library
    auto use = ForbiddenSymbolUse(built.main->library_path, allow_blas);
    if (!use) return use.error();
    forbidden = *use;
  }
  if (!built.main->ok) {
    profile.status = Verdict::kCompileError;
    profile.message = "the kernel does not compile (see the compile log)";
  } else if (forbidden) {
    profile.status = Verdict::kForbidden;
    profile.message = *forbidden;
  } else {
    Expected& expected = shared.expected;
    if (!expected.inputs) return expected.inputs.error();
    if (!expected.outputs) return expected.outputs.error();
    // Drawn and computed once for the batch: counted where they were waited for.
    if (prepared_here) {
      profile.phase_seconds["inputs"] = expected.inputs_seconds;
      profile.phase_seconds["reference"] = expected.reference_seconds;
    }
    if (auto s = RunCandidate(bound, built.main->library_path, expected, dir, profile); !s) return s.error();
    if (profile.status == Verdict::kOk || profile.status == Verdict::kSuspect)
      CheckOtherShapes(others, built, shared, dir, profile);
  }
  profile.wall_seconds = NowSeconds() - built.started;
  return profile;
}

std::unique_ptr<targets::Target> MakeCpuTarget(const CpuTargetOptions& options) {
  return std::make_unique<CpuTarget>(options);
}

}  // namespace accelopt::cpu
