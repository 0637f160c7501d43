// accelopt-cuda-harness: measures one candidate kernel (a shared library
// built by the cuda target) in two processes. The engine builds it with nvcc
// at first use (its source is compiled into the engine) and judges what the
// monitor reports; nothing the kernel's process holds decides a verdict.
//
//   accelopt-cuda-harness KERNEL.so PLAN        the monitor; reports on fd 3, outputs on fd 4
//   accelopt-cuda-harness --runner KERNEL.so    the kernel's process, started by the monitor
//
// The monitor reads the plan and the input files it names, deletes them,
// allocates every argument on the GPU in its own context and starts the
// runner, which maps the arguments through CUDA IPC; then the monitor makes
// itself undumpable (no process of its user can read or trace it) and the
// runner, holding no privilege any more, loads the kernel and
// then does one thing when told: call it once. The runner holds no plan, no
// clock, no inputs but the call's own, and no file it reports through; it is
// stopped (SIGSTOP, all its threads) from the moment a call returns until the
// next begins. Its working folder is empty; as root it runs with no
// capabilities, so it cannot trace the monitor or the engine either.
//
// Every call, correctness, warm-up or timed, is prepared alike while the
// runner is stopped: each input written on the device from a base set kept in
// the monitor's memory (float inputs through eval/perturb_bits.h with the
// call's key and flippable bits, which the engine's reference applies alike;
// integer inputs copied from the call's row of TABLES), a private copy of them
// kept, every output poisoned (all bits set), the canary after each output
// filled, persisting L2 lines reset, the L2 flushed by writing a buffer twice
// its size, and a probe on the monitor's stream that finds the GPU idle. The
// call is timed on the monitor's clock from releasing the runner to its
// answer, after the runner called the kernel and synchronized the device; the
// runner then stops, and the monitor's own probe measures any GPU work of
// the call still running (it queues behind it), which is added to the call's
// time. The outputs are then copied to the monitor's memory, the inputs and
// canaries checked, and the outputs read again: work that changed them after
// they were taken is reported. Which timed calls are checked against the
// reference is drawn by the monitor after each call ran (exactly CHECKS of
// them), from its own entropy; every call's outputs are copied to the host
// alike, so the time between calls tells nothing.
//
// PLAN (text):
//   inputs N n_0 ... n_{N-1}        elements of each input
//   itypes t_0 ... t_{N-1}          element types: 0 float32, 1 bf16, 2 int32
//   flip f_0 ... f_{N-1}            the bits a perturbed call may flip in each input's float32 bits
//   outputs N n_0 ... / otypes ...
//   sets S FILE                     S base sets: every non-int32 input back to back, in its element type
//   tables FILE                     per call, in order, its int32 inputs back to back
//   calls C                         then C lines, one per call:
//   call SET PERTURBED lo_0 hi_0 ... lo_{N-1} hi_{N-1}
//   returned R                      calls [0, R) (the correctness calls) always have their outputs returned
//   timed_from F                    calls [F, C) are timed; CHECKS of them are checked
//   checks K
//   flush_bytes B                   0: twice the device's L2
//
// fd 3 (text, appended as the run goes, so that a crash leaves what came before):
//   device NAME sm_XY l2_bytes
//   handshake_ns NS                 median of empty calls (prepared and timed as calls, the runner
//                                   calling nothing), measured before the kernel is loaded
//   empty_launch_ns NS              the same, the runner launching an empty kernel
//   probe_ns NS SLACK               the monitor's probe after an empty call (its baseline) and
//                                   its spread over the empty rounds (at least 10 us): late work
//                                   is what the probe takes beyond NS + SLACK
//   call i NS                       call i, from release to answer, integer nanoseconds
//   late i NS                       GPU work of call i found running after it answered (add to its time)
//   stray i NS                      GPU work found running while the runner was stopped before call i
//   changed_after i                 call i's outputs changed after they were taken
//   inputs_changed i                the kernel wrote into an input during call i
//   canary i o                      the kernel wrote past the end of output o during call i
//   checked i                       timed call i is checked: its outputs are on fd 4
//   fail KIND MESSAGE               KIND: setup (the harness's own), load, call i
//   done
// fd 4: the outputs, as float32, of every returned call and then every
// checked call, in call order (written once the runner is gone).
// Exit status: 0 done; 1 the harness could not set up; 2 the kernel failed.

