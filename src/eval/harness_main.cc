// accelopt-harness: the child side of an evaluation.
//
// Usage: accelopt-harness [SPEC.json]
//   fd 3: events, written as JSON lines; fd 4: inputs; fd 5: outputs (shared memory);
//   fd 6: the spec, when no file is named (read and closed before the kernel is
//   loaded, so that not even its constructors can see which timed calls are checked)
//
// Loads a compiled kernel (or reference), copies in the inputs the engine drew
// for each seed, poisons the outputs, calls it, checks what it left behind and
// hands its outputs back for the parent to compare. In candidate mode it then times
// the kernel. Everything the parent needs to classify a failure (the phase, a
// fatal signal, a failed allocation, a forbidden system call) is reported on
// fd 3 before the process dies. This process never sees reference outputs.

#include <dlfcn.h>
#include <fcntl.h>
#include <immintrin.h>
#include <linux/perf_event.h>
#include <sched.h>
#include <seccomp.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstring>
#include <fstream>
#include <iterator>
#include <limits>
#include <nlohmann/json.hpp>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "core/clock.h"
#include "eval/harness_buffers.h"
#include "eval/perturb.h"
#include "eval/shared_memory.h"
#include "eval/stats.h"
#include "eval/trapped_calls.h"

using accelopt::NowSeconds;
using accelopt::eval::GuardedBuffer;
using nlohmann::json;

namespace {

constexpr int kEventFd = 3;
constexpr int kInputsFd = 4;   // sealed shared memory: every seed's inputs
constexpr int kOutputsFd = 5;  // shared memory: every seed's outputs
constexpr int kSpecFd = 6;     // the spec
constexpr int kMaxArgs = 24;
constexpr double kWatchSettleSeconds = 0.03;  // after a call returns, before the CPU watch
constexpr double kWatchSeconds = 0.04;        // the CPU watch

// ---------------------------------------------------------------- reporting

std::atomic<bool> g_alloc_failed{false};
char g_phase[128] = "start";
// Every event carries the token the engine put in the spec: a line on fd 3
// without it was written by someone else (the kernel).
char g_token[64] = "";

void Emit(json event) {
  event["token"] = g_token;
  std::string line = event.dump() + "\n";
  const char* p = line.data();
  size_t left = line.size();
  while (left > 0) {
    ssize_t n = write(kEventFd, p, left);
    if (n <= 0) return;
    p += n;
    left -= static_cast<size_t>(n);
  }
}

const double g_start = NowSeconds();

void SetPhase(const std::string& phase) {
  std::snprintf(g_phase, sizeof g_phase, "%s", phase.c_str());
  Emit({{"event", "phase"}, {"phase", phase}, {"t", NowSeconds() - g_start}});
}

// Async-signal-safe: formats by hand, no allocation.
void AppendText(char* buf, size_t& len, size_t cap, const char* text) {
  while (*text && len + 1 < cap) buf[len++] = *text++;
}
void AppendInt(char* buf, size_t& len, size_t cap, long value) {
  char digits[24];
  int n = 0;
  bool neg = value < 0;
  unsigned long v = neg ? -static_cast<unsigned long>(value) : static_cast<unsigned long>(value);
  do digits[n++] = static_cast<char>('0' + v % 10), v /= 10;
  while (v && n < 22);
  if (neg) digits[n++] = '-';
  while (n > 0 && len + 1 < cap) buf[len++] = digits[--n];
}

void OnFatalSignal(int sig, siginfo_t* info, void*) {
  char buf[512];
  size_t len = 0;
  bool forbidden = sig == SIGSYS;
  AppendText(buf, len, sizeof buf,
             forbidden ? "{\"event\":\"forbidden\",\"syscall\":" : "{\"event\":\"signal\",\"signal\":");
  AppendInt(buf, len, sizeof buf, forbidden ? info->si_syscall : sig);
  AppendText(buf, len, sizeof buf, ",\"alloc_failed\":");
  AppendText(buf, len, sizeof buf, g_alloc_failed.load() ? "true" : "false");
  AppendText(buf, len, sizeof buf, ",\"phase\":\"");
  AppendText(buf, len, sizeof buf, g_phase);
  AppendText(buf, len, sizeof buf, "\",\"token\":\"");
  AppendText(buf, len, sizeof buf, g_token);
  AppendText(buf, len, sizeof buf, "\"}\n");
  ssize_t ignored = write(kEventFd, buf, len);
  (void)ignored;
  if (forbidden) _exit(71);
  signal(sig, SIG_DFL);
  raise(sig);
}

void InstallSignalHandlers() {
  static std::vector<char> alt_stack(1 << 16);
  stack_t ss{};
  ss.ss_sp = alt_stack.data();
  ss.ss_size = alt_stack.size();
  sigaltstack(&ss, nullptr);
  struct sigaction sa {};
  sa.sa_sigaction = OnFatalSignal;
  sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
  sigemptyset(&sa.sa_mask);
  for (int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGSYS, SIGXCPU, SIGXFSZ, SIGTRAP})
    sigaction(sig, &sa, nullptr);
}

