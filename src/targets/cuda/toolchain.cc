#include "targets/cuda/toolchain.h"

#include <dlfcn.h>
#include <unistd.h>

#include <filesystem>
#include <mutex>
#include <sstream>

#include "core/hash.h"
#include "core/json_io.h"
#include "core/paths.h"
#include "core/scratch.h"
#include "eval/includes.h"
#include "eval/sandbox.h"
#include "targets/cuda/harness_source.h"
#include "targets/cuda/perturb_bits_source.h"

namespace accelopt::cuda {
namespace fs = std::filesystem;

namespace {

constexpr const char* kToolkitBin = "/usr/local/cuda/bin";

// Loads libcudart once and asks it for the first device. The runtime's
// error codes and names are stable across versions; cudaDeviceProp's layout
// is not, so only cudaDeviceGetAttribute is used (and the driver for the name).
Result<Device> ProbeDevice() {
  void* rt = nullptr;
  for (const char* name : {"libcudart.so", "libcudart.so.13", "libcudart.so.12", "/usr/local/cuda/lib64/libcudart.so"})
    if ((rt = dlopen(name, RTLD_NOW | RTLD_LOCAL))) break;
  if (!rt) return Error{"no CUDA device: libcudart could not be loaded (" + std::string(dlerror()) + ")"};
  using Count = int (*)(int*);
  using Attribute = int (*)(int*, int, int);
  using Name = const char* (*)(int);
  auto count = reinterpret_cast<Count>(dlsym(rt, "cudaGetDeviceCount"));
  auto attribute = reinterpret_cast<Attribute>(dlsym(rt, "cudaDeviceGetAttribute"));
  auto error_string = reinterpret_cast<Name>(dlsym(rt, "cudaGetErrorString"));
  if (!count || !attribute || !error_string) return Error{"no CUDA device: libcudart lacks cudaGetDeviceCount"};
  int devices = 0;
  if (int e = count(&devices); e != 0 || devices == 0)
    return Error{"no CUDA device: cudaGetDeviceCount returned " + std::to_string(e) + " (" +
                 (e != 0 ? error_string(e) : "no devices") + ")"};
  Device d;
  int l2 = 0;
  attribute(&d.major, 75, 0);  // cudaDevAttrComputeCapabilityMajor
  attribute(&d.minor, 76, 0);  // cudaDevAttrComputeCapabilityMinor
  attribute(&l2, 89, 0);       // cudaDevAttrL2CacheSize
  d.l2_bytes = l2;
  d.name = "CUDA device sm_" + std::to_string(d.major) + std::to_string(d.minor);
  if (void* drv = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL)) {
    using GetName = int (*)(char*, int, int);
    if (auto get_name = reinterpret_cast<GetName>(dlsym(drv, "cuDeviceGetName"))) {
      char name[256] = {};
      if (get_name(name, sizeof name - 1, 0) == 0 && name[0]) d.name = name;
    }
  }
  return d;
}

std::string Hash(const std::string& text, const NvccOptions& o, const std::string& nvcc) {
  std::string key = nvcc + "\n" + o.arch + "\n";
  for (const auto& f : o.flags) key += f + " ";
  return ContentHasher().Add(key).Add("\n").Add(text).Hex();
}

// Runs nvcc in `dir` with the fixed flags and `args`.
Result<eval::SandboxOutcome> RunNvcc(const std::string& nvcc, const fs::path& dir, const NvccOptions& options,
                                     const std::vector<std::string>& args) {
  eval::SandboxRequest request;
  request.workdir = dir.string();
  request.argv = {nvcc, "-arch=" + options.arch};
  for (const auto& f : options.flags) request.argv.push_back(f);
  for (const auto& a : args) request.argv.push_back(a);
  // nvcc is trusted but the source is not (#include "/dev/zero"): limit it too.
  request.limits.wall_seconds = options.timeout_seconds;
  request.limits.address_space_bytes = 16L << 30;
  request.limits.capture_bytes = std::max<size_t>(options.log_bytes, 4 << 20);
  auto run = eval::RunSandboxed(request);
  if (!run) return run.error();
  if (run->exit_code == 127 || run->exit_code == 126) return Error{"cannot run nvcc (" + nvcc + ")"};
  return run;
}

const std::vector<std::string> kLibraryArgs = {"-Xcompiler", "-fPIC", "-shared", "-Xptxas",   "-v", "-include",
                                               "shape.h",    "-x",    "cu",      "kernel.cu", "-o", "kernel.so"};

// Builds a trivial kernel the same way; an Error when that fails too.
Status CheckBuildEnvironment(const std::string& nvcc, const fs::path& dir, const NvccOptions& options) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  Status written = WriteFile((dir / "kernel.cu").string(), "__global__ void accelopt_canary() {}\n");
  if (written) written = WriteFile((dir / "shape.h").string(), "#pragma once\n");
  auto run = written ? RunNvcc(nvcc, dir, options, kLibraryArgs) : Result<eval::SandboxOutcome>(written.error());
  const bool built = run && run->exited_cleanly() && fs::exists(dir / "kernel.so", ec);
  fs::remove_all(dir, ec);
  if (built) return Ok{};
  return Error{"the build environment is failing, not the kernel: a trivial .cu does not build with " + nvcc +
               " either:\n" + (!run ? run.error().message : eval::TruncateLog(run->err + run->out, 2000))};
}