#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "perturb_bits.h"

namespace {

constexpr int kMaxArguments = 24;
// Allocated after every output and filled with kCanary before every call.
constexpr long kCanaryBytes = 1 << 20;
constexpr int kCanary = 0xa5;
constexpr int kHandshakeRounds = 9;

enum Type { kFloat32 = 0, kBf16 = 1, kInt32 = 2 };

size_t Bytes(int type) { return type == kBf16 ? 2 : 4; }

long long NowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

bool WriteAll(int fd, const void* data, size_t n) {
  const char* p = static_cast<const char*>(data);
  while (n > 0) {
    const ssize_t w = write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    p += w, n -= static_cast<size_t>(w);
  }
  return true;
}

bool ReadAll(int fd, void* data, size_t n) {
  char* p = static_cast<char*>(data);
  while (n > 0) {
    const ssize_t r = read(fd, p, n);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return false;
    p += r, n -= static_cast<size_t>(r);
  }
  return true;
}

__global__ void Empty() {}

// ---------------------------------------------------------------------------
// The runner: the kernel's process.

// The runner's commands (one byte each) and answers ('o', or 'x' and a
// line), on descriptors of their own: what the kernel prints (its stdout is
// the monitor's stderr) never reads as an answer.
constexpr char kEmpty = 'e', kEmptyLaunch = 'l', kLoad = 'L', kCall = 'k';
constexpr int kCommandFd = 3, kAnswerFd = 4;

void Answer(const std::string& error) {
  const std::string text = error.empty() ? std::string("o") : "x" + error + "\n";
  if (!WriteAll(kAnswerFd, text.data(), text.size())) _exit(3);
}

// Calls the kernel with every argument pointer then the stream, as its
// extern "C" declaration takes them (all pointers: the calling convention
// passes them alike).
void CallKernel(void* fn, const std::vector<void*>& args, cudaStream_t stream) {
  using P = void*;
  void* a[kMaxArguments + 1] = {};
  for (size_t i = 0; i < args.size(); ++i) a[i] = args[i];
  a[args.size()] = stream;
  using F = void (*)(P, P, P, P, P, P, P, P, P, P, P, P, P, P, P, P, P, P, P, P, P, P, P, P, P);
  reinterpret_cast<F>(fn)(a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8], a[9], a[10], a[11], a[12], a[13], a[14],
                          a[15], a[16], a[17], a[18], a[19], a[20], a[21], a[22], a[23], a[24]);
}

// As root, the runner keeps its user but no capability: it cannot trace or
// read another process of its user that is undumpable (the monitor, the engine).
void DropCapabilities() {
  prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
  if (geteuid() != 0) return;
  __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
  __user_cap_data_struct data[2] = {};
  for (int cap = 0; cap <= 63; ++cap) prctl(PR_CAPBSET_DROP, cap, 0, 0, 0);
  syscall(SYS_capset, &header, data);
}

int RunnerMain(const char* library_path) {
  int count = 0;
  if (!ReadAll(kCommandFd, &count, sizeof count) || count <= 0 || count > kMaxArguments) return 3;
  std::vector<cudaIpcMemHandle_t> handles(static_cast<size_t>(count));
  if (!ReadAll(kCommandFd, handles.data(), handles.size() * sizeof(cudaIpcMemHandle_t))) return 3;
  std::vector<void*> args;
  for (const auto& h : handles) {
    void* p = nullptr;
    const cudaError_t e = cudaIpcOpenMemHandle(&p, h, cudaIpcMemLazyEnablePeerAccess);
    if (e != cudaSuccess) {
      Answer(std::string("cudaIpcOpenMemHandle: ") + cudaGetErrorString(e));
      return 3;
    }
    args.push_back(p);
  }
  cudaStream_t stream;
  if (cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking) != cudaSuccess) {
    Answer("cudaStreamCreate failed");
    return 3;
  }
  // The arguments are mapped: from here on nothing needs a privilege.
  DropCapabilities();
  Answer("");
  void* fn = nullptr;
  for (char command; ReadAll(kCommandFd, &command, 1);) {
    // Every command starts with a launch of the runner's own: whatever the
    // monitor did on the GPU before, the context switch lands here, in
    // empty calls and calls alike.
    Empty<<<1, 1, 0, stream>>>();
    cudaError_t e = cudaStreamSynchronize(stream);
    if (command == kEmptyLaunch) Empty<<<1, 1, 0, stream>>>();
    if (command == kLoad) {
      void* library = dlopen(library_path, RTLD_NOW | RTLD_LOCAL);
      if (!library) {
        Answer(std::string("dlopen: ") + dlerror());
        continue;
      }
      fn = dlsym(library, "kernel");
      Answer(fn ? "" : "the library defines no extern \"C\" function 'kernel'");
      continue;
    }
    if (command == kCall && fn) CallKernel(fn, args, stream);
    const cudaError_t synced = cudaDeviceSynchronize();
    const cudaError_t launched = cudaGetLastError();
    if (e == cudaSuccess) e = synced != cudaSuccess ? synced : launched;
    Answer(e == cudaSuccess ? "" : cudaGetErrorString(e));
  }
  return 0;
}

