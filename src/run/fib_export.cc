#include "run/fib_export.h"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <set>
#include <sstream>

#include "core/hash.h"
#include "core/text.h"
#include "eval/draw.h"
#include "run/optimize.h"
#include "run/safetensors.h"
#include "targets/registry.h"

namespace accelopt::run {
namespace fs = std::filesystem;

namespace {

constexpr size_t kMaxLog = 4000;
constexpr size_t kMaxPlan = 4000;

// FlashInfer-Bench writes non-finite floats as strings (pydantic's
// ser_json_inf_nan="strings"); JSON itself has no such numbers.
Json Number(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "Infinity" : "-Infinity";
  return v;
}

std::string Clip(const std::string& text, size_t limit) {
  return text.size() <= limit ? text : text.substr(0, limit) + "\n[... cut]";
}


// Accelopt's own figures, kept where FlashInfer-Bench's correctness has room for extras.
Json CorrectnessJson(const Profile& p) {
  Json extra = {{"tolerance_relative_l2", p.tolerance}, {"seeds", p.seeds}, {"checked_calls", p.checked_calls}};
  if (!p.errors) {
    extra["compared"] = false;
    return {{"max_relative_error", 0.0}, {"max_absolute_error", 0.0}, {"extra", extra}};
  }
  const ErrorStats& e = *p.errors;
  extra["relative_l2_error"] = Number(e.rel_l2);
  extra["nan_count"] = e.nan_count;
  extra["inf_count"] = e.inf_count;
  extra["elements"] = e.elements;
  if (e.bounded) {
    extra["elements_over_bound"] = e.over_bound;
    extra["worst_error_to_bound"] = Number(e.worst_ratio);
  }
  // Accelopt measures no element-wise relative error: its relative figure is
  // the norm-wise ||out - ref|| / ||ref||, which FlashInfer-Bench's filters then compare.
  return {{"max_relative_error", Number(e.rel_l2)}, {"max_absolute_error", Number(e.max_abs)}, {"extra", extra}};
}

std::string LogOf(const Candidate& c, const FibTraceContext& context) {
  const Profile& p = c.profile;
  std::string log = fmt::format("{}: accelopt verdict {} on target {}, shape {}", context.where, VerdictName(p.status),
                                p.target, p.shape);
  if (!p.message.empty()) log += ": " + p.message;
  if (p.latency)
    log += fmt::format("\nmedian of {} timed calls (spread {:.1f}%), {} seeds, {} checked calls", p.latency->calls,
                       100 * p.latency->spread, p.seeds, p.checked_calls);
  if (!p.conditions.empty()) log += "\nconditions: " + p.conditions;
  if (p.status != Verdict::kOk) {
    if (!p.compile_log.empty()) log += "\ncompile log:\n" + p.compile_log;
    if (!p.run_log.empty()) log += "\nrun log:\n" + p.run_log;
  }
  return Clip(log, kMaxLog);
}

// The hardware the run measured on, as the run's recorded profile names it.
std::string HardwareOf(const Json& config, const Candidate& c) {
  const Json hardware = config.is_object() ? config.value("hardware", Json(nullptr)) : Json(nullptr);
  if (hardware.is_object()) {
    if (hardware.contains("machine") && hardware["machine"].is_object()) {
      const std::string model = hardware["machine"].value("cpu_model", "");
      if (!model.empty()) return model;
    }
    for (const char* key : {"device_name", "gpu", "name", "fingerprint"})
      if (hardware.contains(key) && hardware[key].is_string() && !hardware[key].get<std::string>().empty())
        return hardware[key].get<std::string>();
  }
  if (c.profile.scored_against && !c.profile.scored_against->fingerprint.empty())
    return c.profile.scored_against->fingerprint;
  return c.profile.target;
}

std::string SolutionName(const std::string& task, int64_t run_id, int64_t candidate_id) {
  return fmt::format("accelopt-{}-run{}-c{}", task, run_id, candidate_id);
}

struct SolutionInput {
  const Candidate* candidate;
  const suite::Task* task;
  const suite::BoundTask* bound;
  FibLanguage language;
  std::string definition, name, author, hardware;
  int64_t run_id;
  bool baseline;
};

Json SolutionJson(const SolutionInput& in) {
  const Candidate& c = *in.candidate;
  std::string description =
      in.baseline ? fmt::format("The baseline of accelopt task {} (run {}, candidate {}): the starting kernel.",
                                in.task->name, in.run_id, c.id)
                  : fmt::format("{} (accelopt run {}, task {}, candidate {}, iteration {})", FirstLine(c.plan),
                                in.run_id, in.task->name, c.id, c.iteration);
  // The rest of the plan, below the line the description starts with.
  const size_t body = c.plan.find('\n');
  if (!in.baseline && body != std::string::npos && !Trim(c.plan.substr(body)).empty())
    description += "\n\n" + Clip(Trim(c.plan.substr(body)), kMaxPlan);
  if (in.language.shape_header)
    description += "\n\nThe kernel is compiled with shape.h included first (-include shape.h): the shape is constant.";
  Json sources = Json::array({{{"path", in.language.file}, {"content", c.code}}});
  if (in.language.shape_header) sources.push_back({{"path", "shape.h"}, {"content", in.bound->ShapeHeader()}});
  return {{"name", in.name},
          {"definition", in.definition},
          {"author", in.author},
          {"description", description},
          {"spec",
           {{"language", in.language.language},
            {"target_hardware", Json::array({in.hardware})},
            {"entry_point", in.language.file + "::kernel"},
            {"dependencies", Json::array()},
            {"destination_passing_style", true}}},
          {"sources", sources}};
}

// Replaces the lines of `path` that are traces of `solutions` with `lines`;
// other lines (another run's traces, lines it cannot read) stay as they were.
Status MergeTraces(const std::string& path, const std::set<std::string>& solutions, const std::vector<Json>& lines) {
  std::string text;
  std::error_code ec;
  if (fs::exists(path, ec)) {
    auto old = ReadFile(path);
    if (!old) return old.error();
    std::istringstream in(*old);
    for (std::string line; std::getline(in, line);) {
      if (line.empty()) continue;
      const Json j = Json::parse(line, nullptr, /*allow_exceptions=*/false);
      if (j.is_object() && j.contains("solution") && j["solution"].is_string() &&
          solutions.count(j["solution"].get<std::string>()))
        continue;
      text += line + "\n";
    }
  }
  for (const Json& j : lines) text += DumpJson(j) + "\n";
  return WriteFile(path, text);
}

Status MakeDirs(const fs::path& dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return Error{"cannot create the folder " + dir.string() + ": " + ec.message()};
  return Ok{};
}

// The baseline (the candidate iteration 0 began from) and the best of one
// task by the side-by-side evidence, as `accelopt show` chooses it.
struct Chosen {
  const Candidate* baseline = nullptr;
  const Candidate* best = nullptr;
  double speedup = 1;  // over the baseline, as the evidence gives it
};
Chosen Choose(const Json& summary, const std::string& task, const std::vector<const Candidate*>& candidates) {
  Chosen out;
  for (const Candidate* c : candidates)
    if (!out.baseline && c->iteration == 0 && c->plan.empty()) out.baseline = c;
  const BestCandidate best = RunsBest(summary, task, candidates);
  out.best = best.candidate;
  out.speedup = best.evidence.estimate;
  return out;
}

struct RunContext {
  const store::RunInfo* run;
  const FibExportOptions* options;
};

// What one task's export is made of.
struct Exportable {
  const Candidate* baseline = nullptr;
  const Candidate* best = nullptr;
  double speedup = 1;
  FibLanguage language;
  suite::BoundTask bound;
};

// Why the task cannot be exported, or "" with `out` filled.
std::string WhyNot(const suite::Task& task, const Json& summary, const std::vector<const Candidate*>& candidates,
                   Exportable& out) {
  if (task.kind == suite::TaskKind::kCode) return "a code task: its candidates change a code base and are not kernels";
  const Chosen chosen = Choose(summary, task.name, candidates);
  if (!chosen.best) return "no ok kernel";
  if (!chosen.baseline || !chosen.baseline->ok())
    return "its baseline is not an ok measurement, so there is no reference latency";
  auto language = FibLanguageFor(chosen.best->profile.target);
  if (!language) return "target " + chosen.best->profile.target + " has no FlashInfer-Bench language";
  auto bound = suite::Bind(task, chosen.best->profile.shape);
  if (!bound) return bound.error().message;
  out = {chosen.baseline, chosen.best, chosen.speedup, *language, *bound};
  return "";
}

// Writes the task's solutions and merges its traces; an I/O failure is an Error.
Result<FibTaskExport> WriteTask(const RunContext& rc, const suite::Task& task, const Exportable& e) {
  const FibExportOptions& options = *rc.options;
  const Candidate& baseline = *e.baseline;
  FibTaskExport out;
  out.task = task.name;
  out.definition = FibDefinitionOf(task);
  out.definition_is_task_name = task.fib_definition.empty();
  out.baseline_id = baseline.id;
  out.best_id = e.best->id;
  out.speedup = e.speedup;

  const std::string hardware = HardwareOf(rc.run->config, *e.best);
  const std::string op_type = FibOpTypeOf(task);
  const fs::path root(options.out_dir);
  const fs::path solutions_dir = root / "solutions" / options.author / op_type / out.definition;
  const fs::path traces_dir = root / "traces" / options.author / op_type;
  for (const auto& dir : {solutions_dir, traces_dir})
    if (auto s = MakeDirs(dir); !s) return s.error();

  Json libs = Json::object();
  if (!options.version.empty()) libs["accelopt"] = options.version;
  const Json workload = FibWorkloadJson(e.bound);
  if (auto s = WriteFibWorkloadBlob(e.bound, options.out_dir); !s) return s.error();
  if (const std::string blob = FibWorkloadBlob(e.bound); !blob.empty()) out.files.push_back(blob);
  std::vector<const Candidate*> exported = {&baseline};
  if (e.best->id != baseline.id) exported.push_back(e.best);
  std::set<std::string> names;
  std::vector<Json> traces;
  for (const Candidate* c : exported) {
    const bool is_baseline = c == &baseline;
    const SolutionInput in{c,
                           &task,
                           &e.bound,
                           e.language,
                           out.definition,
                           SolutionName(task.name, rc.run->id, c->id),
                           options.author,
                           hardware,
                           rc.run->id,
                           is_baseline};
    const fs::path file = solutions_dir / (in.name + ".json");
    if (auto s = WriteFile(file.string(), DumpJson(SolutionJson(in), 2) + "\n"); !s) return s.error();
    out.files.push_back(fs::relative(file, root).string());
    names.insert(in.name);
    const std::string where =
        is_baseline ? fmt::format("accelopt run {}, candidate {} (baseline)", rc.run->id, c->id)
                    : fmt::format("accelopt run {}, candidate {} (iteration {})", rc.run->id, c->id, c->iteration);
    traces.push_back(FibTraceJson(
        *c, {out.definition, in.name, workload, baseline.latency(), hardware, libs, rc.run->created_at, where}));
  }
  const fs::path trace_file = traces_dir / (out.definition + ".jsonl");
  if (auto s = MergeTraces(trace_file.string(), names, traces); !s) return s.error();
  out.files.push_back(fs::relative(trace_file, root).string());
  return out;
}

}  // namespace

const char* FibStatus(Verdict verdict) {
  switch (verdict) {
    case Verdict::kOk:
      return "PASSED";
    case Verdict::kWrongAnswer:
      return "INCORRECT_NUMERICAL";
    case Verdict::kCompileError:
      return "COMPILE_ERROR";
    case Verdict::kTimeout:
      return "TIMEOUT";
    case Verdict::kRuntimeError:
    case Verdict::kResourceLimit:
    case Verdict::kSuspect:
    case Verdict::kForbidden:
      return "RUNTIME_ERROR";
  }
  return "RUNTIME_ERROR";
}

std::optional<FibLanguage> FibLanguageFor(const std::string& target) {
  if (const targets::TargetKind* kind = targets::FindTarget(target)) return kind->fib_language;
  // The external target's profiles name the evaluator that measured them.
  if (target == "triton") return FibLanguage{"triton", "kernel.py", false};
  if (target == "python") return FibLanguage{"python", "kernel.py", false};
  return std::nullopt;
}

std::string FibWorkloadUuid(const suite::Task& task, const std::string& shape, const suite::Bindings& params) {
  std::string key = "accelopt workload\n" + task.name + "\n" + shape + "\n";
  for (const auto& [name, value] : params) key += fmt::format("{}={}\n", name, value);
  // FNV, not a content hash: an identifier stable across exports (changing it
  // would rename every exported workload), from names the task itself gives.
  const std::string hex = Hex64(Fnv1a64(key)) + Hex64(SplitMix64(Fnv1a64(key, 0x84222325cbf29ce4ULL)));
  std::string u = hex;
  u[12] = '8';                                                        // version 8: custom
  u[16] = "89ab"[std::stoi(std::string(1, u[16]), nullptr, 16) & 3];  // variant 10xx
  return u.substr(0, 8) + "-" + u.substr(8, 4) + "-" + u.substr(12, 4) + "-" + u.substr(16, 4) + "-" + u.substr(20);
}

std::string FibDefinitionOf(const suite::Task& task) {
  return task.fib_definition.empty() ? task.name : task.fib_definition;
}

std::string FibOpTypeOf(const suite::Task& task) { return task.family.empty() ? "uncategorized" : task.family; }

namespace {

// The inputs a workload file holds: integers drawn with structure (offsets, page ids).
bool InBlob(const suite::BoundTensor& t) { return t.dtype == suite::DType::kInt32; }

}  // namespace

std::string FibWorkloadBlob(const suite::BoundTask& bound) {
  if (std::none_of(bound.inputs.begin(), bound.inputs.end(), InBlob)) return "";
  const suite::Task& task = *bound.task;
  return "blob/workloads/" + FibOpTypeOf(task) + "/" + FibDefinitionOf(task) + "/" +
         FibWorkloadUuid(task, bound.shape_name, bound.params) + ".safetensors";
}

Status WriteFibWorkloadBlob(const suite::BoundTask& bound, const std::string& root) {
  const std::string blob = FibWorkloadBlob(bound);
  if (blob.empty()) return Ok{};
  const uint64_t seed = Fnv1a64(FibWorkloadUuid(*bound.task, bound.shape_name, bound.params));
  std::vector<SafeTensor> tensors;
  for (size_t i = 0; i < bound.inputs.size(); ++i) {
    const suite::BoundTensor& t = bound.inputs[i];
    if (!InBlob(t)) continue;
    std::vector<float> values(static_cast<size_t>(t.elements));
    eval::DrawInput(t, values.data(), seed, i);
    std::vector<int32_t> ints(values.begin(), values.end());
    tensors.push_back(
        {t.name, "I32", t.dims, std::string(reinterpret_cast<const char*>(ints.data()), ints.size() * 4)});
  }
  const fs::path path = fs::path(root) / blob;
  if (auto s = MakeDirs(path.parent_path()); !s) return s;
  return WriteSafetensors(path.string(), tensors);
}

Json FibWorkloadJson(const suite::BoundTask& bound) {
  Json axes = Json::object(), inputs = Json::object();
  for (const auto& [name, value] : bound.params) axes[name] = static_cast<long>(value);
  const std::string blob = FibWorkloadBlob(bound);
  for (const auto& t : bound.inputs) {
    if (InBlob(t))
      inputs[t.name] = {{"type", "safetensors"}, {"path", blob}, {"tensor_key", t.name}};
    else if (t.dist.kind == "constant")
      inputs[t.name] = {{"type", "scalar"}, {"value", t.dist.a}};
    else
      inputs[t.name] = {{"type", "random"}};
  }
  for (const auto& [name, value] : bound.task->constants) inputs[name] = {{"type", "scalar"}, {"value", value}};
  return {{"uuid", FibWorkloadUuid(*bound.task, bound.shape_name, bound.params)}, {"axes", axes}, {"inputs", inputs}};
}

Json FibTraceJson(const Candidate& c, const FibTraceContext& context) {
  const Profile& p = c.profile;
  const std::string status = FibStatus(p.status);
  Json evaluation = {{"status", status},
                     {"log", LogOf(c, context)},
                     {"environment", {{"hardware", context.hardware}, {"libs", context.libs}}},
                     {"timestamp", context.timestamp}};
  if (status == "PASSED" || status == "INCORRECT_NUMERICAL") evaluation["correctness"] = CorrectnessJson(p);
  if (status == "PASSED" && p.latency && p.latency->median_s > 0) {
    const double latency_ms = 1e3 * p.latency->median_s, reference_ms = 1e3 * context.reference_latency_s;
    evaluation["performance"] = {{"latency_ms", latency_ms},
                                 {"reference_latency_ms", reference_ms},
                                 {"speedup_factor", reference_ms / latency_ms}};
  }
  return {{"definition", context.definition},
          {"workload", context.workload},
          {"solution", context.solution},
          {"evaluation", evaluation}};
}

Result<FibExportReport> ExportFib(store::Store& store, const std::vector<suite::Task>& tasks,
                                  const FibExportOptions& options) {
  if (options.author.empty() || options.author.find_first_of("/\\") != std::string::npos || options.author == "." ||
      options.author == "..")
    return Error{"the author '" + options.author + "' must be a plain name: it names a folder"};
  auto run = store.GetRun(options.run_id);
  if (!run) return run.error();
  if (!*run) return Error{fmt::format("no run {}", options.run_id)};
  auto candidates = store.ListCandidates(options.run_id, "");
  if (!candidates) return candidates.error();
  // The run's tasks in the order it optimized them.
  std::vector<std::string> order;
  std::map<std::string, std::vector<const Candidate*>> by_task;
  for (const auto& stored : *candidates) {
    if (!by_task.count(stored.task)) order.push_back(stored.task);
    by_task[stored.task].push_back(&stored.candidate);
  }
  FibExportReport report;
  const RunContext rc{&**run, &options};
  for (const std::string& name : order) {
    const suite::Task* task = nullptr;
    for (const auto& t : tasks)
      if (t.name == name) task = &t;
    if (!task) {
      report.skipped.push_back(name + ": not in the suite (its task.yaml gives the definition and the axes)");
      continue;
    }
    Exportable exportable;
    if (std::string why = WhyNot(*task, (*run)->summary, by_task[name], exportable); !why.empty()) {
      report.skipped.push_back(name + ": " + why);
      continue;
    }
    auto exported = WriteTask(rc, *task, exportable);
    if (!exported) return Error{"task " + name + ": " + exported.error().message};
    report.tasks.push_back(std::move(*exported));
  }
  if (report.tasks.empty()) {
    std::string why = order.empty() ? "it holds no candidates" : "";
    for (const auto& s : report.skipped) why += (why.empty() ? "" : "; ") + s;
    return Error{fmt::format("run {} has nothing to export ({})", options.run_id, why)};
  }
  return report;
}

}  // namespace accelopt::run
