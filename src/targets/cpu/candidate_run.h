#pragma once
/// The monitor's schedule for one built candidate (DESIGN.md section 5): the
/// correctness calls on the batch's input sets, a warm-up, then series of
/// timed calls on fresh inputs, some of which (positions drawn here, never
/// shown to the kernel) use inputs whose reference outputs the batch knows;
/// then every kept output is compared with the reference.

#include <string>

#include "core/profile.h"
#include "core/result.h"
#include "eval/expected.h"
#include "eval/stats.h"
#include "suite/task.h"
#include "targets/cpu/cpu_target.h"

namespace accelopt::cpu {

/// Runs the candidate library in its own kernel process and fills the
/// profile's verdict, message, errors, latency (when `timed`), counters and
/// accounting. A bad kernel is a verdict; an Error is the engine's own failure.
Status RunCandidate(const suite::BoundTask& bound, const std::string& library, eval::Expected& expected,
                    const CpuTargetOptions& options, const std::string& dir, bool timed, Profile& profile);

/// Runs two candidate libraries side by side, each in its own kernel process,
/// their timed calls interleaved (A, B, B, A, ...) on the same batch's inputs,
/// each call prepared as in RunCandidate, and fills both profiles as
/// RunCandidate would. Returns the speedup of B over A from the pairs of
/// calls (no pairs when either is not ok); an Error is the engine's failure.
Result<PairedSpeedup> RunPair(const suite::BoundTask& bound, const std::string& library_a, const std::string& library_b,
                              eval::Expected& expected, const CpuTargetOptions& options, const std::string& dir_a,
                              const std::string& dir_b, Profile& a, Profile& b);

}  // namespace accelopt::cpu
