// accelopt-cuda-calibrate: measures the first CUDA device's limits, the
// denominators of the cuda target's percent of peak, and prints them for the
// engine to read (calibrate.h). The engine builds it with nvcc at first use
// (its source is compiled into the engine as text, arch_peaks.h beside it),
// linked with cuBLASLt.
//
//   accelopt-cuda-calibrate [--repeats R] [--gemm-n N] [--copy-bytes B]
//
// Every figure is the best of R repetitions, each timed alone with CUDA
// events after two untimed warm-up runs; its spread is (best - third best) /
// best over the repetitions.
//   hbm_gbs           a device-to-device copy of B bytes (default: the larger
//                     of 1 GiB and 32 times the L2), read and write counted,
//                     by cudaMemcpyAsync and by a vectorized copy kernel: the better
//   bf16_gemm_gflops  cuBLASLt GEMM of N^3 (default 8192), bf16 inputs and
//                     output, fp32 accumulation (tensor cores)
//   fp32_gemm_gflops  the same in fp32, CUBLAS_COMPUTE_32F: no TF32, no
//                     emulation (TF32 is refused through NVIDIA_TF32_OVERRIDE=0)
//   fp32_fma_gflops   a kernel of independent FMA chains filling every SM
// Each GEMM takes the fastest of the first algorithms cublasLtMatmulAlgoGetHeuristic
// proposes with a 64 MiB workspace.
//
// Output (stdout), one item per line:
//   accelopt-cuda-calibration 1
//   device NAME
//   compute_capability MAJOR MINOR
//   sm_count N
//   sm_clock_khz K                  the maximum SM clock
//   memory_clock_khz K
//   memory_bus_bits B
//   l2_bytes B
//   detail NAME BEST SPREAD METHOD  a measurement a figure is taken from
//   figure NAME BEST SPREAD THEORETICAL METHOD
//   done
// On failure: `fail MESSAGE` and exit status 1. A figure the device cannot
// measure (bf16 before sm_80) is printed as 0 with the method saying why.

#include <cublasLt.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "arch_peaks.h"

namespace {

using accelopt::cuda::Bf16TensorFmasPerSm;
using accelopt::cuda::FmaGflops;
using accelopt::cuda::Fp32FmaLanesPerSm;
using accelopt::cuda::MemoryGbs;

struct Options {
  int repeats = 10;
  long gemm_n = 8192;
  long copy_bytes = 0;  // 0: max(1 GiB, 32 x L2)
};

struct DeviceFacts {
  std::string name;
  int major = 0, minor = 0, sm_count = 0, sm_clock_khz = 0, memory_clock_khz = 0, bus_bits = 0, l2_bytes = 0;
};

// A figure: the best rate of the repetitions and how well it was reproduced.
struct Rate {
  double best = 0, spread = 0;
};

[[noreturn]] void Fail(const std::string& message) {
  std::printf("fail %s\n", message.c_str());
  std::fflush(stdout);
  std::exit(1);
}

void Check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) Fail(std::string(what) + ": " + cudaGetErrorString(e));
}

void CheckLt(cublasStatus_t s, const char* what) {
  if (s != CUBLAS_STATUS_SUCCESS) Fail(std::string(what) + ": cuBLAS status " + std::to_string(static_cast<int>(s)));
}

long ParseLong(const char* flag, const char* value) {
  char* end = nullptr;
  const long v = value ? std::strtol(value, &end, 10) : 0;
  if (!value || *end != '\0' || v < 0) Fail(std::string(flag) + " needs a non-negative integer");
  return v;
}

Options ParseOptions(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    const char* value = i + 1 < argc ? argv[++i] : nullptr;
    if (flag == "--repeats") {
      o.repeats = static_cast<int>(std::max(1L, ParseLong("--repeats", value)));
    } else if (flag == "--gemm-n") {
      o.gemm_n = std::max(256L, ParseLong("--gemm-n", value));
    } else if (flag == "--copy-bytes") {
      o.copy_bytes = ParseLong("--copy-bytes", value);
    } else {
      Fail("unknown argument '" + flag + "'");
    }
  }
  return o;
}

