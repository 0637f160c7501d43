#include "eval/compiler.h"

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <optional>
#include <set>
#include <sstream>

#include "core/hash.h"
#include "core/json_io.h"
#include "core/pattern.h"
#include "core/scratch.h"
#include "eval/hot_loop.h"
#include "eval/includes.h"
#include "eval/sandbox.h"

namespace accelopt::eval {
namespace fs = std::filesystem;

namespace {

std::string CacheKey(const std::string& source, const std::string& header, const CompileOptions& o) {
  std::string key = o.compiler + "\n";
  for (const auto& f : o.flags) key += f + " ";
  for (const auto& l : o.libraries) key += "-l" + l + " ";
  key += o.vectorization_report ? "vec-all\n" : "\n";
  // Each part's length first: no two different (header, source) pairs hash alike.
  return ContentHasher()
      .Add(key)
      .Add(std::to_string(header.size()) + "\n")
      .Add(header)
      .Add(std::to_string(source.size()) + "\n")
      .Add(source)
      .Hex();
}

// The remarks about the kernel's own source that say a loop was vectorized.
std::string OptimizedRemarks(const std::string& text, size_t cap) {
  std::istringstream in(text);
  std::string line, out;
  while (std::getline(in, line) && out.size() < cap)
    if (line.rfind("kernel.cpp:", 0) == 0 && line.find(": optimized: ") != std::string::npos) out += line + "\n";
  return out;
}

CompileOutcome Refused(const std::string& why) {
  CompileOutcome out;
  out.refused = why;
  out.log = "refused before compiling: " + why + "\n";
  return out;
}

CompileOutcome LoadCached(const fs::path& dir) {
  CompileOutcome out;
  out.ok = true;
  out.cached = true;
  out.library_path = (dir / "kernel.so").string();
  if (auto log = ReadFile((dir / "compile.log").string())) out.log = *log;
  if (auto vec = ReadFile((dir / "vectorization.txt").string())) out.vectorization_report = *vec;
  if (auto missed = ReadFile((dir / "not-vectorized.txt").string())) out.not_vectorized = *missed;
  if (auto loop = ReadFile((dir / "hot-loop.txt").string())) {
    out.hot_loop = *loop;
  } else {
    // Cached before hot loops were kept: disassembled once, and kept (written atomically) for the next reader.
    out.hot_loop = HotLoop(out.library_path);
    WriteFile((dir / "hot-loop.txt").string(), out.hot_loop);
  }
  return out;
}

// Runs the compiler in `dir` with `args` after the options' flags.
Result<SandboxOutcome> RunCompilerStage(const fs::path& dir, const CompileOptions& options,
                                        const std::vector<std::string>& args, bool assembling) {
  SandboxRequest request;
  request.workdir = dir.string();
  request.argv = {options.compiler};
  for (const auto& f : options.flags)
    if (!assembling || f.rfind("-std=", 0) != 0) request.argv.push_back(f);  // a language's, not the assembler's
  request.argv.insert(request.argv.end(), args.begin(), args.end());
  // The compiler is trusted but the source is not (#include "/dev/zero"): limit it too.
  request.limits.wall_seconds = options.timeout_seconds;
  request.limits.address_space_bytes = 8L << 30;
  // Captured whole (up to 4 MiB) so that filtering comes before truncation.
  request.limits.capture_bytes = std::max<size_t>(options.log_bytes, 4 << 20);
  // Resolve the compiler through PATH here: the sandbox executes a path.
  if (request.argv[0].find('/') == std::string::npos) {
    std::string path = getenv("PATH") ? getenv("PATH") : "/usr/bin:/bin";
    std::istringstream dirs(path);
    std::string d;
    while (std::getline(dirs, d, ':'))
      if (!d.empty() && access((d + "/" + options.compiler).c_str(), X_OK) == 0) {
        request.argv[0] = d + "/" + options.compiler;
        break;
      }
  }
  auto run = RunSandboxed(request);
  if (!run) return run.error();
  if (run->exit_code == 127) return Error{"cannot run the compiler '" + options.compiler + "'"};
  return run;
}

// Why the compiler's assembly output is not assembled: the assembler's
// .incbin and .include read any file (a kernel's inline assembly can spell
// them so that no check of its source sees them: escapes, macros, pasted
// literals; the compiler's output has them plain). nullopt when it may be.
std::optional<std::string> ReadsAFile(const fs::path& assembly) {
  static const RE2 directive(R"((?i)\.(incbin|include)\b)", PatternOptions());
  auto text = ReadFile(assembly.string());
  std::string name;
  if (!text || !RE2::PartialMatch(Piece(*text), directive, &name)) return std::nullopt;
  return "the kernel's inline assembly uses the assembler's ." + name +
         ", which reads a file: a kernel's inline assembly may not use it";
}

// Runs the compiler in `dir` on kernel.cpp with shape.h force-included, in two
// steps: kernel.cpp to assembly, then, when that holds no directive that
// reads a file (`refused` says which otherwise), assembled and linked into kernel.so.
Result<SandboxOutcome> RunCompiler(const fs::path& dir, const CompileOptions& options, bool report,
                                   std::string* refused = nullptr) {
  std::vector<std::string> compile = {"-fPIC", "-Wall", "-include", "shape.h", "-S", "kernel.cpp", "-o", "kernel.s"};
  // Both kinds in one file: gcc takes one -fopt-info file per pass.
  if (report) compile.push_back("-fopt-info-vec-all=vectorization.txt");
  auto first = RunCompilerStage(dir, options, compile, false);
  if (!first || !first->exited_cleanly()) return first;
  if (auto why = ReadsAFile(dir / "kernel.s")) {
    if (refused) *refused = *why;
    first->exit_code = 1;
    return first;
  }
  std::vector<std::string> link = {"-fPIC", "-shared", "-Wl,-z,defs", "kernel.s", "-o", "kernel.so"};
  for (const auto& l : options.libraries) link.push_back("-l" + l);
  auto second = RunCompilerStage(dir, options, link, true);
  if (!second) return second;
  second->err = first->err + second->err;
  second->out = first->out + second->out;
  second->wall_seconds += first->wall_seconds;
  second->cpu_seconds += first->cpu_seconds;
  return second;
}

// Builds a trivial kernel with the same compiler and flags; an Error when
// that fails too, saying why.
Status CheckBuildEnvironment(const fs::path& dir, const CompileOptions& options) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  Status written = WriteFile((dir / "kernel.cpp").string(), "extern \"C\" int accelopt_canary() { return 0; }\n");
  if (written) written = WriteFile((dir / "shape.h").string(), "#pragma once\n");
  Result<SandboxOutcome> run = written ? RunCompiler(dir, options, false) : Result<SandboxOutcome>(written.error());
  bool built = run && run->exited_cleanly() && fs::exists(dir / "kernel.so", ec);
  fs::remove_all(dir, ec);
  if (built) return Ok{};
  std::string why = !run ? run.error().message : TruncateLog(run->err + run->out, 2000);
  return Error{"the build environment is failing, not the kernel: a trivial file does not build in " +
               dir.parent_path().string() + " either (full disk? quota? broken compiler?):\n" + why};
}

// A diagnostic's first line: "FILE:LINE:COL: KIND: message".
struct DiagnosticHead {
  std::string file, kind;
};
std::optional<DiagnosticHead> ParseHead(const std::string& line) {
  static const RE2 head(R"(^([^ :][^:]*):[0-9]+:[0-9]+: (fatal error|error|warning|note): )", PatternOptions());
  std::string file, kind;
  if (!RE2::PartialMatch(Piece(line), head, &file, &kind)) return std::nullopt;
  return DiagnosticHead{file, kind};
}

// Lines that say where the next diagnostic comes from.
bool IsContext(const std::string& line) {
  static const RE2 context(
      R"(^(In file included from |\s+from |In (member )?function |\s+inlined from |[^ :][^:]*: (In (member )?function|At global scope|In instantiation of|In lambda)))",
      PatternOptions());
  return RE2::PartialMatch(Piece(line), context);
}

}  // namespace

