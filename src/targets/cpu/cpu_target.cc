#include "targets/cpu/cpu_target.h"

#include <sched.h>
#include <signal.h>
#include <sys/syscall.h>
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

long DataBytes(const suite::BoundTask& bound) {
  long elements = 0;
  for (const auto* group : {&bound.inputs, &bound.outputs})
    for (const auto& t : *group) elements += t.elements;
  return elements * 8;  // doubles for the reference outputs, copies of the inputs
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

// Names of the calls the harness's seccomp filter traps, with what they mean for a kernel.
std::string SyscallName(int number) {
  static const std::map<int, std::string> names = {{SYS_fork, "fork: create a process"},
                                                   {SYS_vfork, "vfork: create a process"},
                                                   {SYS_clone, "clone: create a process"},
                                                   {SYS_execve, "execve: run a program"},
                                                   {SYS_execveat, "execveat: run a program"},
                                                   {SYS_open, "open: a file"},
                                                   {SYS_openat, "openat: a file"},
                                                   {SYS_openat2, "openat2: a file"},
                                                   {SYS_creat, "creat: a file"},
                                                   {SYS_mmap, "mmap: map executable memory"},
                                                   {SYS_mprotect, "mprotect: make memory executable"},
                                                   {SYS_pkey_mprotect, "pkey_mprotect: make memory executable"},
                                                   {SYS_socket, "socket"},
                                                   {SYS_socketpair, "socketpair"},
                                                   {SYS_connect, "connect"},
                                                   {SYS_kill, "kill: signal another process"},
                                                   {SYS_ptrace, "ptrace"},
                                                   {SYS_process_vm_readv, "process_vm_readv"},
                                                   {SYS_process_vm_writev, "process_vm_writev"}};
  auto it = names.find(number);
  return it != names.end() ? it->second : "system call " + std::to_string(number);
}

// Turns a child that did not finish normally into a verdict. Returns false when it finished.
bool ClassifyFailure(const HarnessRun& run, Verdict& verdict, std::string& message) {
  const auto& o = run.outcome;
  const std::string during = " during " + run.phase;
  // A trapped call reports itself, unless signals were blocked (posix_spawn
  // blocks them all): then the kernel kills with SIGSYS directly.
  if (!run.foreign.empty()) {
    verdict = Verdict::kForbidden;
    message = "the kernel wrote to the evaluator's event channel (fd 3): \"" + run.foreign + "\"";
    return true;
  }
  const Json* forbidden = run.Find("forbidden");
  if (forbidden || o.term_signal == SIGSYS) {
    verdict = Verdict::kForbidden;
    message =
        "the kernel made a forbidden system call (" +
        (forbidden ? SyscallName(forbidden->value("syscall", -1)) : std::string("blocked while signals were blocked")) +
        ")" + during;
    return true;
  }
  if (const Json* e = run.Find("violation")) {
    std::string what = e->value("message", "");
    // Wrong results (inputs or outputs changed when they must not be); else a
    // fault such as a write past the end of an argument.
    bool wrong = what.rfind("modified", 0) == 0 || what.rfind("changed", 0) == 0 ||
                 what.rfind("kept computing", 0) == 0;
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

  std::vector<Result<Profile>> Evaluate(std::span<const targets::EvalRequest> requests) override {
    std::vector<Result<Profile>> out;
    for (const auto& r : requests) out.push_back(EvaluateOne(r));
    return out;
  }

 private:
  // Inputs drawn and reference outputs computed, for one evaluation.
  struct Expected {
    Result<eval::SharedMemory> inputs = Error{"inputs not drawn"};  // one set per seed
    // Reference outputs: one set per seed, then one per checked call computed
    // beforehand (the final call's and the first series'); the other series'
    // are computed only if those series run.
    Result<eval::SharedMemory> outputs = Error{"reference not run"};
    size_t seeds = 0, slots = 0, precomputed = 0;  // slots: outputs the candidate may hand back
    Json timing_plan = Json::object();             // how the timed calls perturb the inputs (none when untimed)
    double inputs_seconds = 0, reference_seconds = 0;
  };
  Result<Profile> EvaluateOne(const targets::EvalRequest& request);
  Expected PrepareExpected(const suite::BoundTask& bound, const std::vector<uint64_t>& seeds, const fs::path& dir,
                           double scale = 1, bool timed = true);
  // Another shape of the task, built and with its expected outputs, for the untimed extra check.
  struct OtherShape {
    std::string shape;
    suite::BoundTask bound;
    fs::path dir;
    std::string library, compile_log, problem;  // problem: an infrastructure error
    Expected expected;
  };
  std::vector<OtherShape> PrepareOtherShapes(const targets::EvalRequest& request, const fs::path& dir);
  void CheckOtherShapes(std::vector<OtherShape>& others, Profile& profile);
  Status RunCandidate(const suite::BoundTask& bound, const std::string& library, const Expected& expected,
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
  Status CompareWithReference(const suite::BoundTask& bound, const Expected& expected, const Json& result,
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
Status CpuTarget::CompareWithReference(const suite::BoundTask& bound, const Expected& expected, const Json& result,
                                       const eval::SharedMemory& outputs, const fs::path& dir, Profile& profile) {
  const long per_slot = ElementsPerSeed(bound.outputs);
  auto out_at = [&](size_t slot) { return static_cast<const float*>(outputs.data()) + slot * per_slot; };
  auto ref_at = [&](size_t slot) { return static_cast<const double*>(expected.outputs->data()) + slot * per_slot; };
  std::vector<Slot> slots;
  for (size_t s = 0; s < expected.seeds; ++s) slots.push_back({out_at(s), ref_at(s), "seed " + std::to_string(s)});
  std::vector<std::pair<size_t, std::string>> late;  // checked calls without a reference yet
  for (const auto& c : result.value("checked_calls", Json::array())) {
    size_t slot = c.value("slot", size_t{0});
    std::string label = c.value("label", "a timed call") + ", with fresh inputs";
    if (slot < expected.seeds || slot >= expected.slots)
      return Error{"evaluation harness: checked call " + std::to_string(slot) + " out of range"};
    if (slot < expected.seeds + expected.precomputed)
      slots.push_back({out_at(slot), ref_at(slot), label});
    else
      late.emplace_back(slot, label);
  }
  Result<eval::SharedMemory> late_reference = Error{""};
  if (!late.empty()) {
    std::vector<Json> calls;
    for (const auto& [slot, label] : late) calls.push_back(expected.timing_plan["checked"][slot - expected.seeds]);
    auto inputs = WithCheckedCalls(bound, *expected.inputs, 0, calls);
    if (!inputs) return inputs.error();
    auto start = std::chrono::steady_clock::now();
    late_reference = RunReference(bound, calls.size(), dir, *inputs);
    if (!late_reference) return late_reference.error();
    profile.phase_seconds["reference_after"] = SecondsSince(start);
    for (size_t k = 0; k < late.size(); ++k)
      slots.push_back({out_at(late[k].first),
                       static_cast<const double*>(late_reference->data()) + static_cast<long>(k) * per_slot,
                       late[k].second});
  }
  auto compare_start = std::chrono::steady_clock::now();
  Compare(bound, slots, profile);
  profile.phase_seconds["compare"] = SecondsSince(compare_start);
  return Ok{};
}

// Runs the built candidate against the expected outputs and fills the profile.
Status CpuTarget::RunCandidate(const suite::BoundTask& bound, const std::string& library, const Expected& expected,
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
// check it once more on the task's other (smaller) shapes, with inputs
// drawn at a different scale than the timed ones. Untimed; a failure or an
// infrastructure error here makes the profile fail with the reason.
std::vector<CpuTarget::OtherShape> CpuTarget::PrepareOtherShapes(const targets::EvalRequest& request,
                                                                 const fs::path& dir) {
  constexpr double kScale = 3;
  auto size_of = [&](const std::string& shape) -> long {
    auto b = suite::Bind(*request.task, shape);
    long n = 0;
    if (b)
      for (const auto* group : {&b->inputs, &b->outputs})
        for (const auto& t : *group) n += t.elements;
    return n;
  };
  const long evaluated = size_of(request.shape);
  std::vector<OtherShape> others;
  for (const auto& [shape, params] : request.task->shapes) {
    // Larger shapes would multiply the cost of every evaluation: only the
    // shapes no larger than the evaluated one are checked.
    if (shape == request.shape || size_of(shape) > evaluated) continue;
    OtherShape o{shape};
    auto bound = suite::Bind(*request.task, shape);
    if (!bound) {
      o.problem = bound.error().message;
      others.push_back(std::move(o));
      continue;
    }
    o.bound = *bound;
    o.dir = dir / ("shape-" + shape);
    std::error_code ec;
    fs::create_directories(o.dir, ec);
    CompileOptions compile = options_.kernel_compile;
    compile.libraries.insert(compile.libraries.end(), request.candidate.libraries.begin(),
                             request.candidate.libraries.end());
    auto built = CompileKernel(request.candidate.source, o.bound.ShapeHeader(), compile, o.dir.string());
    if (!built)
      o.problem = built.error().message;
    else if (!built->ok)
      o.compile_log = built->log.empty() ? "(no diagnostics)" : built->log;
    else
      o.library = built->library_path;
    if (o.problem.empty() && o.compile_log.empty())
      o.expected = PrepareExpected(o.bound, FreshSeeds(1), o.dir, kScale, /*timed=*/false);
    others.push_back(std::move(o));
  }
  return others;
}

void CpuTarget::CheckOtherShapes(std::vector<OtherShape>& others, Profile& profile) {
  for (auto& o : others) {
    auto fail = [&](Verdict verdict, const std::string& why) {
      profile.status = verdict;
      profile.message = "on shape '" + o.shape + "' with inputs scaled x3: " + why;
    };
    if (!o.problem.empty()) return fail(Verdict::kRuntimeError, o.problem);
    if (!o.compile_log.empty()) return fail(Verdict::kCompileError, "the kernel does not compile:\n" + o.compile_log);
    if (!o.expected.inputs) return fail(Verdict::kRuntimeError, o.expected.inputs.error().message);
    if (!o.expected.outputs) return fail(Verdict::kRuntimeError, o.expected.outputs.error().message);
    Profile check;
    check.task = profile.task;
    check.shape = o.shape;
    check.tolerance = profile.tolerance;
    if (auto s = RunCandidate(o.bound, o.library, o.expected, o.dir, check, /*timed=*/false); !s)
      return fail(Verdict::kRuntimeError, s.error().message);
    if (check.status != Verdict::kOk) return fail(check.status, check.message);
  }
}

Result<Profile> CpuTarget::EvaluateOne(const targets::EvalRequest& request) {
  auto started = std::chrono::steady_clock::now();
  const suite::Task& task = *request.task;
  auto bound = suite::Bind(task, request.shape);
  if (!bound) return bound.error();
  auto scratch = ScratchDir::Create(options_.work_dir, task.name, options_.keep_work);
  if (!scratch) return scratch.error();
  const fs::path& dir = (*scratch)->path();
  std::vector<uint64_t> seeds = FreshSeeds(options_.seeds);

  // Inputs and reference run while the candidate compiles: both are untimed,
  // and the candidate's timed calls start only after both finish.
  auto expected = std::async(std::launch::async, [&] { return PrepareExpected(*bound, seeds, dir); });
  auto others = std::async(std::launch::async, [&] { return PrepareOtherShapes(request, dir); });
  CompileOptions compile = options_.kernel_compile;
  compile.libraries.insert(compile.libraries.end(), request.candidate.libraries.begin(),
                           request.candidate.libraries.end());
  auto built = CompileKernel(request.candidate.source, bound->ShapeHeader(), compile, dir.string());
  Expected prepared = expected.get();

  Profile profile;
  profile.task = task.name;
  profile.shape = request.shape;
  profile.tolerance = task.tolerance;
  profile.seeds = options_.seeds;
  if (!built) return built.error();
  RecordCompile(*built, profile);
  std::optional<std::string> forbidden;
  if (built->ok) {
    bool allow_blas = !request.candidate.libraries.empty();  // a vendor anchor names its library
    auto use = ForbiddenSymbolUse(built->library_path, allow_blas);
    if (!use) return use.error();
    forbidden = *use;
  }
  if (!built->ok) {
    profile.status = Verdict::kCompileError;
    profile.message = "the kernel does not compile (see the compile log)";
  } else if (forbidden) {
    profile.status = Verdict::kForbidden;
    profile.message = *forbidden;
  } else {
    if (!prepared.inputs) return prepared.inputs.error();
    if (!prepared.outputs) return prepared.outputs.error();
    profile.phase_seconds["inputs"] = prepared.inputs_seconds;
    profile.phase_seconds["reference"] = prepared.reference_seconds;
    if (auto s = RunCandidate(*bound, built->library_path, prepared, dir, profile); !s) return s.error();
    if (profile.status == Verdict::kOk || profile.status == Verdict::kSuspect) {
      auto prepared_others = others.get();
      CheckOtherShapes(prepared_others, profile);
    }
  }
  profile.wall_seconds = SecondsSince(started);
  return profile;
}

std::unique_ptr<targets::Target> MakeCpuTarget(const CpuTargetOptions& options) {
  return std::make_unique<CpuTarget>(options);
}

}  // namespace accelopt::cpu