DeviceFacts ReadDevice() {
  int count = 0;
  if (cudaError_t e = cudaGetDeviceCount(&count); e != cudaSuccess || count == 0)
    Fail(std::string("no CUDA device: cudaGetDeviceCount returned ") + std::to_string(static_cast<int>(e)) + " (" +
         (e != cudaSuccess ? cudaGetErrorString(e) : "no devices") + ")");
  Check(cudaSetDevice(0), "cudaSetDevice");
  DeviceFacts d;
  cudaDeviceProp prop;
  Check(cudaGetDeviceProperties(&prop, 0), "cudaGetDeviceProperties");
  d.name = prop.name;
  const std::pair<int*, cudaDeviceAttr> attributes[] = {{&d.major, cudaDevAttrComputeCapabilityMajor},
                                                        {&d.minor, cudaDevAttrComputeCapabilityMinor},
                                                        {&d.sm_count, cudaDevAttrMultiProcessorCount},
                                                        {&d.sm_clock_khz, cudaDevAttrClockRate},
                                                        {&d.memory_clock_khz, cudaDevAttrMemoryClockRate},
                                                        {&d.bus_bits, cudaDevAttrGlobalMemoryBusWidth},
                                                        {&d.l2_bytes, cudaDevAttrL2CacheSize}};
  for (const auto& [value, attribute] : attributes)
    Check(cudaDeviceGetAttribute(value, attribute, 0), "cudaDeviceGetAttribute");
  return d;
}

// Runs `work` twice untimed, then `repeats` times each between two events:
// the best and the spread of `amount` / seconds, in units of 1e9.
Rate TimeBest(const std::function<void()>& work, double amount, int repeats) {
  cudaEvent_t start, stop;
  Check(cudaEventCreate(&start), "cudaEventCreate");
  Check(cudaEventCreate(&stop), "cudaEventCreate");
  for (int w = 0; w < 2; ++w) work();
  Check(cudaDeviceSynchronize(), "warm-up");
  std::vector<double> rates;
  for (int r = 0; r < repeats; ++r) {
    Check(cudaEventRecord(start), "cudaEventRecord");
    work();
    Check(cudaEventRecord(stop), "cudaEventRecord");
    Check(cudaEventSynchronize(stop), "a timed repetition");
    float ms = 0;
    Check(cudaEventElapsedTime(&ms, start, stop), "cudaEventElapsedTime");
    rates.push_back(amount / (ms * 1e-3) / 1e9);
  }
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  std::sort(rates.begin(), rates.end(), std::greater<>());
  const double third = rates[std::min<size_t>(2, rates.size() - 1)];
  return {rates[0], rates[0] > 0 ? (rates[0] - third) / rates[0] : 0};
}

void PrintFigure(const char* name, Rate r, double theoretical, const std::string& method) {
  std::printf("figure %s %.6g %.6g %.6g %s\n", name, r.best, r.spread, theoretical, method.c_str());
}

void PrintDetail(const char* name, Rate r, const std::string& method) {
  std::printf("detail %s %.6g %.6g %s\n", name, r.best, r.spread, method.c_str());
}

// ---------------------------------------------------------------------------
// HBM bandwidth.

// Two independent 16-byte loads in flight per thread and iteration.
__global__ void CopyKernel(const int4* __restrict__ in, int4* __restrict__ out, long n) {
  long i = blockIdx.x * static_cast<long>(blockDim.x) + threadIdx.x;
  const long stride = static_cast<long>(gridDim.x) * blockDim.x;
  for (; i + stride < n; i += 2 * stride) {
    const int4 a = in[i];
    const int4 b = in[i + stride];
    out[i] = a;
    out[i + stride] = b;
  }
  if (i < n) out[i] = in[i];
}

long CopyBytes(const Options& o, const DeviceFacts& d) {
  size_t free_bytes = 0, total = 0;
  Check(cudaMemGetInfo(&free_bytes, &total), "cudaMemGetInfo");
  long bytes = o.copy_bytes > 0 ? o.copy_bytes : std::max(1L << 30, 32L * d.l2_bytes);
  bytes = std::min(bytes, static_cast<long>(free_bytes / 3));
  return bytes / 16 * 16;
}