std::string KeepOwnDiagnostics(const std::string& log) {
  // A source excerpt under a diagnostic: "   12 |   code", "13033 |   code", "      |   ^~~".
  static const RE2 excerpt(R"(^ *[0-9]* \|)", PatternOptions());
  std::istringstream in(log);
  std::string line, out, pending, group;
  bool keep_group = true;
  int dropped = 0, elsewhere = 0;
  auto flush = [&] {
    if (keep_group) out += group;
    group.clear();
  };
  while (std::getline(in, line)) {
    line += "\n";
    if (auto head = ParseHead(line)) {
      // A note belongs to the diagnostic before it, kept or left out with it,
      // even when a context line ("In function ...") stands between them.
      if (head->kind == "note" && (!group.empty() || !keep_group)) {
        group += pending + line;
      } else {
        flush();
        // The kernel's own files, and errors in the toolchain's headers (a
        // template the kernel misuses); a diagnostic about any other file
        // would quote that file's lines, which are not the kernel's to read.
        const bool own = head->file == "kernel.cpp" || head->file == "shape.h";
        const bool toolchain = head->file.rfind("/usr/", 0) == 0 && head->file.find("/../") == std::string::npos;
        keep_group = own || (toolchain && head->kind != "warning");
        if (!keep_group) ++(toolchain ? dropped : elsewhere);
        group = pending + line;
      }
      pending.clear();
    } else if (IsContext(line)) {
      pending += line;
    } else if (RE2::PartialMatch(Piece(line), excerpt) && (!group.empty() || !keep_group)) {
      group += pending + line;  // the source excerpt and carets
      pending.clear();
    } else {
      flush();
      keep_group = true;
      out += pending + line;  // the linker's and the driver's own messages
      pending.clear();
    }
  }
  flush();
  out += pending;
  if (dropped > 0)
    out += "[" + std::to_string(dropped) + " warning" + (dropped == 1 ? "" : "s") +
           " located in system headers left out]\n";
  if (elsewhere > 0)
    out += "[" + std::to_string(elsewhere) + " diagnostic" + (elsewhere == 1 ? "" : "s") +
           " located in files other than the kernel's left out]\n";
  return out;
}

