// accelopt-cuda-harness: runs one candidate kernel (a shared library built by
// the cuda target) in its own process, call by call as a plan says, and
// writes what it saw. The engine builds it with nvcc at first use (its source
// is compiled into the engine) and judges what it writes; nothing here decides
// a verdict.
//
//   accelopt-cuda-harness KERNEL.so PLAN RESULT OUTPUTS
//
// PLAN (text, one item per line):
//   inputs N n_0 ... n_{N-1}        elements of each input
//   itypes t_0 ... t_{N-1}          element types: 0 float32, 1 bf16, 2 int32
//   dists kind_0 a_0 b_0 ...        per input: 1 normal(a mean, b std), 0 uniform[a, b),
//                                   2 fixed (constants and integers: from TABLES on a fresh call)
//   outputs N n_0 ... n_{N-1}
//   otypes t_0 ... t_{N-1}
//   slots S FILE                    S input sets, every input back to back in its element type
//   tables FILE                     per fresh call, in order, its fixed inputs back to back, likewise
//   calls C k_0 ... k_{C-1}         per call: a slot (its outputs are written to
//                                   OUTPUTS, in call order, as float32), or -1: fresh inputs
//   seed X                          for the fresh inputs
//   flush_bytes B                   0: twice the device's L2
//
// The engine sends every input in its element type, ready to copy; outputs
// come back as float32. Every call is prepared
// alike: its inputs written (copied from a slot, or drawn on the device, the
// fixed ones copied from TABLES), a device copy of them kept, every output
// poisoned with NaN (all bits set), any L2 lines the kernel made persisting
// reset, the L2 flushed by writing a buffer larger than it, then the device
// synchronized. The call is timed on the host clock from the moment
// kernel() is entered to the end of a device-wide synchronization after it
// returns: work on any stream, and work left running, counts. Then the
// inputs are compared with the kept copy on the device, and the canary after
// each output (kCanaryBytes, allocated with it and filled before every call)
// with its pattern: a write past an output lands there and is reported, never
// in the next buffer.
//
// RESULT (text, appended as the run goes, so that a crash leaves what came before):
//   device NAME sm_XY l2_bytes
//   handshake_ns NS                 fastest empty call: prepared as a call is and timed
//                                   alike, with nothing called; every call includes it
//   empty_launch_ns NS              the same, launching an empty kernel on the stream
//   call i NS                       call i's time, in integer nanoseconds
//   inputs_changed i                the kernel wrote into an input during call i
//   canary i o                      the kernel wrote past the end of output o during call i
//   fail KIND MESSAGE               KIND: setup (the harness's own), load, call i
//   done
// Exit status: 0 done; 1 the harness could not set up; 2 the kernel failed.

#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <dlfcn.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace {

constexpr int kMaxArguments = 24;
// Allocated after every output and filled with kCanary before every call.
constexpr long kCanaryBytes = 1 << 20;
constexpr int kCanary = 0xa5;

enum Type { kFloat32 = 0, kBf16 = 1, kInt32 = 2 };
enum Kind { kUniform = 0, kNormal = 1, kFixed = 2 };

size_t Bytes(int type) { return type == kBf16 ? 2 : 4; }

struct Plan {
  std::vector<long> inputs, outputs;
  std::vector<int> itypes, otypes;
  std::vector<int> kind;
  std::vector<double> a, b;
  long slots = 0;
  std::string slots_file, tables_file;
  std::vector<long> calls;
  unsigned long long seed = 1;
  long long flush_bytes = 0;
};

FILE* result_file = nullptr;

void Say(const std::string& line) {
  std::fputs((line + "\n").c_str(), result_file);
  std::fflush(result_file);
}