void MeasureHbm(const Options& o, const DeviceFacts& d) {
  const long bytes = CopyBytes(o, d);
  if (bytes < 4L * d.l2_bytes)
    Fail("too little free device memory for a copy four times larger than the L2 (" + std::to_string(bytes >> 20) +
         " MiB)");
  void *src = nullptr, *dst = nullptr;
  Check(cudaMalloc(&src, bytes), "cudaMalloc (copy source)");
  Check(cudaMalloc(&dst, bytes), "cudaMalloc (copy destination)");
  Check(cudaMemset(src, 1, bytes), "cudaMemset");
  const double moved = 2.0 * static_cast<double>(bytes);
  const Rate memcpy_rate = TimeBest(
      [&] { Check(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice), "cudaMemcpyAsync"); }, moved, o.repeats);
  int blocks_per_sm = 0;
  Check(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks_per_sm, CopyKernel, 256, 0), "occupancy");
  const int grid = std::max(1, blocks_per_sm) * d.sm_count;
  const Rate kernel_rate = TimeBest(
      [&] {
        CopyKernel<<<grid, 256>>>(static_cast<const int4*>(src), static_cast<int4*>(dst), bytes / 16);
        Check(cudaGetLastError(), "copy kernel launch");
      },
      moved, o.repeats);
  cudaFree(src);
  cudaFree(dst);
  const std::string size = std::to_string(bytes >> 20) + " MiB";
  PrintDetail("hbm_memcpy_gbs", memcpy_rate, "cudaMemcpyAsync device to device, " + size);
  PrintDetail("hbm_copy_kernel_gbs", kernel_rate, "16-byte vector copy kernel, " + size);
  const bool by_kernel = kernel_rate.best > memcpy_rate.best;
  PrintFigure("hbm_gbs", by_kernel ? kernel_rate : memcpy_rate, MemoryGbs(d.memory_clock_khz, d.bus_bits),
              (by_kernel ? "copy kernel, " : "cudaMemcpyAsync, ") + size + ", read + write counted");
}

// ---------------------------------------------------------------------------
// GEMM through cuBLASLt.

// Deterministic values in [-1, 1): the units see real data, not zeros.
__device__ float Noise(long i) {
  unsigned x = static_cast<unsigned>(i) * 2654435761u + 12345u;
  x ^= x >> 13;
  x *= 0x5bd1e995u;
  x ^= x >> 15;
  return static_cast<float>(x & 0xffffff) / 8388608.0f - 1.0f;
}

__global__ void FillFloat(float* p, long n) {
  for (long i = blockIdx.x * static_cast<long>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<long>(gridDim.x) * blockDim.x)
    p[i] = Noise(i);
}

__global__ void FillBf16(__nv_bfloat16* p, long n) {
  for (long i = blockIdx.x * static_cast<long>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<long>(gridDim.x) * blockDim.x)
    p[i] = __float2bfloat16(Noise(i));
}

struct GemmKind {
  const char* name;
  cudaDataType_t type;
  size_t element_bytes;
  cublasComputeType_t compute;
};