// ------------------------------------------------------------ process rules

// Two filters, both trapping (SIGSYS -> "forbidden"); eval/trapped_calls.h
// lists the calls. The first goes in before the kernel's library is loaded,
// since its constructors run then: no new processes or programs, sockets,
// signals to or memory of other processes, no changes to files, limits,
// scheduling or the machine, and files only opened for reading (the loader
// opens the library and what it needs). Threads are allowed: clone with CLONE_THREAD passes; clone3
// answers ENOSYS so that the C library falls back to clone, whose flags a
// filter can inspect. The second, once everything is loaded and allocated,
// closes files altogether (a kernel computes on its arguments only) and
// refuses executable memory (patching code, the harness's included).
using SeccompRules = int (*)(scmp_filter_ctx);

bool LoadFilter(SeccompRules rules, std::string& error) {
  scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
  if (!ctx) return error = "seccomp_init failed", false;
  int rc = rules(ctx);
  if (rc == 0) rc = seccomp_load(ctx);
  seccomp_release(ctx);
  if (rc != 0) return error = std::string("seccomp filter: ") + std::strerror(-rc), false;
  return true;
}

int ProcessRules(scmp_filter_ctx ctx) {
  int rc = 0;
  for (const auto& call : accelopt::eval::TrappedCalls())
    if (call.when == accelopt::eval::TrappedCall::kAlways)
      rc |= seccomp_rule_add(ctx, SCMP_ACT_TRAP, static_cast<int>(call.number), 0);
  rc |= seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3), 0);
  rc |= seccomp_rule_add(ctx, SCMP_ACT_TRAP, SCMP_SYS(clone), 1, SCMP_A0(SCMP_CMP_MASKED_EQ, CLONE_THREAD, 0));
  // Signals: to this process only (raise() and abort() use tgkill on it).
  const auto self = static_cast<scmp_datum_t>(getpid());
  for (int call : {SCMP_SYS(tgkill), SCMP_SYS(rt_sigqueueinfo), SCMP_SYS(rt_tgsigqueueinfo)})
    rc |= seccomp_rule_add(ctx, SCMP_ACT_TRAP, call, 1, SCMP_A0(SCMP_CMP_NE, self));
  // Limits may be read (argument 2, the new limit, null), not set.
  rc |= seccomp_rule_add(ctx, SCMP_ACT_TRAP, SCMP_SYS(prlimit64), 1, SCMP_A2(SCMP_CMP_NE, 0));
  // Opening for writing or creating: flags are argument 1 of open, 2 of openat.
  for (auto [call, arg] : {std::pair{SCMP_SYS(open), 1u}, std::pair{SCMP_SYS(openat), 2u}}) {
    rc |= seccomp_rule_add(ctx, SCMP_ACT_TRAP, call, 1, SCMP_CMP(arg, SCMP_CMP_MASKED_EQ, O_ACCMODE, O_WRONLY));
    rc |= seccomp_rule_add(ctx, SCMP_ACT_TRAP, call, 1, SCMP_CMP(arg, SCMP_CMP_MASKED_EQ, O_ACCMODE, O_RDWR));
    rc |= seccomp_rule_add(ctx, SCMP_ACT_TRAP, call, 1, SCMP_CMP(arg, SCMP_CMP_MASKED_EQ, O_CREAT, O_CREAT));
    rc |= seccomp_rule_add(ctx, SCMP_ACT_TRAP, call, 1, SCMP_CMP(arg, SCMP_CMP_MASKED_EQ, O_TRUNC, O_TRUNC));
  }
  return rc;
}