[[noreturn]] void Fail(const std::string& kind, const std::string& message, int code) {
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
      v.resize(n);
      for (long& x : v) in >> x;
    } else if (key == "itypes" || key == "otypes") {
      auto& v = key == "itypes" ? plan.itypes : plan.otypes;
      v.resize(key == "itypes" ? plan.inputs.size() : plan.outputs.size());
      for (int& t : v) in >> t;
    } else if (key == "dists") {
      for (size_t i = 0; i < plan.inputs.size(); ++i) {
        int kind = 1;
        double a = 0, b = 1;
        in >> kind >> a >> b;
        plan.kind.push_back(kind), plan.a.push_back(a), plan.b.push_back(b);
      }
    } else if (key == "slots") {
      in >> plan.slots >> plan.slots_file;
    } else if (key == "tables") {
      in >> plan.tables_file;
    } else if (key == "calls") {
      in >> n;
      plan.calls.resize(n);
      for (long& k : plan.calls) in >> k;
    } else if (key == "seed") {
      in >> plan.seed;
    } else if (key == "flush_bytes") {
      in >> plan.flush_bytes;
    } else {
      return false;
    }
    if (!in) return false;
  }
  return plan.kind.size() == plan.inputs.size() && plan.itypes.size() == plan.inputs.size() &&
         plan.otypes.size() == plan.outputs.size() && !plan.outputs.empty() &&
         plan.inputs.size() + plan.outputs.size() <= kMaxArguments;
}