// ---------------------------------------------------------------------------
// The monitor.

struct Call {
  long set = 0;
  int perturbed = 0;
  std::vector<uint32_t> lo, hi;
};

struct Plan {
  std::vector<long> inputs, outputs;
  std::vector<int> itypes, otypes;
  std::vector<uint32_t> flip;
  long sets = 0;
  std::string sets_file, tables_file;
  std::vector<Call> calls;
  long returned = 0, timed_from = 0, checks = 0;
  long long flush_bytes = 0;

  // Bytes of the inputs one base set holds (all but the int32 ones), and of
  // the int32 inputs each call's row of the tables holds.
  long SetBytes() const { return InputBytes(false); }
  long TableBytes() const { return InputBytes(true); }

 private:
  long InputBytes(bool int32) const {
    long bytes = 0;
    for (size_t i = 0; i < inputs.size(); ++i)
      if ((itypes[i] == kInt32) == int32) bytes += inputs[i] * static_cast<long>(Bytes(itypes[i]));
    return bytes;
  }
};

int result_fd = 3;

void Say(const std::string& line) {
  const std::string text = line + "\n";
  WriteAll(result_fd, text.data(), text.size());
}

pid_t runner = -1;

void EndRunner() {
  if (runner <= 0) return;
  kill(runner, SIGKILL);
  waitpid(runner, nullptr, 0);
  runner = -1;
}

[[noreturn]] void Fail(const std::string& kind, const std::string& message, int code) {
  EndRunner();
  Say("fail " + kind + " " + message);
  std::exit(code);
}

void Check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) Fail("setup", std::string(what) + ": " + cudaGetErrorString(e), 1);
}

bool ReadPlan(const char* path, Plan& plan) {
  std::ifstream in(path);
  std::string key;
  while (in >> key) {
    long n = 0;
    if (key == "inputs" || key == "outputs") {
      in >> n;
      auto& v = key == "inputs" ? plan.inputs : plan.outputs;
      v.resize(static_cast<size_t>(std::max(0L, std::min(n, 64L))));
      for (long& x : v) in >> x;
    } else if (key == "itypes" || key == "otypes") {
      auto& v = key == "itypes" ? plan.itypes : plan.otypes;
      v.resize(key == "itypes" ? plan.inputs.size() : plan.outputs.size());
      for (int& t : v) in >> t;
    } else if (key == "flip") {
      plan.flip.resize(plan.inputs.size());
      for (uint32_t& f : plan.flip) in >> f;
    } else if (key == "sets") {
      in >> plan.sets >> plan.sets_file;
    } else if (key == "tables") {
      in >> plan.tables_file;
    } else if (key == "calls") {
      in >> n;
      plan.calls.reserve(static_cast<size_t>(std::max(0L, n)));
    } else if (key == "call") {
      Call c;
      in >> c.set >> c.perturbed;
      c.lo.resize(plan.inputs.size()), c.hi.resize(plan.inputs.size());
      for (size_t i = 0; i < plan.inputs.size(); ++i) in >> c.lo[i] >> c.hi[i];
      if (c.set < 0 || c.set >= plan.sets) return false;
      plan.calls.push_back(c);
    } else if (key == "returned") {
      in >> plan.returned;
    } else if (key == "timed_from") {
      in >> plan.timed_from;
    } else if (key == "checks") {
      in >> plan.checks;
    } else if (key == "flush_bytes") {
      in >> plan.flush_bytes;
    } else {
      return false;
    }
    if (!in) return false;
  }
  const long calls = static_cast<long>(plan.calls.size());
  return plan.itypes.size() == plan.inputs.size() && plan.otypes.size() == plan.outputs.size() &&
         plan.flip.size() == plan.inputs.size() && !plan.outputs.empty() &&
         plan.inputs.size() + plan.outputs.size() <= kMaxArguments && plan.returned >= 0 &&
         plan.returned <= plan.timed_from && plan.timed_from <= calls && plan.checks >= 0 &&
         plan.checks <= calls - plan.timed_from;
}