// After loading: executable memory and files are over.
int LoadedRules(scmp_filter_ctx ctx) {
  int rc = 0;
  for (int call : {SCMP_SYS(open), SCMP_SYS(openat)}) rc |= seccomp_rule_add(ctx, SCMP_ACT_TRAP, call, 0);
  // The protection is argument 2 of mmap, mprotect and pkey_mprotect.
  for (int call : {SCMP_SYS(mmap), SCMP_SYS(mprotect), SCMP_SYS(pkey_mprotect)})
    rc |= seccomp_rule_add(ctx, SCMP_ACT_TRAP, call, 1, SCMP_A2(SCMP_CMP_MASKED_EQ, PROT_EXEC, PROT_EXEC));
  return rc;
}

// --------------------------------------------------------------- counters

struct Counter {
  const char* name;
  uint32_t type;
  uint64_t config;
  int fd = -1;
};

class Counters {
 public:
  Counters() {
    counters_ = {{"cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES},
                 {"instructions", PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS},
                 {"cache_misses", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_MISSES}};
    for (auto& c : counters_) {
      perf_event_attr attr{};
      attr.size = sizeof attr;
      attr.type = c.type;
      attr.config = c.config;
      attr.disabled = 1;
      attr.inherit = 1;  // threads created later (the OpenMP pool) count too
      attr.exclude_kernel = 1;
      attr.exclude_hv = 1;
      attr.read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
      c.fd = static_cast<int>(syscall(SYS_perf_event_open, &attr, 0, -1, -1, 0));
      if (c.fd < 0 && error_.empty()) error_ = std::string("perf_event_open: ") + std::strerror(errno);
    }
  }
  void Enable() {
    for (auto& c : counters_)
      if (c.fd >= 0) ioctl(c.fd, PERF_EVENT_IOC_ENABLE, 0);
  }
  void Disable() {
    for (auto& c : counters_)
      if (c.fd >= 0) ioctl(c.fd, PERF_EVENT_IOC_DISABLE, 0);
  }
  json Read(long calls) const {
    json out = json::object();
    for (const auto& c : counters_) {
      uint64_t values[3] = {0, 0, 0};
      if (c.fd < 0 || read(c.fd, values, sizeof values) != sizeof values) continue;
      // Scale for multiplexing (time running < time enabled).
      double scaled = values[2] ? double(values[0]) * double(values[1]) / double(values[2]) : 0;
      out[c.name] = scaled / std::max<long>(calls, 1);
    }
    return out;
  }
  const std::string& error() const { return error_; }

 private:
  std::vector<Counter> counters_;
  std::string error_;
};

// ------------------------------------------------------------------ calling

using AnyFn = void (*)();

template <size_t... I>
void CallWith(AnyFn fn, void* const* args, std::index_sequence<I...>) {
  using Typed = void (*)(decltype((void)I, static_cast<void*>(nullptr))...);
  reinterpret_cast<Typed>(fn)(args[I]...);
}

template <size_t N = 0>
void Call(AnyFn fn, void* const* args, size_t count) {
  if constexpr (N > kMaxArgs) {
    (void)fn, (void)args, (void)count;
  } else {
    if (count == N) return CallWith(fn, args, std::make_index_sequence<N>{});
    Call<N + 1>(fn, args, count);
  }
}

struct Buffers {
  std::vector<GuardedBuffer> inputs, outputs;
  std::vector<void*> args;
};

// clflushopt is weakly ordered (flushes overlap), several times faster than clflush.
__attribute__((target("clflushopt"))) void FlushLinesOpt(const char* p, size_t bytes) {
  for (size_t off = 0; off < bytes; off += 64) _mm_clflushopt(const_cast<char*>(p + off));
}

void FlushLines(const char* p, size_t bytes) {
  for (size_t off = 0; off < bytes; off += 64) _mm_clflush(p + off);
}

// The roofline assumes operands come from memory: evict every argument line.
void FlushCaches(const Buffers& b) {
  static const bool has_clflushopt = __builtin_cpu_supports("clflushopt");
  for (const auto* group : {&b.inputs, &b.outputs})
    for (const auto& buf : *group) {
      auto* p = static_cast<const char*>(buf.data());
      if (has_clflushopt)
        FlushLinesOpt(p, buf.bytes());
      else
        FlushLines(p, buf.bytes());
    }
  _mm_mfence();
}

// ------------------------------------------------------------------- phases

struct Spec {
  std::string mode, library, symbol;
  std::vector<json> inputs, outputs;
  size_t seeds = 0;  // checked input sets on fd 4
  size_t slots = 0;  // output sets on fd 5: one per seed, then one per checked timed call
  json timing;
  bool counters = false, seccomp = false;
};

// The spec's text: from the named file, else all of fd 6 (then closed).
std::string ReadSpecText(const char* path) {
  if (path) {
    std::ifstream in(path);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }
  std::string text;
  char chunk[4096];
  for (ssize_t n; (n = read(kSpecFd, chunk, sizeof chunk)) != 0;) {
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) break;
    text.append(chunk, static_cast<size_t>(n));
  }
  close(kSpecFd);
  return text;
}

