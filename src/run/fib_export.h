#pragma once
/// A run's best kernels in FlashInfer-Bench's dataset format (docs/fib-export.md):
/// each task's best `ok` kernel and its baseline as Solution JSON, their
/// evaluations as Trace JSON lines, filed the way a FlashInfer-Bench dataset
/// files them, so its tools can load them beside their own.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/candidate.h"
#include "core/json_io.h"
#include "core/result.h"
#include "store/store.h"
#include "suite/task.h"
#include "targets/target.h"

namespace accelopt::run {

/// FlashInfer-Bench's evaluation status for a verdict: ok is PASSED,
/// wrong_answer INCORRECT_NUMERICAL, compile_error COMPILE_ERROR, timeout
/// TIMEOUT; runtime_error, resource_limit, suspect and forbidden (which it has
/// no name for) RUNTIME_ERROR, the evaluation's log naming the verdict.
const char* FibStatus(Verdict verdict);

/// How a target's kernels are described to FlashInfer-Bench (targets/target.h).
using targets::FibLanguage;
/// The language of the target named `target` (a profile's `target`): a
/// registered target's TargetKind::fib_language, or an external evaluator's
/// (triton, python). Nothing for a target FlashInfer-Bench has no language for (nki, code).
std::optional<FibLanguage> FibLanguageFor(const std::string& target);

/// A UUID (version 8, RFC 9562) that depends only on the task, the shape's
/// name and its parameters: the same workload gets the same one on every export.
std::string FibWorkloadUuid(const suite::Task& task, const std::string& shape, const suite::Bindings& params);

/// What a trace needs beyond the candidate.
struct FibTraceContext {
  std::string definition, solution;
  Json workload;                   ///< FibWorkloadJson's
  double reference_latency_s = 0;  ///< the run's baseline median: performance.reference_latency_ms
  std::string hardware;            ///< environment.hardware
  Json libs = Json::object();      ///< environment.libs
  std::string timestamp;           ///< ISO-8601
  std::string where;               ///< for the log: "accelopt run 3, candidate 7 (iteration 2)"
};

/// The definition a task's kernels are filed under (its fib_definition, else its
/// name) and the op_type standing for its family ("uncategorized" when none).
std::string FibDefinitionOf(const suite::Task& task);
std::string FibOpTypeOf(const suite::Task& task);

/// Where, relative to the export folder, the workload of `bound` keeps its
/// integer inputs (page tables): blob/workloads/<op_type>/<definition>/<uuid>.safetensors;
/// "" when it has none.
std::string FibWorkloadBlob(const suite::BoundTask& bound);
/// Writes that file under `root`: the integer inputs drawn once, as the engine
/// draws them, from a seed of the workload's uuid (the same file on every export).
Status WriteFibWorkloadBlob(const suite::BoundTask& bound, const std::string& root);

/// The workload of `bound`: its parameters as axes; each random input random,
/// each integer input a safetensors tensor (FibWorkloadBlob), each constant
/// input and each of the task's constants a scalar.
Json FibWorkloadJson(const suite::BoundTask& bound);
/// One Trace: correctness present for PASSED and INCORRECT_NUMERICAL,
/// performance for PASSED only, as FlashInfer-Bench's schema requires.
Json FibTraceJson(const Candidate& candidate, const FibTraceContext& context);

struct FibExportOptions {
  int64_t run_id = 0;
  std::string out_dir;              ///< created when missing; files of other runs in it are kept
  std::string author = "accelopt";  ///< the solutions' author, and the folder they are filed under
  std::string version;              ///< accelopt's, for environment.libs ("" = left out)
};

/// What one task's export wrote.
struct FibTaskExport {
  std::string task, definition;
  bool definition_is_task_name = false;  ///< the task has no fib_definition
  int64_t baseline_id = 0, best_id = 0;
  double speedup = 1;              ///< best over baseline, as the side-by-side evidence gives it (EvidenceFor)
  std::vector<std::string> files;  ///< relative to out_dir
};

struct FibExportReport {
  std::vector<FibTaskExport> tasks;
  std::vector<std::string> skipped;  ///< "task: why" for each task of the run not exported
};

/// Exports run `options.run_id`. `tasks` are the suite the run's tasks come
/// from. Errors (returned, naming what and where): no such run, nothing to
/// export (no task with an ok kernel), a folder or file that cannot be written.
/// A task that cannot be exported (no ok kernel, a code task, a target without
/// a FlashInfer-Bench language, not in `tasks`) is skipped and said in the report.
/// Traces of the same solutions already in a traces file are replaced, others kept.
Result<FibExportReport> ExportFib(store::Store& store, const std::vector<suite::Task>& tasks,
                                  const FibExportOptions& options);

}  // namespace accelopt::run
