#pragma once
/// The external target: kernels built and measured by any program that speaks
/// the JSON protocol of docs/external-protocol.md (describe, build, check,
/// time; one request per invocation). The engine checks what it can of each
/// answer, computes the latency statistics from the samples itself and scores
/// them with the rates the evaluator reports (eval/scoring.h). An evaluator
/// that fails, hangs or answers outside the protocol is an engine error, never
/// a kernel's verdict.

#include <memory>
#include <string>
#include <vector>

#include "core/result.h"
#include "targets/registry.h"
#include "targets/target.h"

namespace accelopt::external {

inline constexpr int kProtocolVersion = 1;

struct ExternalOptions {
  std::vector<std::string> command;  ///< the evaluator: program and its arguments
  double timeout_seconds = 60;       ///< per invocation
  int seeds = 3;                     ///< correctness runs asked for
  int min_calls = 10, max_calls = 50;
  double budget_seconds = 0.5;  ///< kernel time per timed series asked for
  std::string work_dir;         ///< scratch folders for requests; "" = CacheDir()/work
  bool keep_work = false;
  /// Run the evaluator once per request even when it offers to serve.
  bool one_invocation_per_request = false;
};

/// Describes the evaluator (one `describe` invocation) and returns the target;
/// an Error when it cannot be run or its description is not valid.
Result<std::unique_ptr<targets::Target>> MakeExternalTarget(const ExternalOptions& options);

/// "python3 eval.py --fast" as a command: split at spaces (no quoting).
std::vector<std::string> SplitCommand(const std::string& text);

targets::TargetKind Registration();

}  // namespace accelopt::external