Spec ParseSpec(const std::string& text) {
  json j = json::parse(text);
  std::snprintf(g_token, sizeof g_token, "%s", j.value("token", "").c_str());
  Spec s;
  s.mode = j.at("mode");
  s.library = j.at("library");
  s.symbol = j.at("symbol");
  for (const auto& t : j.at("inputs")) s.inputs.push_back(t);
  for (const auto& t : j.at("outputs")) s.outputs.push_back(t);
  s.seeds = j.at("seeds").get<size_t>();
  s.timing = j.value("timing", json::object());
  s.slots = s.seeds + s.timing.value("checked", json::array()).size();
  s.counters = j.value("counters", false);
  s.seccomp = j.value("seccomp", false);
  return s;
}

bool Allocate(const Spec& spec, Buffers& b) {
  size_t out_elem = spec.mode == "reference" ? sizeof(double) : sizeof(float);
  for (const auto& t : spec.inputs) b.inputs.emplace_back(t.at("count").get<size_t>() * sizeof(float));
  for (const auto& t : spec.outputs) b.outputs.emplace_back(t.at("count").get<size_t>() * out_elem);
  for (auto* group : {&b.inputs, &b.outputs})
    for (auto& buf : *group) {
      if (!buf.data()) return false;
      b.args.push_back(buf.data());
    }
  return true;
}

void Poison(Buffers& b, bool reference) {
  for (auto& out : b.outputs) {
    if (reference)
      std::fill_n(static_cast<double*>(out.data()), out.bytes() / 8, std::nan(""));
    else
      std::fill_n(static_cast<float*>(out.data()), out.bytes() / 4, std::nanf(""));
  }
}

size_t BytesOf(const std::vector<GuardedBuffer>& buffers) {
  size_t total = 0;
  for (const auto& buf : buffers) total += buf.bytes();
  return total;
}

// Inputs are drawn by the engine, once per seed, into sealed shared memory on
// fd 4 (seed after seed, each seed's inputs back to back); both the reference
// and the candidate copy them from there. Returns the start of one seed's inputs.
const char* SharedInputs(const Buffers& b, size_t seeds, size_t seed_index) {
  static const char* shared = nullptr;
  size_t stride = BytesOf(b.inputs);
  if (!shared) shared = static_cast<const char*>(accelopt::eval::MapShared(kInputsFd, seeds * stride, false));
  return shared ? shared + seed_index * stride : nullptr;
}

bool ReadInputs(Buffers& b, size_t seeds, size_t seed_index) {
  const char* p = SharedInputs(b, seeds, seed_index);
  if (!p) return false;
  for (auto& buf : b.inputs) {
    std::memcpy(buf.data(), p, buf.bytes());
    p += buf.bytes();
  }
  return true;
}