NvccOutcome LoadCached(const fs::path& dir) {
  NvccOutcome out;
  out.ok = out.cached = true;
  out.library_path = (dir / "kernel.so").string();
  if (auto log = ReadFile((dir / "compile.log").string())) out.log = *log;
  if (auto report = ReadFile((dir / "ptxas.txt").string())) out.register_report = *report;
  return out;
}

}  // namespace

std::string Device::Arch() const {
  return "sm_" + std::to_string(major) + std::to_string(minor) + (major == 9 && minor == 0 ? "a" : "");
}

std::string FindNvcc() {
  if (std::string nvcc = FindProgram("nvcc"); !nvcc.empty()) return nvcc;
  return FindProgram(std::string(kToolkitBin) + "/nvcc");
}

Result<Device> FindDevice() {
  static std::once_flag once;
  static Result<Device> found = Error{""};
  std::call_once(once, [] { found = ProbeDevice(); });
  return found;
}

std::string SplitPtxasReport(const std::string& output, std::string* rest) {
  std::istringstream in(output);
  std::string line, report;
  bool in_properties = false;
  while (std::getline(in, line)) {
    const bool info = line.rfind("ptxas info", 0) == 0;
    // "    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads" follows "Function properties".
    if (info || (in_properties && line.rfind("    ", 0) == 0)) {
      in_properties = info && line.find("Function properties") != std::string::npos;
      if (line.find("bytes gmem") == std::string::npos) report += line + "\n";
    } else {
      in_properties = false;
      if (rest) *rest += line + "\n";
    }
  }
  return report;
}

