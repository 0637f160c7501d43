#include "eval/calls.h"

#include <immintrin.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <thread>
#include <utility>

#include "core/paths.h"
#include "eval/draw.h"
#include "eval/harness_buffers.h"
#include "eval/perturb.h"
#include "eval/streaming.h"
#include "eval/system_calls.h"

namespace accelopt::eval {
namespace {

constexpr unsigned char kCanary = 0xA5;

// "wrote to input 'x', which is read-only" and the like, for a fault at `address`.
std::string WhereFaulted(uint64_t address, const KernelProcess& process, const suite::BoundTask& bound) {
  const protocol::Layout& at = process.mapped_at();
  auto describe = [&](uint64_t base, size_t bytes, const std::string& what, bool read_only) -> std::string {
    const uint64_t end = base + protocol::WholePages(bytes);
    if (address >= base && address < end)
      return read_only ? ": it wrote to " + what + ", which is read-only" : ": inside " + what;
    if (address + at.guard_bytes >= base && address < base) return ": it accessed memory just before " + what;
    if (address >= end && address < end + at.guard_bytes) return ": it accessed memory past the end of " + what;
    return "";
  };
  for (size_t i = 0; i < bound.inputs.size(); ++i)
    if (auto s = describe(at.input[i], process.layout().inputs[i].bytes, "input '" + bound.inputs[i].name + "'", true);
        !s.empty())
      return s;
  for (size_t i = 0; i < bound.outputs.size(); ++i)
    if (auto s =
            describe(at.output[i], process.layout().outputs[i].bytes, "output '" + bound.outputs[i].name + "'", false);
        !s.empty())
      return s;
  return "";
}

}  // namespace

size_t ElementBytes(OutputType type) { return type == OutputType::kDouble ? sizeof(double) : sizeof(float); }

long ElementsPerSet(const std::vector<suite::BoundTensor>& tensors) {
  long n = 0;
  for (const auto& t : tensors) n += t.elements;
  return n;
}

long Elements(const suite::BoundTask& bound) { return ElementsPerSet(bound.inputs) + ElementsPerSet(bound.outputs); }

Result<std::unique_ptr<KernelProcess>> StartKernelProcess(const suite::BoundTask& bound, OutputType outputs,
                                                          const KernelRunOptions& options, const std::string& dir,
                                                          bool candidate, const std::string& library) {
  std::vector<size_t> input_bytes, output_bytes;
  for (const auto& t : bound.inputs) input_bytes.push_back(static_cast<size_t>(t.elements) * sizeof(float));
  for (const auto& t : bound.outputs) output_bytes.push_back(static_cast<size_t>(t.elements) * ElementBytes(outputs));
  KernelProcessOptions o;
  o.layout = ArgumentLayout::For(input_bytes, output_bytes);
  o.seccomp = candidate;
  o.cores = std::max<int>(1, static_cast<int>(options.cpus.size()));
  o.sandbox.argv = {options.harness_path.empty() ? HarnessPath() : options.harness_path};
  o.sandbox.workdir = dir;
  o.sandbox.cpus = options.cpus;
  o.sandbox.isolate = true;
  o.library = library;
  // OpenBLAS's idle workers otherwise spin for about 2^28 cycles after each
  // call: CPU time after the return, which the monitor charges as outside the call.
  o.sandbox.env = {"OPENBLAS_THREAD_TIMEOUT=4"};
  // See TimingOptions::openmp_active and docs/trust.md.
  if (options.openmp_active) o.sandbox.env.push_back("OMP_WAIT_POLICY=ACTIVE");
  if (options.bind_openmp) o.sandbox.env.insert(o.sandbox.env.end(), {"OMP_PROC_BIND=close", "OMP_PLACES=cores"});
  const long data_bytes = Elements(bound) * 8;  // the arguments, at most doubles
  o.sandbox.limits.wall_seconds = options.wall_seconds;
  o.sandbox.limits.address_space_bytes = options.memory_bytes > 0 ? options.memory_bytes : (2L << 30) + 4 * data_bytes;
  o.sandbox.limits.file_size_bytes = 2 * data_bytes + (64L << 20);
  o.sandbox.limits.max_processes = 0;
  return KernelProcess::Start(std::move(o));
}

namespace {

// Work on big arguments is shared by two threads: this one and one started
// for it and joined at once, so that none is left waiting, let alone spinning,
// while the kernel runs.
constexpr size_t kShareAboveBytes = 4 << 20;

// [begin, end) of part `part` of `parts` of n elements, at 64-byte boundaries.
std::pair<long, long> Part(long n, int part, int parts) {
  const long chunk = (n / parts + 15) / 16 * 16;
  const long begin = std::min(n, chunk * part);
  return {begin, part + 1 == parts ? n : std::min(n, begin + chunk)};
}

template <typename Work>
void InParts(size_t bytes, Work work) {
  if (bytes < kShareAboveBytes) return work(0, 1);
  std::thread helper([&] { work(1, 2); });
  work(0, 2);
  helper.join();
}

size_t ArgumentBytes(const suite::BoundTask& bound, OutputType outputs) {
  return static_cast<size_t>(ElementsPerSet(bound.inputs)) * sizeof(float) +
         static_cast<size_t>(ElementsPerSet(bound.outputs)) * ElementBytes(outputs);
}

}  // namespace

void PrepareCall(KernelProcess& process, const suite::BoundTask& bound, OutputType outputs, const CallInputs& inputs,
                 bool flush) {
  process.Prepare();
  InParts(ArgumentBytes(bound, outputs), [&](int part, int parts) {
    const float* set = inputs.set;
    for (size_t i = 0; i < bound.inputs.size(); ++i) {
      const long n = bound.inputs[i].elements;
      auto [begin, end] = Part(n, part, parts);
      float* into = reinterpret_cast<float*>(process.input(i));
      if (inputs.perturb)
        DeriveInput(bound.inputs[i], set, into, begin, end, *inputs.perturb, i);
      else
        StreamCopy(into + begin, set + begin, static_cast<size_t>(end - begin) * sizeof(float));
      if (flush)
        EvictFromCaches(reinterpret_cast<const char*>(into + begin), static_cast<size_t>(end - begin) * sizeof(float));
      set += n;
    }
    const size_t bytes = ElementBytes(outputs);
    for (size_t i = 0; i < bound.outputs.size(); ++i) {
      auto [begin, end] = Part(bound.outputs[i].elements, part, parts);
      char* into = process.output(i) + begin * bytes;
      if (outputs == OutputType::kDouble)
        StreamFill64(into, std::bit_cast<uint64_t>(std::nan("")), static_cast<size_t>(end - begin));
      else
        StreamFill32(into, std::bit_cast<uint32_t>(std::nanf("")), static_cast<size_t>(end - begin));
      if (flush) EvictFromCaches(into, static_cast<size_t>(end - begin) * bytes);
    }
    StreamFence();
  });
  _mm_mfence();
}

void CopyOutputs(const KernelProcess& process, const suite::BoundTask& bound, OutputType outputs, void* into) {
  const size_t bytes = ElementBytes(outputs);
  InParts(static_cast<size_t>(ElementsPerSet(bound.outputs)) * bytes, [&](int part, int parts) {
    char* p = static_cast<char*>(into);
    for (size_t i = 0; i < bound.outputs.size(); ++i) {
      const long n = bound.outputs[i].elements;
      auto [begin, end] = Part(n, part, parts);
      StreamCopy(p + begin * bytes, process.output(i) + begin * bytes, static_cast<size_t>(end - begin) * bytes);
      p += static_cast<size_t>(n) * bytes;
    }
    StreamFence();
  });
}

void FillSlack(KernelProcess& process) {
  for (size_t i = 0; i < process.layout().outputs.size(); ++i) {
    const size_t bytes = process.layout().outputs[i].bytes;
    std::memset(process.output(i) + bytes, kCanary, protocol::WholePages(bytes) - bytes);
  }
}

std::string CheckSlack(const KernelProcess& process, const suite::BoundTask& bound) {
  for (size_t i = 0; i < bound.outputs.size(); ++i) {
    const size_t bytes = process.layout().outputs[i].bytes;
    const char* slack = process.output(i) + bytes;
    for (size_t k = 0; k < protocol::WholePages(bytes) - bytes; ++k)
      if (static_cast<unsigned char>(slack[k]) != kCanary)
        return "wrote past the end of output '" + bound.outputs[i].name + "'";
  }
  return "";
}

bool DescribeFailure(const ProcessFailure& failure, const KernelProcess& process, const suite::BoundTask& bound,
                     const std::string& during, Verdict& verdict, std::string& message) {
  using Kind = ProcessFailure::Kind;
  using protocol::ReportKind;
  const SandboxOutcome& o = failure.outcome;
  const protocol::Report& r = failure.report;
  const std::string at = " during " + during;
  // Stopping itself is odd; writing the monitor's control memory is tampering.
  if (failure.kind == Kind::kStoppedItself || failure.kind == Kind::kTamperedControl) {
    verdict = failure.kind == Kind::kTamperedControl ? Verdict::kForbidden : Verdict::kRuntimeError;
    message = failure.detail + at;
    return true;
  }
  // The harness could not set itself up, before any kernel code ran: the engine's failure.
  if (r.kind == ReportKind::kSetupFailed && during == "start") {
    message = std::string("evaluation harness: ") + r.message;
    return false;
  }
  // A trapped call reports itself, unless signals were blocked (posix_spawn
  // blocks them all): then the kernel kills with SIGSYS directly.
  if (r.kind == ReportKind::kForbiddenCall || o.term_signal == SIGSYS) {
    verdict = Verdict::kForbidden;
    message = "the kernel made a forbidden system call (" +
              (r.kind == ReportKind::kForbiddenCall ? DescribeRefusedCall(r.syscall)
                                                    : std::string("blocked while signals were blocked")) +
              ")" + at;
    return true;
  }
  if (failure.kind == Kind::kTimedOut || o.timed_out) {
    verdict = Verdict::kTimeout;
    char limit[32];
    std::snprintf(limit, sizeof limit, "%.3g", o.wall_seconds);
    message = std::string("killed after the wall-clock limit of ") + limit + " s" + at +
              (failure.detail.empty() ? "" : " (" + failure.detail + ")");
    return true;
  }
  const int signal_number = r.kind == ReportKind::kFatalSignal ? r.signal : o.term_signal;
  if (signal_number == SIGXCPU || o.term_signal == SIGXCPU) {
    verdict = Verdict::kTimeout;
    message = "CPU time limit exceeded" + at;
    return true;
  }
  if (signal_number == SIGXFSZ) {
    verdict = Verdict::kResourceLimit;
    message = "file size limit exceeded" + at;
    return true;
  }
  if (signal_number != 0 && r.alloc_failed) {
    verdict = Verdict::kResourceLimit;
    message = "memory limit: an allocation failed, then " + SignalName(signal_number) + at;
    return true;
  }
  if (signal_number != 0) {
    verdict = o.term_signal == SIGKILL && r.kind != ReportKind::kFatalSignal ? Verdict::kResourceLimit
                                                                             : Verdict::kRuntimeError;
    std::string where =
        signal_number == SIGSEGV || signal_number == SIGBUS ? WhereFaulted(r.fault_address, process, bound) : "";
    message = "killed by " + SignalName(signal_number) + at + where;
    return true;
  }
  if (r.kind == ReportKind::kLoadFailed) {
    verdict = Verdict::kCompileError;
    message = std::string("cannot load the kernel: ") + r.message;
    return true;
  }
  verdict = Verdict::kRuntimeError;
  message = "the process exited with code " + std::to_string(o.exit_code) + at + " (a kernel must return, not exit)";
  return true;
}

std::string RunLog(const SandboxOutcome& o) {
  std::string log;
  if (!o.out.empty()) log += "--- stdout" + std::string(o.out_truncated ? " (truncated)" : "") + "\n" + o.out;
  if (!o.err.empty()) log += "--- stderr" + std::string(o.err_truncated ? " (truncated)" : "") + "\n" + o.err;
  return log;
}

}  // namespace accelopt::eval