// "" when every canary after the arguments is intact; else the violation.
std::string CheckGuards(const Spec& spec, const Buffers& b) {
  for (size_t i = 0; i < b.inputs.size(); ++i)
    if (!b.inputs[i].IntactCanary())
      return "wrote past the end of input '" + spec.inputs[i].at("name").get<std::string>() + "'";
  for (size_t i = 0; i < b.outputs.size(); ++i)
    if (!b.outputs[i].IntactCanary())
      return "wrote past the end of output '" + spec.outputs[i].at("name").get<std::string>() + "'";
  return "";
}

// After a call: every guard intact, every input unchanged. Returns a violation or "".
std::string CheckAfterCall(const Spec& spec, Buffers& b, const std::vector<std::vector<char>>& pristine) {
  if (std::string guards = CheckGuards(spec, b); !guards.empty()) return guards;
  for (size_t i = 0; i < b.inputs.size(); ++i)
    if (std::memcmp(b.inputs[i].data(), pristine[i].data(), b.inputs[i].bytes()) != 0)
      return "modified input '" + spec.inputs[i].at("name").get<std::string>() + "'";
  return "";
}

// Outputs go to shared memory on fd 5, laid out like the inputs. Mapped only
// while copying, so the kernel's calls never run with it mapped.
bool WriteOutputs(const Buffers& b, size_t slots, size_t slot) {
  size_t stride = BytesOf(b.outputs);
  char* shared = static_cast<char*>(accelopt::eval::MapShared(kOutputsFd, slots * stride, true));
  if (!shared) return false;
  char* p = shared + slot * stride;
  for (const auto& buf : b.outputs) {
    std::memcpy(p, buf.data(), buf.bytes());
    p += buf.bytes();
  }
  accelopt::eval::UnmapShared(shared, slots * stride);
  return true;
}

double ProcessCpuSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + ts.tv_nsec * 1e-9;
}

// Work must be finished when the kernel returns: watch the process's CPU time
// for a short window (an idle OpenMP pool spins for well under a millisecond
// before it sleeps; threads still computing burn the whole window) and check
// that the outputs did not change meanwhile.
void Pause(double seconds) {
  timespec pause{0, static_cast<long>(seconds * 1e9)};
  while (nanosleep(&pause, &pause) != 0 && errno == EINTR) {
  }
}

std::string WatchAfterReturn(const Spec& spec, const Buffers& b) {
  std::vector<std::vector<char>> before;
  for (const auto& out : b.outputs) {
    auto* p = static_cast<const char*>(out.data());
    before.emplace_back(p, p + out.bytes());
  }
  // An idle OpenMP pool spins for some milliseconds before it sleeps (measured
  // here: about 10 ms of CPU on a loaded machine); let it settle, then measure.
  Pause(kWatchSettleSeconds);
  double cpu0 = ProcessCpuSeconds();
  Pause(kWatchSeconds);
  double busy = ProcessCpuSeconds() - cpu0;
  for (size_t k = 0; k < b.outputs.size(); ++k)
    if (std::memcmp(b.outputs[k].data(), before[k].data(), b.outputs[k].bytes()) != 0)
      return "changed output '" + spec.outputs[k].at("name").get<std::string>() + "' after returning";
  // A quarter of one core over the window: a settled pool stays far below it, and
  // a thread still computing reaches it even when it shares its core with two others.
  if (busy > 0.25 * kWatchSeconds)
    return "kept computing after returning (" + std::to_string(static_cast<int>(busy * 1000)) + " ms of CPU in " +
           std::to_string(static_cast<int>(kWatchSeconds * 1000)) + " ms, " +
           std::to_string(static_cast<int>(kWatchSettleSeconds * 1000)) + " ms after the call)";
  return "";
}