// Times the first few algorithms the heuristic proposes for an n^3 GEMM
// (A transposed, B not: the layout tensor cores read best) and returns the
// fastest; `method` names it.
Rate MeasureGemm(cublasLtHandle_t lt, const GemmKind& kind, long n, int repeats, std::string& method) {
  void *a = nullptr, *b = nullptr, *c = nullptr, *workspace = nullptr;
  const size_t bytes = static_cast<size_t>(n) * n * kind.element_bytes;
  const size_t workspace_bytes = 64 << 20;
  Check(cudaMalloc(&a, bytes), "cudaMalloc (GEMM A)");
  Check(cudaMalloc(&b, bytes), "cudaMalloc (GEMM B)");
  Check(cudaMalloc(&c, bytes), "cudaMalloc (GEMM C)");
  Check(cudaMalloc(&workspace, workspace_bytes), "cudaMalloc (GEMM workspace)");
  for (void* p : {a, b, c}) {
    if (kind.type == CUDA_R_16BF)
      FillBf16<<<1024, 256>>>(static_cast<__nv_bfloat16*>(p), n * n);
    else
      FillFloat<<<1024, 256>>>(static_cast<float*>(p), n * n);
  }
  Check(cudaDeviceSynchronize(), "filling the GEMM operands");

  cublasLtMatmulDesc_t op;
  CheckLt(cublasLtMatmulDescCreate(&op, kind.compute, CUDA_R_32F), "cublasLtMatmulDescCreate");
  const cublasOperation_t transpose = CUBLAS_OP_T, none = CUBLAS_OP_N;
  CheckLt(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSA, &transpose, sizeof transpose), "TRANSA");
  CheckLt(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSB, &none, sizeof none), "TRANSB");
  cublasLtMatrixLayout_t layout;
  CheckLt(cublasLtMatrixLayoutCreate(&layout, kind.type, n, n, n), "cublasLtMatrixLayoutCreate");
  cublasLtMatmulPreference_t preference;
  CheckLt(cublasLtMatmulPreferenceCreate(&preference), "cublasLtMatmulPreferenceCreate");
  CheckLt(cublasLtMatmulPreferenceSetAttribute(preference, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &workspace_bytes,
                                               sizeof workspace_bytes),
          "MAX_WORKSPACE_BYTES");
  cublasLtMatmulHeuristicResult_t results[4] = {};
  int found = 0;
  CheckLt(cublasLtMatmulAlgoGetHeuristic(lt, op, layout, layout, layout, layout, preference, 4, results, &found),
          "cublasLtMatmulAlgoGetHeuristic");
  if (found == 0) Fail(std::string("cuBLASLt proposes no algorithm for the ") + kind.name + " GEMM");

  const float alpha = 1.0f, beta = 0.0f;
  const double flops = 2.0 * n * n * n;
  auto gemm = [&](int k) {
    return cublasLtMatmul(lt, op, &alpha, a, layout, b, layout, &beta, c, layout, c, layout, &results[k].algo,
                          workspace, workspace_bytes, 0);
  };
  Rate best;
  int best_index = -1, usable = 0;
  for (int k = 0; k < found; ++k) {
    if (gemm(k) != CUBLAS_STATUS_SUCCESS) continue;  // a proposal this configuration refuses: the next one
    ++usable;
    const Rate r = TimeBest([&] { CheckLt(gemm(k), "cublasLtMatmul"); }, flops, repeats);
    if (r.best > best.best) best = r, best_index = k;
  }
  if (best_index < 0)
    Fail("cublasLtMatmul refuses every algorithm the heuristic proposes for the " + std::string(kind.name) + " GEMM");
  method = "cuBLASLt " + std::string(kind.name) + " " + std::to_string(n) + "^3, fastest of " + std::to_string(usable) +
           " heuristic algorithms (#" + std::to_string(best_index + 1) + ")";
  cublasLtMatmulPreferenceDestroy(preference);
  cublasLtMatrixLayoutDestroy(layout);
  cublasLtMatmulDescDestroy(op);
  for (void* p : {a, b, c, workspace}) cudaFree(p);
  return best;
}

void MeasureGemms(const Options& o, const DeviceFacts& d) {
  cublasLtHandle_t lt;
  CheckLt(cublasLtCreate(&lt), "cublasLtCreate");
  const double fp32_theoretical = FmaGflops(d.sm_count, d.sm_clock_khz, Fp32FmaLanesPerSm(d.major, d.minor));
  std::string method;
  if (d.major >= 8) {
    const Rate bf16 = MeasureGemm(lt, {"bf16", CUDA_R_16BF, 2, CUBLAS_COMPUTE_32F}, o.gemm_n, o.repeats, method);
    PrintFigure("bf16_gemm_gflops", bf16, FmaGflops(d.sm_count, d.sm_clock_khz, Bf16TensorFmasPerSm(d.major, d.minor)),
                method + ", fp32 accumulation");
  } else {
    PrintFigure("bf16_gemm_gflops", Rate{}, 0, "none: no bf16 tensor cores before sm_80");
  }
  const Rate fp32 = MeasureGemm(lt, {"fp32", CUDA_R_32F, 4, CUBLAS_COMPUTE_32F}, o.gemm_n, o.repeats, method);
  PrintFigure("fp32_gemm_gflops", fp32, fp32_theoretical, method + ", CUBLAS_COMPUTE_32F (no TF32)");
  cublasLtDestroy(lt);
}