Result<CompileOutcome> CompileKernel(const std::string& source, const std::string& header,
                                     const CompileOptions& options, const std::string& scratch_dir) {
  if (auto why = ForbiddenFileAccess(source)) return Refused(*why);
  std::string key = CacheKey(source, header, options);
  fs::path cached = options.cache_dir.empty() ? fs::path() : fs::path(options.cache_dir) / key;
  std::error_code ec;
  if (!cached.empty() && fs::exists(cached / "kernel.so", ec)) return LoadCached(cached);

  fs::path dir = fs::path(scratch_dir) / ("build-" + key);
  fs::create_directories(dir, ec);
  if (ec) return Error{"cannot create build folder " + dir.string() + ": " + ec.message()};
  for (auto [name, text] : {std::pair{"kernel.cpp", &source}, std::pair{"shape.h", &header}})
    if (auto s = WriteFile((dir / name).string(), *text); !s) return s.error();

  std::string refused;
  auto run = RunCompiler(dir, options, options.vectorization_report, &refused);
  if (!run) return run.error();
  if (!refused.empty()) {
    fs::remove_all(dir, ec);
    return Refused(refused);
  }

  CompileOutcome out;
  out.seconds = run->wall_seconds;
  out.log = TruncateLog(KeepOwnDiagnostics(run->err + run->out), options.log_bytes);
  if (run->timed_out)
    out.log += "\n[the compiler was stopped after " + std::to_string(options.timeout_seconds) + " s]\n";
  out.ok = run->exited_cleanly() && fs::exists(dir / "kernel.so", ec);
  if (auto vec = ReadFile((dir / "vectorization.txt").string())) {
    out.vectorization_report = OptimizedRemarks(*vec, options.log_bytes);
    out.not_vectorized = NotVectorizedRemarks(*vec);
  }
  if (!out.ok && !run->timed_out) {
    // A full disk, a quota or a broken toolchain fails every build: that is
    // the engine's failure, never the kernel's verdict.
    fs::remove_all(dir, ec);
    if (auto s = CheckBuildEnvironment(fs::path(scratch_dir) / ("canary-" + key), options); !s) return s.error();
  }
  if (!out.ok) return out;
  out.hot_loop = HotLoop((dir / "kernel.so").string());
  WriteFile((dir / "hot-loop.txt").string(), out.hot_loop);
  WriteFile((dir / "compile.log").string(), out.log);
  WriteFile((dir / "vectorization.txt").string(), out.vectorization_report);
  WriteFile((dir / "not-vectorized.txt").string(), out.not_vectorized);
  if (cached.empty()) {
    out.library_path = (dir / "kernel.so").string();
    return out;
  }
  auto published = PublishBuild(dir, cached, "kernel.so");
  if (!published) return published.error();
  out.library_path = (*published / "kernel.so").string();
  return out;
}

std::string NameSourceInLog(const std::string& log, const std::string& name) {
  std::string out;
  const std::string own = "kernel.cpp:";
  size_t at = 0;
  for (size_t hit; (hit = log.find(own, at)) != std::string::npos; at = hit + own.size())
    out += log.substr(at, hit - at) + name + ":";
  return out + log.substr(at);
}

std::string NotVectorizedRemarks(const std::string& remarks, size_t max_lines) {
  static const RE2 missed(R"(kernel\.cpp:([0-9]+):[0-9]+: missed: +not vectorized: (.*))", PatternOptions());
  std::istringstream in(remarks);
  std::set<std::string> seen;
  std::string line, out;
  size_t kept = 0, more = 0;
  std::string at, why;
  while (std::getline(in, line)) {
    if (!RE2::FullMatch(Piece(line), missed, &at, &why)) continue;
    std::string remark = "kernel.cpp:" + at + ": " + why;
    if (!seen.insert(remark).second) continue;
    if (kept < max_lines)
      out += remark + "\n", ++kept;
    else
      ++more;
  }
  if (more > 0) out += "[" + std::to_string(more) + " more]\n";
  return out;
}

}  // namespace accelopt::eval