// Runs each seed once: fill, snapshot, poison, call, check, write outputs.
bool RunSeeds(const Spec& spec, AnyFn fn, Buffers& b, double& first_call_seconds, double& total_seconds) {
  bool reference = spec.mode == "reference";
  std::vector<std::vector<char>> pristine(b.inputs.size());
  for (size_t s = 0; s < spec.seeds; ++s) {
    if (!ReadInputs(b, spec.seeds, s)) {
      Emit({{"event", "harness_error"}, {"message", "cannot read the inputs for seed " + std::to_string(s)}});
      return false;
    }
    for (size_t i = 0; i < b.inputs.size() && !reference; ++i) {  // the reference is trusted
      auto* p = static_cast<const char*>(b.inputs[i].data());
      pristine[i].assign(p, p + b.inputs[i].bytes());
    }
    Poison(b, reference);
    SetPhase("correctness call, seed " + std::to_string(s));
    double t0 = NowSeconds();
    Call(fn, b.args.data(), b.args.size());
    double dt = NowSeconds() - t0;
    if (s == 0) first_call_seconds = dt;
    total_seconds += dt;
    SetPhase("checking after correctness call, seed " + std::to_string(s));
    std::string violation = reference ? "" : CheckAfterCall(spec, b, pristine);
    if (violation.empty() && !reference && s == 0) violation = WatchAfterReturn(spec, b);
    if (!violation.empty()) {
      Emit({{"event", "violation"}, {"seed_index", s}, {"message", violation}});
      return false;
    }
    if (!WriteOutputs(b, spec.slots, s)) {
      Emit({{"event", "harness_error"}, {"message", "cannot write outputs for seed " + std::to_string(s)}});
      return false;
    }
  }
  return true;
}

// Timed series. Every timed call gets inputs no earlier call saw: a checked
// set, perturbed with the call's own seed (eval/perturb.h), so a kernel that
// caches by pointer, content or call count cannot gain. Outputs are poisoned
// and every argument evicted from the caches before each call; inputs are
// checked unchanged after it. At positions drawn here, at run time, a few calls
// in each series use a perturbation the engine chose (and runs the reference
// on); their outputs go back to it. A kernel cannot tell which of its timed
// calls are checked. Series are re-measured while the
// relative interquartile spread exceeds the tolerance, up to max_series.
struct CheckedCall {
  size_t set = 0;  // the checked set it perturbs
  uint64_t seed = 0;
};

struct TimingPlan {
  uint64_t perturb_seed = 0;
  std::vector<CheckedCall> checked;  // one for the final call, then per_series for each series
  int per_series = 0;
};

TimingPlan ReadTimingPlan(const json& t) {
  TimingPlan plan;
  plan.perturb_seed = t.value("perturb_seed", uint64_t{0});
  plan.per_series = t.value("checked_per_series", 0);
  for (const auto& c : t.value("checked", json::array()))
    plan.checked.push_back({c.at("set").get<size_t>(), c.at("seed").get<uint64_t>()});
  return plan;
}

// Fills the input arguments with set `set` perturbed by `seed`.
void FillPerturbed(Buffers& b, const Spec& spec, size_t set, uint64_t seed) {
  const char* base = SharedInputs(b, spec.seeds, set);
  for (size_t i = 0; i < b.inputs.size(); ++i) {
    accelopt::eval::Perturb(reinterpret_cast<const float*>(base), static_cast<float*>(b.inputs[i].data()),
                            static_cast<long>(b.inputs[i].bytes() / sizeof(float)), seed, i);
    base += b.inputs[i].bytes();
  }
}

// "" when the inputs are still what FillPerturbed put there; else the violation.
std::string CheckPerturbedInputs(const Spec& spec, const Buffers& b, size_t set, uint64_t seed,
                                 const std::string& when) {
  const char* base = SharedInputs(b, spec.seeds, set);
  for (size_t i = 0; i < b.inputs.size(); ++i) {
    long n = static_cast<long>(b.inputs[i].bytes() / sizeof(float));
    long at = accelopt::eval::FirstPerturbMismatch(reinterpret_cast<const float*>(base),
                                                   static_cast<const float*>(b.inputs[i].data()), n, seed, i);
    if (at >= 0)
      return "modified input '" + spec.inputs[i].at("name").get<std::string>() + "' during " + when + " (element " +
             std::to_string(at) + ")";
    base += b.inputs[i].bytes();
  }
  return CheckGuards(spec, b);
}

// `count` distinct call positions in [0, calls), drawn from fresh entropy.
std::vector<long> DrawPositions(long calls, int count) {
  static std::mt19937_64 rng{(uint64_t{std::random_device{}()} << 32) | std::random_device{}()};
  std::vector<long> all(calls);
  std::iota(all.begin(), all.end(), 0L);
  std::shuffle(all.begin(), all.end(), rng);
  all.resize(std::min<long>(count, calls));
  return all;
}