// ---------------------------------------------------------------------------
// FP32 FMA throughput.

constexpr int kChains = 8;
constexpr int kFmaIterations = 1 << 14;

// kChains independent chains per thread cover the FMA latency; x * m + c with
// m < 1 converges, so nothing overflows or turns denormal. m and c arrive at
// run time and every chain is stored: nothing can be folded or dropped.
__global__ void FmaKernel(float* out, float m, float c) {
  float x[kChains];
#pragma unroll
  for (int j = 0; j < kChains; ++j) x[j] = threadIdx.x * 1e-3f + j;
    // Unrolled so that the loop's own instructions take few of the issue slots the FMAs need.
#pragma unroll 32
  for (int i = 0; i < kFmaIterations; ++i) {
#pragma unroll
    for (int j = 0; j < kChains; ++j) x[j] = fmaf(x[j], m, c);
  }
  float sum = 0;
#pragma unroll
  for (int j = 0; j < kChains; ++j) sum += x[j];
  out[blockIdx.x * static_cast<long>(blockDim.x) + threadIdx.x] = sum;
}

void MeasureFma(const Options& o, const DeviceFacts& d) {
  constexpr int kThreads = 256;
  int blocks_per_sm = 0;
  Check(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks_per_sm, FmaKernel, kThreads, 0), "occupancy");
  // Whole waves, so that no SM idles at the end while others finish.
  const long grid = 4L * std::max(1, blocks_per_sm) * d.sm_count;
  float* out = nullptr;
  Check(cudaMalloc(&out, grid * kThreads * sizeof(float)), "cudaMalloc (FMA results)");
  const double flops = 2.0 * kChains * kFmaIterations * static_cast<double>(grid) * kThreads;
  const Rate r = TimeBest(
      [&] {
        FmaKernel<<<grid, kThreads>>>(out, 0.5f, 0.25f);
        Check(cudaGetLastError(), "FMA kernel launch");
      },
      flops, o.repeats);
  cudaFree(out);
  PrintFigure("fp32_fma_gflops", r, FmaGflops(d.sm_count, d.sm_clock_khz, Fp32FmaLanesPerSm(d.major, d.minor)),
              std::to_string(kChains) + " FMA chains per thread, " + std::to_string(grid / d.sm_count) +
                  " blocks of 256 per SM, 2 FLOPs per FMA");
}

}  // namespace

int main(int argc, char** argv) {
  // Before the first CUDA call: no TF32 in an fp32 GEMM, whatever the environment says.
  setenv("NVIDIA_TF32_OVERRIDE", "0", 1);
  unsetenv("CUBLAS_EMULATE_SINGLE_PRECISION");
  const Options options = ParseOptions(argc, argv);
  const DeviceFacts d = ReadDevice();
  std::printf("accelopt-cuda-calibration 1\n");
  std::printf("device %s\n", d.name.c_str());
  std::printf("compute_capability %d %d\n", d.major, d.minor);
  std::printf("sm_count %d\nsm_clock_khz %d\nmemory_clock_khz %d\nmemory_bus_bits %d\nl2_bytes %d\n", d.sm_count,
              d.sm_clock_khz, d.memory_clock_khz, d.bus_bits, d.l2_bytes);
  std::fflush(stdout);
  MeasureHbm(options, d);
  MeasureGemms(options, d);
  MeasureFma(options, d);
  std::printf("done\n");
  return 0;
}
