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
//   dists normal_0 a_0 b_0 ...      per input: 1 normal(a mean, b std) / 0 uniform[a, b)
//   outputs N n_0 ... n_{N-1}
//   slots S FILE                    S input sets, every input back to back, float32
//   calls C k_0 ... k_{C-1}         per call: a slot (its outputs are written to
//                                   OUTPUTS, in call order), or -1: fresh inputs
//   seed X                          for the fresh inputs
//   flush_bytes B                   0: twice the device's L2
//
// Every call is prepared alike: its inputs written (copied from a slot, or
// drawn on the device), a device copy of them kept, every output poisoned
// with NaN, the L2 flushed by writing a buffer larger than it, then the
// device synchronized. The call is timed on the host clock from the moment
// kernel() is entered to the end of a device-wide synchronization after it
// returns: work on any stream, and work left running, counts. Then the
// inputs are compared with the kept copy on the device.
//
// RESULT (text, appended as the run goes, so that a crash leaves what came before):
//   device NAME sm_XY l2_bytes
//   handshake SECONDS               fastest empty launch + synchronization
//   call i SECONDS
//   inputs_changed i                the kernel wrote into an input during call i
//   fail KIND MESSAGE               KIND: setup (the harness's own), load, call i
//   done
// Exit status: 0 done; 1 the harness could not set up; 2 the kernel failed.

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

struct Plan {
  std::vector<long> inputs, outputs;
  std::vector<int> normal;
  std::vector<double> a, b;
  long slots = 0;
  std::string slots_file;
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
    } else if (key == "dists") {
      for (size_t i = 0; i < plan.inputs.size(); ++i) {
        int normal = 1;
        double a = 0, b = 1;
        in >> normal >> a >> b;
        plan.normal.push_back(normal), plan.a.push_back(a), plan.b.push_back(b);
      }
    } else if (key == "slots") {
      in >> plan.slots >> plan.slots_file;
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
  return plan.normal.size() == plan.inputs.size() && !plan.outputs.empty() &&
         plan.inputs.size() + plan.outputs.size() <= kMaxArguments;
}

__device__ unsigned long long Mix(unsigned long long x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

// Fresh inputs, drawn on the device: element i depends on (seed, i) only.
__global__ void Draw(float* out, long n, unsigned long long seed, int normal, float a, float b) {
  for (long i = blockIdx.x * static_cast<long>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<long>(gridDim.x) * blockDim.x) {
    const unsigned long long r = Mix(seed ^ Mix(static_cast<unsigned long long>(i)));
    const float u1 = (static_cast<float>(r >> 40) + 0.5f) * (1.0f / 16777216.0f);
    const float u2 = static_cast<float>((r >> 16) & 0xffffff) * (1.0f / 16777216.0f);
    out[i] = normal ? a + b * sqrtf(-2.0f * logf(u1)) * cospif(2.0f * u2) : a + (b - a) * u2;
  }
}

// Counts the words of `now` that differ from `kept`, bit for bit.
__global__ void CountChanged(const unsigned* now, const unsigned* kept, long n, unsigned long long* changed) {
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
  reinterpret_cast<F>(fn)(a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8], a[9], a[10], a[11], a[12], a[13],
                          a[14], a[15], a[16], a[17], a[18], a[19], a[20], a[21], a[22], a[23], a[24]);
}