// Hands a checked call's outputs back to the engine, in its slot, and notes
// the call for the result. False (reported) when the outputs cannot be written.
bool HandBack(const Spec& spec, const Buffers& b, size_t slot, const std::string& label, json& checked_calls) {
  if (!WriteOutputs(b, spec.slots, slot)) {
    Emit({{"event", "harness_error"}, {"message", "cannot write the outputs of " + label}});
    return false;
  }
  checked_calls.push_back({{"slot", slot}, {"label", label}});
  return true;
}

std::string CallLabel(long call, int series) {
  return "timed call " + std::to_string(call + 1) + " of series " + std::to_string(series + 1);
}

// Runs the timed series. Returns false when the kernel misbehaved (with
// `violation` set) or the harness failed (reported here, `violation` empty);
// fills `result` otherwise.
bool TimeKernel(const Spec& spec, AnyFn fn, Buffers& b, double first_call_seconds, Counters* counters, json& result,
                std::string& violation) {
  const json& t = spec.timing;
  int warmup = t.value("warmup", 1);
  int min_calls = t.value("min_calls", 5), max_calls = t.value("max_calls", 100);
  double budget = t.value("budget_seconds", 1.0), tol = t.value("spread_tolerance", 0.01);
  int max_series = t.value("max_series", 3);
  bool flush = t.value("flush", true);
  TimingPlan plan = ReadTimingPlan(t);

  SetPhase("warm-up");
  double warmup_start = NowSeconds();
  for (int i = 0; i < warmup; ++i) Call(fn, b.args.data(), b.args.size());
  double warmup_seconds = NowSeconds() - warmup_start;
  long calls = std::clamp<long>(static_cast<long>(budget / std::max(first_call_seconds, 1e-7)), min_calls, max_calls);
  json series = json::array(), checked_calls = json::array();
  long timed = 0;
  SetPhase("timed calls");
  double setup_seconds = 0;
  for (int s = 0; s < max_series; ++s) {
    size_t first_slot = 1 + static_cast<size_t>(s) * plan.per_series;
    int checked_here = first_slot + plan.per_series <= plan.checked.size() ? plan.per_series : 0;
    std::vector<long> positions = DrawPositions(calls, checked_here);
    std::vector<double> samples;
    for (long c = 0; c < calls; ++c) {
      double setup_start = NowSeconds();
      auto at = std::find(positions.begin(), positions.end(), c);
      long slot = at == positions.end() ? -1 : static_cast<long>(first_slot + (at - positions.begin()));
      CheckedCall source = slot >= 0 ? plan.checked[slot]
                                     : CheckedCall{static_cast<size_t>(timed + c) % spec.seeds,
                                                   accelopt::eval::CallSeed(plan.perturb_seed, timed + c)};
      FillPerturbed(b, spec, source.set, source.seed);
      Poison(b, false);
      if (flush) FlushCaches(b);
      if (counters) counters->Enable();  // the kernel's calls only, not the set-up around them
      double t0 = NowSeconds();
      setup_seconds += t0 - setup_start;
      Call(fn, b.args.data(), b.args.size());
      samples.push_back(NowSeconds() - t0);
      if (counters) counters->Disable();
      std::string label = CallLabel(c, s);
      violation = CheckPerturbedInputs(spec, b, source.set, source.seed, label);
      if (!violation.empty()) return false;
      if (slot >= 0 && !HandBack(spec, b, spec.seeds + slot, label, checked_calls)) return false;
    }
    timed += calls;
    series.push_back(samples);
    if (accelopt::eval::Summarize(samples).spread <= tol) break;
  }

  // One more, untimed call, watched after it returns: its outputs must be
  // complete, stay put and be right.
  if (!plan.checked.empty()) {
    SetPhase("checking after the timed calls");
    const CheckedCall& last = plan.checked.front();
    FillPerturbed(b, spec, last.set, last.seed);
    Poison(b, false);
    Call(fn, b.args.data(), b.args.size());
    const std::string label = "the call after the timed calls";
    violation = WatchAfterReturn(spec, b);
    if (violation.empty()) violation = CheckPerturbedInputs(spec, b, last.set, last.seed, label);
    if (!violation.empty()) return false;
    if (!HandBack(spec, b, spec.seeds, label, checked_calls)) return false;
  }
  result = {{"series", series},
            {"timed_calls", timed},
            {"warmup_seconds", warmup_seconds},
            {"setup_seconds", setup_seconds},
            {"checked_calls", checked_calls}};
  if (counters) result["counters"] = counters->Read(timed);
  return true;
}

}  // namespace

