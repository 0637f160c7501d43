#include "eval/expected.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <future>
#include <random>
#include <span>
#include <thread>

#include "core/clock.h"
#include "core/json_io.h"
#include "core/pattern.h"
#include "eval/calls.h"
#include "eval/compare.h"
#include "eval/compiler.h"
#include "eval/draw.h"
#include "eval/machine.h"

namespace accelopt::eval {
namespace {

// The reference's algorithm in float32: every `double` of its source made
// `float`, and the task's constants declared float.
std::string Float32Source(const std::string& source) {
  static const RE2 kDouble("\\bdouble\\b", PatternOptions());
  std::string out = source;
  RE2::GlobalReplace(&out, kDouble, "float");
  return out;
}

// Runs a built reference on each call's inputs and copies its outputs into
// `into` (one buffer per call, sized for every output). `first` numbers the
// calls in messages. An Error names the task.
Status RunReference(const suite::BoundTask& bound, const std::string& library, OutputType type,
                    const ReferenceOptions& options, const std::string& dir, std::span<const CallInputs> calls,
                    std::span<void* const> into, size_t first) {
  const std::string what =
      "the reference of task '" + bound.task->name + "'" + (type == OutputType::kFloat ? " (float32)" : "");
  auto process = StartKernelProcess(bound, type, options.run, dir, /*candidate=*/false, library);
  if (!process) return process.error();
  KernelProcess& p = **process;
  auto fail = [&](const std::string& during) -> Status {
    Verdict verdict;
    std::string message;
    DescribeFailure(*p.failed(), p, bound, during, verdict, message);
    if (verdict == Verdict::kTimeout) {
      // The reference is the project's own, trusted code: too little time is the setting's fault.
      char limit[32];
      std::snprintf(limit, sizeof limit, "%g", options.run.wall_seconds);
      return Error{what + " did not finish within the time limit of " + limit + " s per process (" + message +
                   "): the limit is too short for this shape; raise it (--timeout SECONDS)"};
    }
    return Error{what + " failed: " + message + "\n" + RunLog(p.failed()->outcome)};
  };
  if (p.failed()) return fail("start");
  auto loaded = p.Load(library, "reference");
  if (!loaded) return loaded.error();
  if (!*loaded) return fail("loading");
  for (size_t k = 0; k < calls.size(); ++k) {
    PrepareCall(p, bound, type, calls[k], /*flush=*/false);
    auto timing = p.Call();
    if (!timing) return timing.error();
    if (!*timing) return fail("call " + std::to_string(first + k + 1));
    CopyOutputs(p, bound, type, into[k]);
  }
  SandboxOutcome end = p.Finish();
  if (!end.exited_cleanly()) return Error{what + " did not end cleanly\n" + RunLog(end)};
  return Ok{};
}

}  // namespace

int ReferenceProcesses(const suite::BoundTask& bound, const ReferenceOptions& options, size_t calls) {
  long wanted = options.processes > 0        ? options.processes
                : !options.run.cpus.empty() ? static_cast<long>(options.run.cpus.size())
                                            : AffinityCores();
  // Each process holds an input set and its outputs (at most doubles), the
  // monitor every slot's: the processes take at most half the memory left.
  const double available = AvailableMemoryBytes();
  const double per_process = static_cast<double>(Elements(bound)) * 8 + (64 << 20);
  if (options.processes <= 0 && available > 0)
    wanted = std::min(wanted, static_cast<long>(available / 2 / per_process));
  return static_cast<int>(std::clamp<long>(wanted, 2, 2 * static_cast<long>(std::max<size_t>(calls, 1))));
}

uint64_t FreshSeed() {
  std::random_device entropy;
  return (uint64_t{entropy()} << 32) | entropy();
}

Expected::Expected(const suite::BoundTask& bound, const ReferenceOptions& options, const std::string& dir, int seeds,
                   double scale, int checked)
    : options_(options), dir_(dir) {
  auto start = std::chrono::steady_clock::now();
  Draw(bound, seeds, scale, checked);
  inputs_seconds_ = SecondsSince(start);
  start = std::chrono::steady_clock::now();
  std::vector<CallInputs> calls;
  for (size_t s = 0; s < sets_.size(); ++s) calls.push_back({set(s), std::nullopt});
  for (const CheckedInputs& k : checked_) calls.push_back({set(k.set), k.seed});
  status_ = RunReferences(bound, calls);
  reference_seconds_ = SecondsSince(start);
}

Result<size_t> Expected::AddSlots(const suite::BoundTask& bound, const std::vector<CheckedInputs>& checked) {
  if (!status_) return status_.error();
  const size_t first = ref64_.size();
  std::vector<CallInputs> calls;
  for (const CheckedInputs& k : checked) calls.push_back({set(k.set), k.seed});
  const auto start = std::chrono::steady_clock::now();
  Status run = RunReferences(bound, calls);
  reference_seconds_ += SecondsSince(start);
  if (!run) return run.error();
  return first;
}

// The sets are drawn here, in the monitor, from fresh seeds; the kernel's
// process only ever sees the copy the monitor writes before each call.
void Expected::Draw(const suite::BoundTask& bound, int seeds, double scale, int checked) {
  const long per_set = ElementsPerSet(bound.inputs);
  for (int s = 0; s < seeds; ++s) {
    const uint64_t seed = FreshSeed();
    std::vector<float> set(static_cast<size_t>(per_set));
    float* p = set.data();
    for (size_t i = 0; i < bound.inputs.size(); ++i) {
      const auto& t = bound.inputs[i];
      DrawInput(t, p, seed, i, scale);
      p += t.elements;
    }
    sets_.push_back(std::move(set));
  }
  for (int k = 0; k < checked; ++k) checked_.push_back({static_cast<size_t>(k) % sets_.size(), FreshSeed()});
}

// The reference in double and its float32 evaluation, side by side, on every
// call of `calls`: a slot each, after those there are. Each evaluation's slots
// are shared among its processes in consecutive runs (ReferenceProcesses),
// each slot computed by one process as it would be alone.
Status Expected::RunReferences(const suite::BoundTask& bound, const std::vector<CallInputs>& calls) {
  const suite::Task& task = *bound.task;
  auto source = ReadFile(task.reference_path(kReferenceExtension));
  if (!source) return source.error();
  const size_t first = ref64_.size(), slots = first + calls.size();
  const size_t per_set = static_cast<size_t>(ElementsPerSet(bound.outputs));
  ref64_.resize(slots, std::vector<double>(per_set));
  ref32_.resize(slots, std::vector<float>(per_set));
  floors_.resize(slots);
  std::vector<void*> into64, into32;
  for (size_t slot = first; slot < slots; ++slot) {
    into64.push_back(ref64_[slot].data());
    into32.push_back(ref32_[slot].data());
  }

  // Both built at once. A float32 evaluation that failed once is not tried again for later slots.
  const bool with_float32 = float32_missing_.empty();
  auto build32 = std::async(std::launch::async, [&]() -> Result<std::string> {
    if (!with_float32) return std::string();
    auto built =
        CompileKernel(Float32Source(*source), bound.ShapeHeader(/*float_constants=*/true), options_.compile, dir_);
    if (!built) return built.error();
    if (!built->ok)
      return Error{task.reference_path(kReferenceExtension) + " does not compile with float in place of double:\n" +
                   NameSourceInLog(built->log, task.reference_path(kReferenceExtension) + " (float32)")};
    return built->library_path;
  });
  Result<std::string> library64 = [&]() -> Result<std::string> {
    auto built = CompileKernel(*source, bound.ShapeHeader(), options_.compile, dir_);
    if (!built) return built.error();
    if (!built->ok)
      return Error{task.reference_path(kReferenceExtension) + " does not compile:\n" +
                   NameSourceInLog(built->log, task.reference_path(kReferenceExtension))};
    return built->library_path;
  }();
  Result<std::string> library32 = build32.get();

  // Each evaluation's share of the processes, and each process's run of slots.
  struct Share {
    OutputType type;
    size_t begin, end;
    Status status = Ok{};
  };
  std::vector<Share> shares;
  const bool run32 = with_float32 && library32.ok();
  if (library64 && !calls.empty()) {
    const size_t processes = static_cast<size_t>(ReferenceProcesses(bound, options_, calls.size()));
    const size_t parts64 = std::min(calls.size(), run32 ? std::max<size_t>(1, processes / 2) : processes);
    const size_t parts32 = run32 ? std::min(calls.size(), std::max<size_t>(1, processes - parts64)) : 0;
    for (auto [type, parts] : {std::pair{OutputType::kDouble, parts64}, std::pair{OutputType::kFloat, parts32}})
      for (size_t j = 0; j < parts; ++j)
        shares.push_back({type, j * calls.size() / parts, (j + 1) * calls.size() / parts});
  }
  {
    std::vector<std::jthread> running;
    for (Share& share : shares)
      running.emplace_back([&, &share = share] {
        const bool is64 = share.type == OutputType::kDouble;
        const std::vector<void*>& into = is64 ? into64 : into32;
        share.status = RunReference(
            bound, is64 ? *library64 : *library32, share.type, options_, dir_,
            std::span<const CallInputs>(calls).subspan(share.begin, share.end - share.begin),
            std::span<void* const>(into).subspan(share.begin, share.end - share.begin), share.begin);
      });
  }
  Status run = library64 ? Status(Ok{}) : Status(library64.error());
  Status run32_status = !with_float32 ? Status(Ok{}) : library32 ? Status(Ok{}) : Status(library32.error());
  for (const Share& share : shares) {
    Status& into = share.type == OutputType::kDouble ? run : run32_status;
    if (into && !share.status) into = share.status;
  }
  if (!run) {
    ref64_.resize(first), ref32_.resize(first), floors_.resize(first);
    return run;
  }
  // Without a float32 evaluation, outputs are judged by the L2 test alone (the profile says why).
  if (!run32_status || !with_float32) {
    if (!run32_status) float32_missing_ = run32_status.error().message;
    for (auto& r : ref32_) r.clear();
    return Ok{};
  }
  for (size_t slot = first; slot < slots; ++slot) {
    const double* ref = ref64_[slot].data();
    const float* ref32 = ref32_[slot].data();
    for (const auto& t : bound.outputs) {
      floors_[slot].push_back(RoundingFloor(ref, ref32, static_cast<size_t>(t.elements)));
      ref += t.elements;
      ref32 += t.elements;
    }
  }
  return Ok{};
}

ErrorStats Expected::Judge(const suite::BoundTask& bound, size_t slot, const float* outputs, const std::string& label,
                           double tolerance, std::string& why) const {
  const double* ref = reference(slot);
  const float* ref32 = reference32(slot);
  ErrorStats worst;
  for (size_t o = 0; o < bound.outputs.size(); ++o) {
    const auto& t = bound.outputs[o];
    const ErrorStats e = CompareOutput(t, outputs, ref, ref32, ref32 ? floor(slot, o) : 0);
    if (why.empty()) why = JudgeOutput(e, t, label, tolerance);
    worst = o == 0 ? e : Worst(worst, e);
    outputs += t.elements;
    ref += t.elements;
    if (ref32) ref32 += t.elements;
  }
  return worst;
}

}  // namespace accelopt::eval
