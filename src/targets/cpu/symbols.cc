#include "targets/cpu/symbols.h"

#include <set>
#include <sstream>

#include "eval/sandbox.h"

namespace accelopt::cpu {
namespace {

// Imports that reach outside the kernel's own computation, or let it run on a
// schedule of its own (signal handlers, timers).
const std::set<std::string>& ForbiddenImports() {
  static const std::set<std::string> names = {"fork",
                                              "vfork",
                                              "clone",
                                              "execve",
                                              "execv",
                                              "execvp",
                                              "execvpe",
                                              "execl",
                                              "execlp",
                                              "execle",
                                              "system",
                                              "popen",
                                              "posix_spawn",
                                              "posix_spawnp",
                                              "socket",
                                              "connect",
                                              "bind",
                                              "listen",
                                              "accept",
                                              "accept4",
                                              "sendto",
                                              "recvfrom",
                                              "dlopen",
                                              "dlmopen",
                                              "dlsym",
                                              "dlvsym",
                                              "ptrace",
                                              "kill",
                                              "tgkill",
                                              "syscall",
                                              "open",
                                              "open64",
                                              "openat",
                                              "openat64",
                                              "creat",
                                              "fopen",
                                              "fopen64",
                                              "freopen",
                                              "mprotect",
                                              "process_vm_readv",
                                              "process_vm_writev",
                                              "prctl",
                                              "seccomp",
                                              "setrlimit",
                                              "sigaction",
                                              "signal",
                                              "sysv_signal",
                                              "__sysv_signal",
                                              "bsd_signal",
                                              "sigset",
                                              "ssignal",
                                              "sigvec",
                                              "timer_create",
                                              "timer_settime",
                                              "setitimer",
                                              "alarm",
                                              "ualarm",
                                              "ftruncate",
                                              "ftruncate64",
                                              "fallocate",
                                              "fallocate64",
                                              "posix_fallocate",
                                              "posix_fallocate64",
                                              "remove",
                                              "unlink",
                                              "unlinkat",
                                              "rename",
                                              "renameat",
                                              "mkdir",
                                              "rmdir",
                                              "chmod",
                                              "chown",
                                              "truncate",
                                              "prlimit",
                                              "prlimit64",
                                              "mount",
                                              "unshare"};
  return names;
}

// Defining one of these in the kernel would aim at the harness's clock.
const std::set<std::string>& TimerNames() {
  static const std::set<std::string> names = {"clock_gettime", "gettimeofday",    "time",        "clock",
                                              "clock_getres",  "__clock_gettime", "timespec_get"};
  return names;
}

bool IsBlas(const std::string& name) {
  return name.rfind("cblas_", 0) == 0 || name.rfind("openblas_", 0) == 0 || name.rfind("goto", 0) == 0 ||
         name == "sgemm_" || name == "dgemm_" || name == "sgemv_" || name == "saxpy_" || name == "sdot_";
}

// "name@GLIBC_2.2.5" -> "name"
std::string Bare(const std::string& symbol) { return symbol.substr(0, symbol.find('@')); }

}  // namespace

Result<std::vector<std::string>> DynamicSymbols(const std::string& library, bool undefined) {
  eval::SandboxRequest request;
  request.argv = {"/usr/bin/nm", "-D", undefined ? "--undefined-only" : "--defined-only", library};
  request.limits.wall_seconds = 30;
  request.limits.capture_bytes = 4 << 20;
  auto run = eval::RunSandboxed(request);
  if (!run) return run.error();
  if (!run->exited_cleanly()) return Error{"nm " + library + " failed: " + run->err.substr(0, 300)};
  std::vector<std::string> symbols;
  std::istringstream lines(run->out);
  std::string line;
  while (std::getline(lines, line)) {
    std::istringstream fields(line);
    std::string a, b, c;
    fields >> a >> b;
    // "U name" for imports; "address T name" for definitions.
    if (fields >> c)
      symbols.push_back(Bare(c));
    else if (!b.empty())
      symbols.push_back(Bare(b));
  }
  return symbols;
}

Result<std::optional<std::string>> ForbiddenSymbolUse(const std::string& library, bool allow_blas) {
  auto imports = DynamicSymbols(library, true);
  if (!imports) return imports.error();
  for (const auto& name : *imports) {
    if (ForbiddenImports().count(name)) return std::optional<std::string>{"the kernel calls " + name + "()"};
    if (!allow_blas && IsBlas(name))
      return std::optional<std::string>{"the kernel calls the BLAS function " + name + "(), which this task forbids"};
  }
  auto exports = DynamicSymbols(library, false);
  if (!exports) return exports.error();
  for (const auto& name : *exports)
    if (TimerNames().count(name))
      return std::optional<std::string>{"the kernel defines " + name + "(), a timer function of the harness"};
  return std::optional<std::string>{};
}

}  // namespace accelopt::cpu