// Failed allocations are remembered so that a crash that follows one is
// reported as resource exhaustion rather than a plain runtime error.
extern "C" {
void* __libc_malloc(size_t);
void* __libc_calloc(size_t, size_t);
void* __libc_realloc(void*, size_t);
void* __libc_memalign(size_t, size_t);

void* malloc(size_t n) {
  void* p = __libc_malloc(n);
  if (!p && n) g_alloc_failed = true;
  return p;
}
void* calloc(size_t n, size_t m) {
  void* p = __libc_calloc(n, m);
  if (!p && n && m) g_alloc_failed = true;
  return p;
}
void* realloc(void* old, size_t n) {
  void* p = __libc_realloc(old, n);
  if (!p && n) g_alloc_failed = true;
  return p;
}
void* aligned_alloc(size_t alignment, size_t n) {
  void* p = __libc_memalign(alignment, n);
  if (!p && n) g_alloc_failed = true;
  return p;
}
void* memalign(size_t alignment, size_t n) { return aligned_alloc(alignment, n); }
int posix_memalign(void** out, size_t alignment, size_t n) {
  void* p = aligned_alloc(alignment, n);
  if (!p && n) return ENOMEM;
  *out = p;
  return 0;
}
}

int main(int argc, char** argv) {
  if (argc > 2) {
    std::fprintf(stderr, "usage: accelopt-harness [SPEC.json] (events on fd 3; spec on fd 6 if no file)\n");
    return 2;
  }
  InstallSignalHandlers();
  Spec spec;
  try {
    spec = ParseSpec(ReadSpecText(argc == 2 ? argv[1] : nullptr));
  } catch (const std::exception& e) {
    Emit({{"event", "harness_error"}, {"message", std::string("bad spec: ") + e.what()}});
    return 3;
  }
  std::unique_ptr<Counters> counters;
  if (spec.counters) counters = std::make_unique<Counters>();

  std::string error;
  if (spec.seccomp && !LoadFilter(ProcessRules, error)) {
    Emit({{"event", "harness_error"}, {"message", error}});
    return 6;
  }
  SetPhase("loading");
  void* lib = dlopen(spec.library.c_str(), RTLD_NOW | RTLD_LOCAL);
  AnyFn fn = lib ? reinterpret_cast<AnyFn>(dlsym(lib, spec.symbol.c_str())) : nullptr;
  if (!fn) {
    const char* why = dlerror();
    Emit({{"event", "load_error"}, {"message", why ? std::string(why) : "symbol not found: " + spec.symbol}});
    return 4;
  }
  Buffers b;
  if (spec.inputs.size() + spec.outputs.size() > kMaxArgs || !Allocate(spec, b)) {
    Emit({{"event", "harness_error"}, {"message", "cannot allocate the kernel's arguments"}});
    return 5;
  }
  if (spec.seccomp && !LoadFilter(LoadedRules, error)) {
    Emit({{"event", "harness_error"}, {"message", error}});
    return 6;
  }
  double first_call = 0, correctness = 0;
  if (!RunSeeds(spec, fn, b, first_call, correctness)) return 0;
  json result = {{"event", "result"}, {"first_call_seconds", first_call}, {"correctness_seconds", correctness}};
  if (spec.mode == "candidate" && spec.timing.value("enabled", true)) {
    json timing;
    std::string violation;
    if (!TimeKernel(spec, fn, b, first_call, counters && counters->error().empty() ? counters.get() : nullptr, timing,
                    violation)) {
      if (!violation.empty()) Emit({{"event", "violation"}, {"message", violation}});
      return 0;
    }
    result.update(timing);
    if (counters && !counters->error().empty()) result["counters_error"] = counters->error();
  }
  Emit(result);
  Emit({{"event", "done"}});
  return 0;
}