std::vector<char> ReadBytes(const std::string& path, long bytes) {
  std::vector<char> data(static_cast<size_t>(bytes));
  FILE* f = bytes > 0 ? std::fopen(path.c_str(), "rb") : nullptr;
  const bool ok = bytes == 0 || (f && std::fread(data.data(), 1, data.size(), f) == data.size());
  if (f) std::fclose(f);
  if (!ok) Fail("setup", "cannot read " + std::to_string(bytes) + " bytes from " + path, 1);
  return data;
}

// A call's float32 or bf16 input from its base set: every element through
// perturb_bits (the engine's reference derives its inputs with the same code).
__global__ void DeriveFloat32(const uint32_t* base, uint32_t* out, long n, uint32_t lo, uint32_t hi, uint32_t flip) {
  for (long i = blockIdx.x * static_cast<long>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<long>(gridDim.x) * blockDim.x)
    out[i] = accelopt::perturb_bits::Perturbed(base[i], i, lo, hi, flip);
}

__global__ void DeriveBf16(const uint16_t* base, uint16_t* out, long n, uint32_t lo, uint32_t hi, uint32_t flip) {
  for (long i = blockIdx.x * static_cast<long>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<long>(gridDim.x) * blockDim.x)
    out[i] = static_cast<uint16_t>(
        accelopt::perturb_bits::Perturbed(static_cast<uint32_t>(base[i]) << 16, i, lo, hi, flip) >> 16);
}

// Counts the bytes of `now` that differ from `kept`.
__global__ void CountChanged(const unsigned char* now, const unsigned char* kept, long n, unsigned long long* changed) {
  unsigned long long local = 0;
  for (long i = blockIdx.x * static_cast<long>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<long>(gridDim.x) * blockDim.x)
    local += now[i] != kept[i];
  if (local) atomicAdd(changed, local);
}

// Counts the bytes of `canary` that no longer hold kCanary.
__global__ void CountCanaryChanged(const unsigned char* canary, long n, unsigned long long* changed) {
  unsigned long long local = 0;
  for (long i = blockIdx.x * static_cast<long>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<long>(gridDim.x) * blockDim.x)
    local += canary[i] != kCanary;
  if (local) atomicAdd(changed, local);
}