Result<NvccOutcome> CompileCuda(const std::string& source, const std::string& header, const NvccOptions& options,
                                const std::string& scratch_dir) {
  const std::string nvcc = options.nvcc.empty() ? FindNvcc() : options.nvcc;
  if (nvcc.empty()) return Error{"nvcc is not on $PATH or in " + std::string(kToolkitBin)};
  if (auto why = eval::ForbiddenFileAccess(source)) {
    NvccOutcome refused;
    refused.refused = *why;
    refused.log = "refused before compiling: " + *why + "\n";
    return refused;
  }
  const std::string key = Hash(header + "\n//\n" + source, options, nvcc);
  const fs::path cached = options.cache_dir.empty() ? fs::path() : fs::path(options.cache_dir) / key;
  std::error_code ec;
  if (!cached.empty() && fs::exists(cached / "kernel.so", ec)) return LoadCached(cached);

  const fs::path dir = fs::path(scratch_dir) / ("nvcc-" + key);
  fs::create_directories(dir, ec);
  if (ec) return Error{"cannot create build folder " + dir.string() + ": " + ec.message()};
  for (auto [name, text] : {std::pair{"kernel.cu", &source}, std::pair{"shape.h", &header}})
    if (auto s = WriteFile((dir / name).string(), *text); !s) return s.error();
  auto run = RunNvcc(nvcc, dir, options, kLibraryArgs);
  if (!run) return run.error();

  NvccOutcome out;
  out.seconds = run->wall_seconds;
  std::string rest;
  out.register_report = eval::TruncateLog(SplitPtxasReport(run->err + run->out, &rest), options.log_bytes);
  out.log = eval::TruncateLog(rest, options.log_bytes);
  if (run->timed_out) out.log += "\n[nvcc was stopped after " + std::to_string(options.timeout_seconds) + " s]\n";
  out.ok = run->exited_cleanly() && fs::exists(dir / "kernel.so", ec);
  if (!out.ok && !run->timed_out) {
    // A full disk or a broken toolkit fails every build: the engine's failure, not the kernel's verdict.
    fs::remove_all(dir, ec);
    if (auto s = CheckBuildEnvironment(nvcc, fs::path(scratch_dir) / ("canary-" + key), options); !s) return s.error();
  }
  if (!out.ok) return out;
  WriteFile((dir / "compile.log").string(), out.log);
  WriteFile((dir / "ptxas.txt").string(), out.register_report);
  out.library_path = (dir / "kernel.so").string();
  if (cached.empty()) return out;
  auto published = PublishBuild(dir, cached, "kernel.so");
  if (!published) return published.error();
  out.library_path = (*published / "kernel.so").string();
  return out;
}

Result<std::string> BuildProgram(const NvccOptions& options, const ProgramSource& source) {
  const std::string nvcc = options.nvcc.empty() ? FindNvcc() : options.nvcc;
  if (nvcc.empty()) return Error{"nvcc is not on $PATH or in " + std::string(kToolkitBin)};
  std::string text;
  for (const auto& [name, content] : source.files) text += name + "\n" + content + "\n";
  for (const auto& a : source.link_args) text += a + "\n";
  const fs::path cached = fs::path(options.cache_dir) / (source.program + "-" + Hash(text, options, nvcc));
  std::error_code ec;
  if (fs::exists(cached / source.program, ec)) return (cached / source.program).string();
  const fs::path dir = cached.string() + ".tmp" + std::to_string(getpid());
  fs::create_directories(dir, ec);
  if (ec) return Error{"cannot create build folder " + dir.string() + ": " + ec.message()};
  for (const auto& [name, content] : source.files)
    if (auto s = WriteFile((dir / name).string(), content); !s) return s.error();
  std::vector<std::string> args = {source.files.front().first, "-o", source.program};
  args.insert(args.end(), source.link_args.begin(), source.link_args.end());
  auto run = RunNvcc(nvcc, dir, options, args);
  if (!run) return run.error();
  if (!run->exited_cleanly() || !fs::exists(dir / source.program, ec))
    return Error{source.program + " does not build with " + nvcc + " in " + dir.string() + ":\n" +
                 eval::TruncateLog(run->err + run->out, 4000)};
  auto published = PublishBuild(dir, cached, source.program);
  if (!published) return published.error();
  return (*published / source.program).string();
}

std::string SourceHashOf(const std::string& library_path) {
  auto source = ReadFile((fs::path(library_path).parent_path() / "kernel.cu").string());
  return source ? ContentHash(*source) : "";
}

Result<std::string> BuildHarness(const NvccOptions& options) {
  return BuildProgram(options, {"accelopt-cuda-harness",
                                {{"harness.cu", kHarnessSource}, {"perturb_bits.h", kPerturbBitsSource}},
                                {"-ldl"}});
}

std::string ToolkitLibraryDir(const std::string& nvcc) {
  const fs::path root = fs::path(nvcc).parent_path().parent_path();
  std::error_code ec;
  return (fs::exists(root / "lib64", ec) ? root / "lib64" : root / "lib").string();
}

}  // namespace accelopt::cuda
