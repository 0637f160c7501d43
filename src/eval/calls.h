#pragma once
/// One call of a kernel (candidate or reference) as the monitor prepares and
/// collects it (DESIGN.md section 5). Every call, checked or not, is prepared
/// the same way (its own inputs, outputs poisoned with NaN, every argument
/// evicted from the caches) and its outputs are copied into the monitor's
/// memory before the kernel's process runs again, so that nothing the kernel
/// can observe tells a checked call from another.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/profile.h"
#include "core/result.h"
#include "eval/kernel_process.h"
#include "suite/task.h"

namespace accelopt::eval {

/// How a kernel's process is started on this machine's cores (candidate or reference).
struct KernelRunOptions {
  std::vector<int> cpus;       ///< the cores it runs on; empty = all allowed
  bool bind_openmp = false;    ///< bind each OpenMP thread to one core (OMP_PROC_BIND=close, OMP_PLACES=cores)
  bool openmp_active = false;  ///< OpenMP threads spin while they wait (OMP_WAIT_POLICY=ACTIVE)
  double wall_seconds = 60;    ///< per process
  long memory_bytes = 0;       ///< address-space limit; 0 = 2 GiB + 4x the task's data
  std::string harness_path;    ///< accelopt-harness; "" = HarnessPath()
};

/// The element type of a kernel's outputs: float for candidates and for the
/// float32 evaluation of the reference, double for the reference.
enum class OutputType { kFloat, kDouble };
size_t ElementBytes(OutputType type);

/// Elements of all inputs (or outputs) of one set, back to back.
long ElementsPerSet(const std::vector<suite::BoundTensor>& tensors);
/// Elements of all inputs and outputs together (one set).
long Elements(const suite::BoundTask& bound);

/// A call's inputs: one drawn set (every input back to back), as it is or
/// perturbed with a per-call seed (eval/perturb.h).
struct CallInputs {
  const float* set = nullptr;
  std::optional<uint64_t> perturb;
};

/// Starts the kernel process for `bound`: arguments laid out, the sandbox's
/// limits and cores as the options say, the system-call filter for candidates,
/// isolated from the machine (eval/sandbox.h, SandboxIsolation: what the
/// machine refused is in the process's isolation()), `library` (the one Load
/// will be given) handed over as a descriptor. A process that fails while
/// starting is reported by failed(), not as an Error.
Result<std::unique_ptr<KernelProcess>> StartKernelProcess(const suite::BoundTask& bound, OutputType outputs,
                                                          const KernelRunOptions& options, const std::string& dir,
                                                          bool candidate, const std::string& library);

/// Prepares the next call while the process is stopped: writes its inputs,
/// poisons the outputs, evicts every argument from the caches (when `flush`).
/// Single-threaded on purpose: no worker of the engine may be left spinning
/// on a core while the kernel runs.
void PrepareCall(KernelProcess& process, const suite::BoundTask& bound, OutputType outputs, const CallInputs& inputs,
                 bool flush);

/// Copies every output of the last call, back to back, into `into`.
void CopyOutputs(const KernelProcess& process, const suite::BoundTask& bound, OutputType outputs, void* into);

/// Fills the slack after each output (up to its page end) with a canary.
void FillSlack(KernelProcess& process);
/// "" when every canary is intact; else which output was written past.
std::string CheckSlack(const KernelProcess& process, const suite::BoundTask& bound);

/// What a process that did not finish its command means for the kernel: the
/// verdict and its message (`during` names the call). False when the failure
/// is the harness's own (it could not set up): an engine error, in `message`.
bool DescribeFailure(const ProcessFailure& failure, const KernelProcess& process, const suite::BoundTask& bound,
                     const std::string& during, Verdict& verdict, std::string& message);

/// The child's stdout and stderr, labelled, for the profile.
std::string RunLog(const SandboxOutcome& outcome);

}  // namespace accelopt::eval