long long Median(std::vector<long long> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

class Monitor {
 public:
  Monitor(const Plan& plan, const std::vector<char>& sets, const std::vector<char>& tables)
      : plan_(plan), tables_(tables) {
    cudaDeviceProp prop{};
    Check(cudaGetDeviceProperties(&prop, 0), "cudaGetDeviceProperties");
    Say("device " + std::string(prop.name) + " sm_" + std::to_string(prop.major) + std::to_string(prop.minor) + " " +
        std::to_string(prop.l2CacheSize));
    Check(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreate");
    // The base sets on the device, in the monitor's context only (main read
    // exactly plan.sets * SetBytes() of them).
    Check(cudaMalloc(&sets_, std::max<size_t>(sets.size(), 1)), "cudaMalloc (sets)");
    Check(cudaMemcpy(sets_, sets.data(), sets.size(), cudaMemcpyHostToDevice), "copying the sets");
    for (size_t i = 0; i < plan.inputs.size(); ++i) {
      void *p = nullptr, *k = nullptr;
      const size_t bytes = std::max<long>(plan.inputs[i], 1) * Bytes(plan.itypes[i]);
      Check(cudaMalloc(&p, bytes), "cudaMalloc (input)");
      Check(cudaMalloc(&k, bytes), "cudaMalloc (input copy)");
      args_.push_back(p), kept_.push_back(static_cast<unsigned char*>(k));
    }
    for (size_t o = 0; o < plan.outputs.size(); ++o) {
      void *p = nullptr, *s = nullptr;
      const size_t bytes = OutputBytes(o);
      Check(cudaMalloc(&p, bytes + kCanaryBytes), "cudaMalloc (output)");
      Check(cudaMalloc(&s, std::max<size_t>(bytes, 1)), "cudaMalloc (output copy)");
      args_.push_back(p), snapshots_.push_back(static_cast<unsigned char*>(s));
      canaries_.push_back(static_cast<unsigned char*>(p) + bytes);  // from the first byte past the output
      host_outputs_bytes_ += bytes;
    }
    flush_bytes_ = plan.flush_bytes > 0 ? plan.flush_bytes : 2LL * prop.l2CacheSize;
    Check(cudaMalloc(&flush_, flush_bytes_), "cudaMalloc (L2 flush buffer)");
    Check(cudaMalloc(&changed_, sizeof *changed_), "cudaMalloc (counter)");
    Check(cudaMallocHost(&host_outputs_, std::max<size_t>(host_outputs_bytes_, 1)), "cudaMallocHost (outputs)");
  }

  // Empty rounds with the runner not yet holding the kernel: the handshake,
  // an empty launch, and the probe's baselines.
  void Handshake() {
    std::vector<long long> empty, launch, probe, quiet;
    for (int r = 0; r < 2 * kHandshakeRounds; ++r) {
      Prepare(r, nullptr);
      quiet.push_back(Probe());
      const long long ns = Release(r % 2 ? kEmptyLaunch : kEmpty, "setup", 1, "an empty call: ");
      (r % 2 ? launch : empty).push_back(ns);
      probe.push_back(Probe());
    }
    handshake_ns_ = Median(empty);
    probe_ns_ = Median(probe);
    quiet_ns_ = Median(quiet);
    probe_slack_ = Slack(probe), quiet_slack_ = Slack(quiet);
    Say("handshake_ns " + std::to_string(handshake_ns_));
    Say("empty_launch_ns " + std::to_string(Median(launch)));
    Say("probe_ns " + std::to_string(probe_ns_) + " " + std::to_string(probe_slack_));
  }

  // Hands the runner the arguments (CUDA IPC) and waits until it mapped
  // them; then the monitor becomes undumpable and the runner is stopped.
  void Connect() {
    const int count = static_cast<int>(args_.size());
    std::vector<cudaIpcMemHandle_t> handles(args_.size());
    for (size_t i = 0; i < handles.size(); ++i) Check(cudaIpcGetMemHandle(&handles[i], args_[i]), "cudaIpcGetMemHandle");
    if (!WriteAll(cmd_fd, &count, sizeof count) ||
        !WriteAll(cmd_fd, handles.data(), handles.size() * sizeof(cudaIpcMemHandle_t)))
      Fail("setup", "cannot reach the kernel's process", 1);
    std::string error;
    if (!Await(error)) Fail("setup", "the kernel's process did not start" + RunnerEnd(), 1);
    if (!error.empty()) Fail("setup", "the kernel's process could not map its arguments: " + error, 1);
    // The runner has mapped the arguments (CUDA IPC needed the monitor as it
    // was) and loaded nothing yet: from now on nothing of the monitor is
    // readable or traceable by another process of its user.
    prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
    Stop("setup", 1);
  }

  void Load() { Release(kLoad, "load", 2); }

  void Calls() {
    std::mt19937_64 draw(std::random_device{}());
    long checks_left = plan_.checks;
    const long calls = static_cast<long>(plan_.calls.size());
    std::vector<char> kept;  // the outputs of returned and checked calls, in call order
    for (long c = 0; c < calls; ++c) {
      Prepare(c, &plan_.calls[static_cast<size_t>(c)]);
      if (const long long stray = Probe() - quiet_ns_; stray > 4 * quiet_slack_)
        Say("stray " + std::to_string(c) + " " + std::to_string(stray));
      const long long ns = Release(kCall, "call " + std::to_string(c), 2);
      Say("call " + std::to_string(c) + " " + std::to_string(ns));
      if (const long long late = Probe() - probe_ns_; late > probe_slack_)
        Say("late " + std::to_string(c) + " " + std::to_string(late));
      TakeOutputs(c);
      // Which timed calls are checked, drawn now that this one ran: exactly
      // `checks` of the timed calls, each remaining one alike.
      bool keep = c < plan_.returned;
      if (c >= plan_.timed_from && checks_left > 0) {
        const long remaining = calls - c;
        if (static_cast<long>(draw() % static_cast<uint64_t>(remaining)) < checks_left) {
          keep = true;
          --checks_left;
          Say("checked " + std::to_string(c));
        }
      }
      if (keep) kept.insert(kept.end(), host_outputs_, host_outputs_ + host_outputs_bytes_);
    }
    EndRunner();
    WriteOutputs(kept);
  }

  int cmd_fd = -1, ack_fd = -1;

 private:
  size_t OutputBytes(size_t o) const {
    return static_cast<size_t>(std::max<long>(plan_.outputs[o], 1)) * Bytes(plan_.otypes[o]);
  }

  // What the probe varies by on an idle GPU (its own context switch): the
  // spread of its empty rounds, and at least 10 us. Late work below this is
  // not told from noise.
  static long long Slack(const std::vector<long long>& rounds) {
    const auto [low, high] = std::minmax_element(rounds.begin(), rounds.end());
    return std::max(10000LL, rounds.empty() ? 0 : *high - *low);
  }

  // Writes a call's inputs (or, for an empty round, none), poisons the
  // outputs, fills the canaries, resets persisting L2 lines and flushes the
  // L2, then synchronizes: every call alike.
  void Prepare(long round, const Call* call) {
    if (call) {
      const char* table = tables_.data() + round * plan_.TableBytes();
      for (size_t i = 0, at = 0; i < plan_.inputs.size(); ++i) {
        const long n = plan_.inputs[i];
        const int type = plan_.itypes[i];
        if (type == kInt32) {
          Check(cudaMemcpyAsync(args_[i], table, n * 4, cudaMemcpyHostToDevice, stream_), "copying inputs");
          table += n * 4;
        } else {
          const char* base = static_cast<const char*>(sets_) + call->set * plan_.SetBytes() + at;
          const uint32_t flip = call->perturbed ? plan_.flip[i] : 0u;
          if (type == kBf16)
            DeriveBf16<<<1024, 256, 0, stream_>>>(reinterpret_cast<const uint16_t*>(base),
                                                  static_cast<uint16_t*>(args_[i]), n, call->lo[i], call->hi[i], flip);
          else
            DeriveFloat32<<<1024, 256, 0, stream_>>>(reinterpret_cast<const uint32_t*>(base),
                                                     static_cast<uint32_t*>(args_[i]), n, call->lo[i], call->hi[i],
                                                     flip);
          at += n * Bytes(type);
        }
        Check(cudaMemcpyAsync(kept_[i], args_[i], n * Bytes(type), cudaMemcpyDeviceToDevice, stream_),
              "keeping inputs");
      }
    }
    for (size_t o = 0; o < plan_.outputs.size(); ++o) {
      Check(cudaMemsetAsync(args_[plan_.inputs.size() + o], 0xff, OutputBytes(o), stream_), "poisoning outputs");
      Check(cudaMemsetAsync(canaries_[o], kCanary, kCanaryBytes, stream_), "filling canaries");
    }
    // A kernel's access-policy window would outlive the flush; devices
    // without persisting L2 refuse both resets, with nothing to reset.
    cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, 0);
    cudaCtxResetPersistingL2Cache();
    (void)cudaGetLastError();
    Check(cudaMemsetAsync(flush_, static_cast<int>(round & 0x7f), flush_bytes_, stream_), "flushing L2");
    Check(cudaDeviceSynchronize(), "preparing a call");
  }

  // The time an empty kernel on the monitor's stream takes to finish: it
  // queues behind GPU work of the kernel's process still running.
  long long Probe() {
    const long long t0 = NowNs();
    Empty<<<1, 1, 0, stream_>>>();
    Check(cudaStreamSynchronize(stream_), "probing the GPU");
    return NowNs() - t0;
  }

  // Releases the stopped runner with `command`, times it to its answer and
  // stops it again. A failure is reported as `kind` ("setup", "load", "call
  // i") with exit status `code`, the runner's own error after `prefix`.
  long long Release(char command, const std::string& kind, int code, const std::string& prefix = "") {
    const long long t0 = NowNs();
    kill(runner, SIGCONT);
    if (!WriteAll(cmd_fd, &command, 1)) Fail(kind, "the kernel's process is gone" + RunnerEnd(), code);
    std::string error;
    const bool answered = Await(error);
    const long long ns = NowNs() - t0;
    if (!answered) Fail(kind, "the kernel's process ended before it answered" + RunnerEnd(), code);
    Stop(kind, code);
    if (!error.empty()) Fail(kind, prefix + error, code);
    return ns;
  }

  // The runner's answer: true with `error` empty (ok) or set; false when it is gone.
  bool Await(std::string& error) {
    char a = 0;
    if (!ReadAll(ack_fd, &a, 1)) return false;
    if (a == 'o') return true;
    if (a != 'x') {
      error = "the kernel's process answered out of turn";
      return true;
    }
    for (char ch; error.size() < 2000 && ReadAll(ack_fd, &ch, 1) && ch != '\n';) error += ch;
    if (error.empty()) error = "failed";
    return true;
  }

  void Stop(const std::string& kind, int code) {
    kill(runner, SIGSTOP);
    siginfo_t info{};
    if (waitid(P_PID, runner, &info, WSTOPPED | WEXITED) != 0 || info.si_code != CLD_STOPPED)
      Fail(kind, "the kernel's process ended after it answered" + RunnerEnd(), code);
  }

  // How the runner ended, once it has.
  std::string RunnerEnd() {
    int status = 0;
    if (runner <= 0 || waitpid(runner, &status, WNOHANG) != runner) return "";
    runner = -1;
    if (WIFSIGNALED(status)) return " (signal " + std::to_string(WTERMSIG(status)) + ")";
    return " (exit status " + std::to_string(WEXITSTATUS(status)) + ")";
  }

  // Copies the outputs (on the monitor's stream), checks the inputs and the
  // canaries, brings the outputs to the host and reads them again.
  void TakeOutputs(long c) {
    const size_t first_output = plan_.inputs.size();
    for (size_t o = 0; o < plan_.outputs.size(); ++o)
      Check(cudaMemcpyAsync(snapshots_[o], args_[first_output + o], OutputBytes(o), cudaMemcpyDeviceToDevice, stream_),
            "taking outputs");
    if (Count([&] {
          for (size_t i = 0; i < plan_.inputs.size(); ++i)
            CountChanged<<<1024, 256, 0, stream_>>>(static_cast<const unsigned char*>(args_[i]), kept_[i],
                                                    plan_.inputs[i] * Bytes(plan_.itypes[i]), changed_);
        }))
      Say("inputs_changed " + std::to_string(c));
    for (size_t o = 0; o < plan_.outputs.size(); ++o)
      if (Count([&] { CountCanaryChanged<<<1024, 256, 0, stream_>>>(canaries_[o], kCanaryBytes, changed_); }))
        Say("canary " + std::to_string(c) + " " + std::to_string(o));
    size_t at = 0;
    for (size_t o = 0; o < plan_.outputs.size(); at += OutputBytes(o), ++o)
      Check(cudaMemcpyAsync(host_outputs_ + at, snapshots_[o], OutputBytes(o), cudaMemcpyDeviceToHost, stream_),
            "copying outputs");
    if (Count([&] {
          for (size_t o = 0; o < plan_.outputs.size(); ++o)
            CountChanged<<<1024, 256, 0, stream_>>>(static_cast<const unsigned char*>(args_[first_output + o]),
                                                    snapshots_[o], OutputBytes(o), changed_);
        }))
      Say("changed_after " + std::to_string(c));
  }

  template <typename Launch>
  unsigned long long Count(Launch launch) {
    Check(cudaMemsetAsync(changed_, 0, sizeof *changed_, stream_), "a check");
    launch();
    unsigned long long count = 0;
    Check(cudaMemcpyAsync(&count, changed_, sizeof count, cudaMemcpyDeviceToHost, stream_), "a check");
    Check(cudaStreamSynchronize(stream_), "a check");
    return count;
  }

  // The kept outputs as float32, on fd 4.
  void WriteOutputs(const std::vector<char>& kept) {
    std::vector<float> floats;
    for (size_t at = 0; at < kept.size();) {
      for (size_t o = 0; o < plan_.outputs.size(); ++o) {
        const long n = plan_.outputs[o];
        for (long i = 0; i < n; ++i) {
          float v = 0;
          if (plan_.otypes[o] == kBf16) {
            uint16_t h = 0;
            std::memcpy(&h, kept.data() + at + 2 * i, 2);
            const uint32_t bits = static_cast<uint32_t>(h) << 16;
            std::memcpy(&v, &bits, 4);
          } else {
            std::memcpy(&v, kept.data() + at + 4 * i, 4);
          }
          floats.push_back(v);
        }
        at += OutputBytes(o);
      }
    }
    if (!WriteAll(4, floats.data(), floats.size() * sizeof(float))) Fail("setup", "cannot write the outputs", 1);
  }

  const Plan& plan_;
  const std::vector<char>& tables_;
  void* sets_ = nullptr;
  std::vector<void*> args_;
  std::vector<unsigned char*> kept_, snapshots_, canaries_;
  char* host_outputs_ = nullptr;
  size_t host_outputs_bytes_ = 0;
  void* flush_ = nullptr;
  long long flush_bytes_ = 0;
  unsigned long long* changed_ = nullptr;
  cudaStream_t stream_;
  long long handshake_ns_ = 0, probe_ns_ = 0, quiet_ns_ = 0, probe_slack_ = 0, quiet_slack_ = 0;
};

// Starts the runner (this program again) in an empty folder, with its
// commands on fd 3 and its answers on fd 4, no other descriptor
// of the monitor's, and a death signal when the monitor ends.
void StartRunner(const char* self, const char* library, Monitor& monitor) {
  int cmd[2], ack[2];
  if (pipe2(cmd, O_CLOEXEC) != 0 || pipe2(ack, O_CLOEXEC) != 0) Fail("setup", "pipe failed", 1);
  const std::string folder = "kernel-folder";
  mkdir(folder.c_str(), 0700);
  runner = fork();
  if (runner < 0) Fail("setup", "fork failed", 1);
  if (runner == 0) {
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    // Commands on 3, answers on 4, nothing on stdin, stdout to the monitor's stderr.
    const int null = open("/dev/null", O_RDONLY);
    const int command = fcntl(cmd[0], F_DUPFD, 10), answer = fcntl(ack[1], F_DUPFD, 10);
    dup2(null, 0);
    dup2(2, 1);
    dup2(command, kCommandFd);
    dup2(answer, kAnswerFd);
    for (int fd = kAnswerFd + 1; fd < 1024; ++fd) close(fd);
    if (chdir(folder.c_str()) != 0) _exit(4);
    execl(self, self, "--runner", library, static_cast<char*>(nullptr));
    _exit(5);
  }
  close(cmd[0]);
  close(ack[1]);
  monitor.cmd_fd = cmd[1];
  monitor.ack_fd = ack[0];
  signal(SIGPIPE, SIG_IGN);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 3 && std::string(argv[1]) == "--runner") return RunnerMain(argv[2]);
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s KERNEL.so PLAN (reports on fd 3, outputs on fd 4)\n", argv[0]);
    return 1;
  }
  for (int fd : {3, 4}) fcntl(fd, F_SETFD, FD_CLOEXEC);
  Plan plan;
  if (!ReadPlan(argv[2], plan)) Fail("setup", std::string("cannot read the plan ") + argv[2], 1);
  const long per_set = plan.SetBytes(), per_call = plan.TableBytes();
  // Checked before the GPU is touched: a test without one runs up to here.
  if (plan.sets <= 0) Fail("setup", "the plan names no input set", 1);
  const std::vector<char> sets = ReadBytes(plan.sets_file, plan.sets * per_set);
  const std::vector<char> tables = ReadBytes(plan.tables_file, static_cast<long>(plan.calls.size()) * per_call);
  // What the plan and the inputs say stays in the monitor's memory.
  for (const std::string& f : {std::string(argv[2]), plan.sets_file, plan.tables_file}) unlink(f.c_str());
  Say("plan " + std::to_string(plan.calls.size()) + " calls, " + std::to_string(plan.sets) + " sets of " +
      std::to_string(per_set) + " bytes, " + std::to_string(per_call) + " bytes of integer inputs per call");

  char self[4096] = {};
  const ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  if (n <= 0) Fail("setup", "cannot find the harness's own program", 1);
  std::string library = argv[1];
  if (!library.empty() && library[0] != '/') {
    char cwd[4096] = {};
    if (getcwd(cwd, sizeof cwd)) library = std::string(cwd) + "/" + library;
  }
  Monitor monitor(plan, sets, tables);
  StartRunner(self, library.c_str(), monitor);
  monitor.Connect();
  monitor.Handshake();
  monitor.Load();
  monitor.Calls();
  Say("done");
  return 0;
}