__device__ unsigned long long Mix(unsigned long long x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

__device__ void Store(float* out, long i, float v) { out[i] = v; }
__device__ void Store(__nv_bfloat16* out, long i, float v) { out[i] = __float2bfloat16_rn(v); }

// Fresh inputs, drawn on the device: element i depends on (seed, i) only.
template <typename T>
__global__ void Draw(T* out, long n, unsigned long long seed, int normal, float a, float b) {
  for (long i = blockIdx.x * static_cast<long>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<long>(gridDim.x) * blockDim.x) {
    const unsigned long long r = Mix(seed ^ Mix(static_cast<unsigned long long>(i)));
    const float u1 = (static_cast<float>(r >> 40) + 0.5f) * (1.0f / 16777216.0f);
    const float u2 = static_cast<float>((r >> 16) & 0xffffff) * (1.0f / 16777216.0f);
    Store(out, i, normal ? a + b * sqrtf(-2.0f * logf(u1)) * cospif(2.0f * u2) : a + (b - a) * u2);
  }
}

__global__ void Bf16ToFloat(const __nv_bfloat16* in, float* out, long n) {
  for (long i = blockIdx.x * static_cast<long>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<long>(gridDim.x) * blockDim.x)
    out[i] = __bfloat162float(in[i]);
}

// Counts the bytes of `now` that differ from `kept`.
__global__ void CountChanged(const unsigned char* now, const unsigned char* kept, long n, unsigned long long* changed) {
  unsigned long long local = 0;
  for (long i = blockIdx.x * static_cast<long>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<long>(gridDim.x) * blockDim.x)
    local += now[i] != kept[i];
  if (local) atomicAdd(changed, local);
}

__global__ void Empty() {}

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

std::vector<char> ReadBytes(const std::string& path, long bytes) {
  std::vector<char> data(static_cast<size_t>(bytes));
  if (bytes == 0) return data;
  FILE* f = std::fopen(path.c_str(), "rb");
  const bool ok = f && std::fread(data.data(), 1, data.size(), f) == data.size();
  if (f) std::fclose(f);
  if (!ok) Fail("setup", "cannot read " + std::to_string(bytes) + " bytes from " + path, 1);
  return data;
}

// A device output of `type` into host float32 values.
void Download(const void* from, long n, int type, float* to, float* staging) {
  const void* source = from;
  if (type == kBf16) {
    Bf16ToFloat<<<1024, 256>>>(static_cast<const __nv_bfloat16*>(from), staging, n);
    source = staging;
  }
  Check(cudaMemcpy(to, source, n * sizeof(float), cudaMemcpyDeviceToHost), "copying outputs");
}

long long NowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// Counts the bytes of `canary` that no longer hold kCanary.
__global__ void CountCanaryChanged(const unsigned char* canary, long n, unsigned long long* changed) {
  unsigned long long local = 0;
  for (long i = blockIdx.x * static_cast<long>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<long>(gridDim.x) * blockDim.x)
    local += canary[i] != kCanary;
  if (local) atomicAdd(changed, local);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 5) {
    std::fprintf(stderr, "usage: %s KERNEL.so PLAN RESULT OUTPUTS\n", argv[0]);
    return 1;
  }
  result_file = std::fopen(argv[3], "w");
  if (!result_file) return 1;
  Plan plan;
  if (!ReadPlan(argv[2], plan)) Fail("setup", std::string("cannot read the plan ") + argv[2], 1);

  int device = 0;
  Check(cudaGetDevice(&device), "cudaGetDevice");
  cudaDeviceProp prop{};
  Check(cudaGetDeviceProperties(&prop, device), "cudaGetDeviceProperties");
  Say("device " + std::string(prop.name) + " sm_" + std::to_string(prop.major) + std::to_string(prop.minor) + " " +
      std::to_string(prop.l2CacheSize));

  long per_set = 0, fixed_per_call = 0, fresh_calls = 0;  // bytes
  for (size_t i = 0; i < plan.inputs.size(); ++i) {
    per_set += plan.inputs[i] * Bytes(plan.itypes[i]);
    if (plan.kind[i] == kFixed) fixed_per_call += plan.inputs[i] * Bytes(plan.itypes[i]);
  }
  for (long k : plan.calls) fresh_calls += k < 0;
  const std::vector<char> slots = ReadBytes(plan.slots_file, plan.slots * per_set);
  const std::vector<char> tables = ReadBytes(plan.tables_file, fresh_calls * fixed_per_call);
  FILE* outputs_file = std::fopen(argv[4], "wb");
  if (!outputs_file) Fail("setup", std::string("cannot write ") + argv[4], 1);

  // Every buffer is allocated before the kernel is loaded: what the kernel
  // allocates later cannot land on them.
  std::vector<void*> args;
  std::vector<unsigned char*> kept;
  long largest = 1;
  for (size_t i = 0; i < plan.inputs.size(); ++i) {
    void *p = nullptr, *k = nullptr;
    const size_t bytes = std::max<long>(plan.inputs[i], 1) * Bytes(plan.itypes[i]);
    Check(cudaMalloc(&p, bytes), "cudaMalloc (input)");
    Check(cudaMalloc(&k, bytes), "cudaMalloc (input copy)");
    args.push_back(p), kept.push_back(static_cast<unsigned char*>(k));
  }
  long out_elements = 0;
  std::vector<unsigned char*> canaries;
  for (size_t o = 0; o < plan.outputs.size(); ++o) {
    void* p = nullptr;
    const size_t bytes = std::max<long>(plan.outputs[o], 1) * Bytes(plan.otypes[o]);
    Check(cudaMalloc(&p, bytes + kCanaryBytes), "cudaMalloc (output)");
    args.push_back(p);
    canaries.push_back(static_cast<unsigned char*>(p) + bytes);  // from the first byte past the output
    out_elements += plan.outputs[o];
    largest = std::max(largest, plan.outputs[o]);
  }
  // A bf16 output on its way to the host as float32.
  float* staging = nullptr;
  Check(cudaMalloc(&staging, largest * sizeof(float)), "cudaMalloc (staging)");
  const long long flush_bytes = plan.flush_bytes > 0 ? plan.flush_bytes : 2LL * prop.l2CacheSize;
  void* flush = nullptr;
  Check(cudaMalloc(&flush, flush_bytes), "cudaMalloc (L2 flush buffer)");
  unsigned long long* changed = nullptr;
  Check(cudaMalloc(&changed, sizeof *changed), "cudaMalloc (counter)");
  cudaStream_t stream;
  Check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreate");

  // Empty calls, each prepared as a call is (but for its inputs) and timed
  // as one: the handshake calls nothing, which every call includes; the
  // other launches an empty kernel on the kernel's stream.
  // Outputs poisoned, canaries filled, persisting L2 lines returned to
  // normal (a kernel's access-policy window would outlive the flush; devices
  // without persisting L2 refuse both resets, with nothing to reset), the L2
  // flushed, the device synchronized: every call, empty or not, alike.
  auto prepare_outputs_and_caches = [&](long round, const char* what) {
    for (size_t o = 0; o < plan.outputs.size(); ++o) {
      Check(cudaMemset(args[plan.inputs.size() + o], 0xff, plan.outputs[o] * Bytes(plan.otypes[o])),
            "poisoning outputs");
      Check(cudaMemset(canaries[o], kCanary, kCanaryBytes), "filling canaries");
    }
    cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, 0);
    cudaCtxResetPersistingL2Cache();
    (void)cudaGetLastError();
    Check(cudaMemset(flush, static_cast<int>(round & 0x7f), flush_bytes), "flushing L2");
    Check(cudaDeviceSynchronize(), what);
  };
  long long handshake_ns = -1, launch_ns = -1;
  for (int i = 0; i < 10; ++i) {
    prepare_outputs_and_caches(i, "preparing an empty call");
    const long long t0 = NowNs();
    if (i % 2) Empty<<<1, 1, 0, stream>>>();
    Check(cudaDeviceSynchronize(), "an empty call");
    const long long ns = NowNs() - t0;
    long long& fastest = i % 2 ? launch_ns : handshake_ns;
    fastest = fastest < 0 ? ns : std::min(fastest, ns);
  }
  Say("handshake_ns " + std::to_string(handshake_ns));
  Say("empty_launch_ns " + std::to_string(launch_ns));

  void* library = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (!library) Fail("load", std::string("dlopen: ") + dlerror(), 2);
  void* fn = dlsym(library, "kernel");
  if (!fn) Fail("load", "the library defines no extern \"C\" function 'kernel'", 2);

  std::vector<float> host_out(static_cast<size_t>(out_elements));
  long fresh = 0;
  for (size_t c = 0; c < plan.calls.size(); ++c) {
    const long slot = plan.calls[c];
    const char* fixed = slot < 0 ? tables.data() + fresh++ * fixed_per_call : nullptr;
    for (size_t i = 0, at = 0; i < plan.inputs.size(); at += plan.inputs[i] * Bytes(plan.itypes[i]), ++i) {
      const long n = plan.inputs[i];
      const int type = plan.itypes[i];
      if (slot >= 0 || plan.kind[i] == kFixed) {
        const char* from = slot >= 0 ? slots.data() + slot * per_set + at : fixed;
        if (slot < 0) fixed += n * Bytes(type);
        Check(cudaMemcpy(args[i], from, n * Bytes(type), cudaMemcpyHostToDevice), "copying inputs");
      } else {
        const unsigned long long seed = plan.seed + 0x100000000ull * c + i;
        const float a = static_cast<float>(plan.a[i]), b = static_cast<float>(plan.b[i]);
        if (type == kBf16)
          Draw<<<1024, 256>>>(static_cast<__nv_bfloat16*>(args[i]), n, seed, plan.kind[i], a, b);
        else
          Draw<<<1024, 256>>>(static_cast<float*>(args[i]), n, seed, plan.kind[i], a, b);
      }
      Check(cudaMemcpy(kept[i], args[i], n * Bytes(type), cudaMemcpyDeviceToDevice), "keeping inputs");
    }
    prepare_outputs_and_caches(static_cast<long>(c), "preparing a call");

    const long long t0 = NowNs();
    CallKernel(fn, args, stream);
    const cudaError_t synced = cudaDeviceSynchronize();
    const long long ns = NowNs() - t0;
    const cudaError_t launched = cudaGetLastError();
    if (synced != cudaSuccess || launched != cudaSuccess)
      Fail("call " + std::to_string(c), cudaGetErrorString(synced != cudaSuccess ? synced : launched), 2);
    Say("call " + std::to_string(c) + " " + std::to_string(ns));

    Check(cudaMemset(changed, 0, sizeof *changed), "inputs check");
    for (size_t i = 0; i < plan.inputs.size(); ++i)
      CountChanged<<<1024, 256>>>(static_cast<const unsigned char*>(args[i]), kept[i],
                                  plan.inputs[i] * Bytes(plan.itypes[i]), changed);
    unsigned long long count = 0;
    Check(cudaMemcpy(&count, changed, sizeof count, cudaMemcpyDeviceToHost), "inputs check");
    if (count) Say("inputs_changed " + std::to_string(c));
    for (size_t o = 0; o < plan.outputs.size(); ++o) {
      Check(cudaMemset(changed, 0, sizeof *changed), "canary check");
      CountCanaryChanged<<<1024, 256>>>(canaries[o], kCanaryBytes, changed);
      Check(cudaMemcpy(&count, changed, sizeof count, cudaMemcpyDeviceToHost), "canary check");
      if (count) Say("canary " + std::to_string(c) + " " + std::to_string(o));
    }

    if (slot < 0) continue;
    float* into = host_out.data();
    for (size_t o = 0; o < plan.outputs.size(); into += plan.outputs[o], ++o)
      Download(args[plan.inputs.size() + o], plan.outputs[o], plan.otypes[o], into, staging);
    if (std::fwrite(host_out.data(), sizeof(float), host_out.size(), outputs_file) != host_out.size())
      Fail("setup", std::string("cannot write ") + argv[4], 1);
  }
  std::fclose(outputs_file);
  Say("done");
  return 0;
}