double Now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
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

  long per_set = 0;
  for (long n : plan.inputs) per_set += n;
  std::vector<float> slots(static_cast<size_t>(plan.slots * per_set));
  {
    FILE* f = std::fopen(plan.slots_file.c_str(), "rb");
    if (!f || std::fread(slots.data(), sizeof(float), slots.size(), f) != slots.size())
      Fail("setup", "cannot read the input sets " + plan.slots_file, 1);
    std::fclose(f);
  }
  FILE* outputs_file = std::fopen(argv[4], "wb");
  if (!outputs_file) Fail("setup", std::string("cannot write ") + argv[4], 1);

  // Every buffer is allocated before the kernel is loaded: what the kernel
  // allocates later cannot land on them.
  std::vector<void*> args;
  std::vector<float*> kept;
  for (long n : plan.inputs) {
    void *p = nullptr, *k = nullptr;
    Check(cudaMalloc(&p, std::max<long>(n, 1) * sizeof(float)), "cudaMalloc (input)");
    Check(cudaMalloc(&k, std::max<long>(n, 1) * sizeof(float)), "cudaMalloc (input copy)");
    args.push_back(p), kept.push_back(static_cast<float*>(k));
  }
  long out_elements = 0;
  for (long n : plan.outputs) {
    void* p = nullptr;
    Check(cudaMalloc(&p, std::max<long>(n, 1) * sizeof(float)), "cudaMalloc (output)");
    args.push_back(p);
    out_elements += n;
  }
  const long long flush_bytes = plan.flush_bytes > 0 ? plan.flush_bytes : 2LL * prop.l2CacheSize;
  void* flush = nullptr;
  Check(cudaMalloc(&flush, flush_bytes), "cudaMalloc (L2 flush buffer)");
  unsigned long long* changed = nullptr;
  Check(cudaMalloc(&changed, sizeof *changed), "cudaMalloc (counter)");
  cudaStream_t stream;
  Check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreate");

  double handshake = 1e30;
  for (int i = 0; i < 5; ++i) {
    Check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
    const double t0 = Now();
    Empty<<<1, 1, 0, stream>>>();
    Check(cudaDeviceSynchronize(), "empty launch");
    handshake = std::min(handshake, Now() - t0);
  }
  Say("handshake " + std::to_string(handshake));

  void* library = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (!library) Fail("load", std::string("dlopen: ") + dlerror(), 2);
  void* fn = dlsym(library, "kernel");
  if (!fn) Fail("load", "the library defines no extern \"C\" function 'kernel'", 2);

  std::vector<float> host_out(static_cast<size_t>(out_elements));
  for (size_t c = 0; c < plan.calls.size(); ++c) {
    const long slot = plan.calls[c];
    for (size_t i = 0, at = 0; i < plan.inputs.size(); at += plan.inputs[i], ++i) {
      const long n = plan.inputs[i];
      if (slot >= 0)
        Check(cudaMemcpy(args[i], slots.data() + slot * per_set + at, n * sizeof(float), cudaMemcpyHostToDevice),
              "copying inputs");
      else
        Draw<<<1024, 256>>>(static_cast<float*>(args[i]), n, plan.seed + 0x100000000ull * c + i, plan.normal[i],
                            static_cast<float>(plan.a[i]), static_cast<float>(plan.b[i]));
      Check(cudaMemcpy(kept[i], args[i], n * sizeof(float), cudaMemcpyDeviceToDevice), "keeping inputs");
    }
    for (size_t o = 0; o < plan.outputs.size(); ++o)
      Check(cudaMemset(args[plan.inputs.size() + o], 0xff, plan.outputs[o] * sizeof(float)), "poisoning outputs");
    Check(cudaMemset(flush, static_cast<int>(c & 0x7f), flush_bytes), "flushing L2");
    Check(cudaDeviceSynchronize(), "preparing a call");

    const double t0 = Now();
    CallKernel(fn, args, stream);
    const cudaError_t synced = cudaDeviceSynchronize();
    const double seconds = Now() - t0;
    const cudaError_t launched = cudaGetLastError();
    if (synced != cudaSuccess || launched != cudaSuccess)
      Fail("call " + std::to_string(c), cudaGetErrorString(synced != cudaSuccess ? synced : launched), 2);
    Say("call " + std::to_string(c) + " " + std::to_string(seconds));

    Check(cudaMemset(changed, 0, sizeof *changed), "inputs check");
    for (size_t i = 0; i < plan.inputs.size(); ++i)
      CountChanged<<<1024, 256>>>(static_cast<const unsigned*>(args[i]), reinterpret_cast<const unsigned*>(kept[i]),
                                  plan.inputs[i], changed);
    unsigned long long count = 0;
    Check(cudaMemcpy(&count, changed, sizeof count, cudaMemcpyDeviceToHost), "inputs check");
    if (count) Say("inputs_changed " + std::to_string(c));

    if (slot < 0) continue;
    float* into = host_out.data();
    for (size_t o = 0; o < plan.outputs.size(); into += plan.outputs[o], ++o)
      Check(cudaMemcpy(into, args[plan.inputs.size() + o], plan.outputs[o] * sizeof(float), cudaMemcpyDeviceToHost),
            "copying outputs");
    if (std::fwrite(host_out.data(), sizeof(float), host_out.size(), outputs_file) != host_out.size())
      Fail("setup", std::string("cannot write ") + argv[4], 1);
  }
  std::fclose(outputs_file);
  Say("done");
  return 0;
}
