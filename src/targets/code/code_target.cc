#include "targets/code/code_target.h"

#include <fmt/core.h>

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <mutex>
#include <random>

#include "core/clock.h"
#include "core/hash.h"
#include "core/json_io.h"
#include "core/paths.h"
#include "core/scratch.h"
#include "eval/machine.h"
#include "eval/machine_load.h"
#include "eval/metric.h"
#include "eval/sandbox.h"
#include "eval/stats.h"
#include "targets/code/context.h"
#include "targets/code/files.h"
#include "targets/code/metric.h"

namespace accelopt::code {
namespace fs = std::filesystem;

namespace {

constexpr size_t kLogBytes = 6000;
constexpr const char* kReadyMark = ".accelopt-checked-out";

// Runs `argv` (its program looked up on $PATH) in `dir` to the end or the timeout.
Result<eval::SandboxOutcome> Program(std::vector<std::string> argv, const fs::path& dir, double timeout = 600,
                                     std::vector<std::string> env = {}) {
  const std::string path = FindProgram(argv.front());
  if (path.empty()) return Error{"the program '" + argv.front() + "' is not on $PATH"};
  std::string shown;
  for (const auto& a : argv) shown += (shown.empty() ? "" : " ") + a;
  argv.front() = path;
  eval::SandboxRequest run;
  run.argv = argv;
  run.workdir = dir.string();
  run.env = std::move(env);
  run.limits.wall_seconds = timeout;
  run.limits.address_space_bytes = 0;
  run.limits.file_size_bytes = 16L << 30;
  run.limits.capture_bytes = 8 << 20;
  auto outcome = eval::RunSandboxed(run);
  if (!outcome) return Error{"could not run `" + shown + "`: " + outcome.error().message};
  return outcome;
}

// `argv` (its program's full path first) confined by bubblewrap: the whole
// file system read-only (the original code base, the engine's files and
// everything else), `writable` folders writable, no network, no other
// process or IPC object in sight, in `dir`.
std::vector<std::string> Confined(std::vector<std::string> argv, const fs::path& dir,
                                  const std::vector<fs::path>& writable) {
  std::vector<std::string> out = {FindProgram("bwrap"), "--ro-bind", "/", "/", "--dev", "/dev", "--tmpfs", "/dev/shm",
                                  "--proc", "/proc"};
  for (const fs::path& w : writable) out.insert(out.end(), {"--bind", w.string(), w.string()});
  // The command is the namespace's first process (--as-pid-1), so that bwrap
  // waits for it and its CPU time reaches the engine as its own (with a
  // helper as pid 1 it did not, and the benchmark's work counted as another
  // process's load: every run measured disturbed).
  out.insert(out.end(), {"--unshare-net", "--unshare-ipc", "--unshare-pid", "--as-pid-1", "--unshare-uts",
                         "--die-with-parent", "--new-session", "--chdir", dir.string()});
  out.insert(out.end(), argv.begin(), argv.end());
  return out;
}

// Why a task's commands cannot be confined here ("" when they can): bubblewrap
// must be installed and able to make its namespaces (an unprivileged
// container may refuse). Tried once.
const std::string& ConfinementProblem() {
  static const std::string problem = [] {
    if (FindProgram("bwrap").empty()) return std::string("bubblewrap (bwrap) is not installed");
    eval::SandboxRequest r;
    r.argv = Confined({FindProgram("true")}, "/", {});  // exactly as the commands will be confined
    r.limits.wall_seconds = 30;
    r.limits.address_space_bytes = 0;
    auto o = eval::RunSandboxed(r);
    if (!o) return "bwrap could not run: " + o.error().message;
    if (!o->exited_cleanly()) return "bwrap cannot make its namespaces here: " + eval::TruncateLog(o->err, 300);
    return std::string();
  }();
  return problem;
}

// A random seed for one run of a task's command.
uint64_t FreshSeed() {
  static std::mutex mu;
  static std::mt19937_64 rng(std::random_device{}());
  std::lock_guard lock(mu);
  return rng();
}

// What a command printed, stderr first (where compilers and test runners say what failed).
std::string LogOf(const std::string& command, const eval::SandboxOutcome& o) {
  std::string log = "$ " + command + "\n";
  if (!o.err.empty()) log += eval::TruncateLog(o.err, kLogBytes);
  if (!o.out.empty()) log += (o.err.empty() ? "" : "\n") + eval::TruncateLog(o.out, kLogBytes);
  return log;
}

// Why a command that did not exit cleanly failed, in words.
std::string FailureOf(const std::string& what, const eval::SandboxOutcome& o, double timeout) {
  if (o.timed_out) return fmt::format("{} did not finish within {:.0f} s", what, timeout);
  if (o.term_signal) return what + " was killed by " + eval::SignalName(o.term_signal);
  return fmt::format("{} failed (exit status {})", what, o.exit_code);
}

// The files of the code base to copy: those git knows of (tracked, or new and
// not ignored) when it is in a git work tree, else every file but .git.
Result<std::vector<fs::path>> FilesToCopy(const fs::path& base) {
  std::vector<fs::path> files;
  if (!FindProgram("git").empty()) {
    auto listed = Program({"git", "ls-files", "-z", "--cached", "--others", "--exclude-standard", "."}, base, 120);
    if (listed && listed->exited_cleanly()) {
      const std::string& out = listed->out;
      for (size_t start = 0; start < out.size();) {
        size_t end = out.find('\0', start);
        if (end == std::string::npos) end = out.size();
        if (end > start) files.emplace_back(out.substr(start, end - start));
        start = end + 1;
      }
      if (listed->out_truncated) return Error{"the code base at " + base.string() + " lists too many files to copy"};
      return files;
    }
  }
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(base, ec); !ec && it != fs::recursive_directory_iterator();
       it.increment(ec)) {
    if (it->path().filename() == ".git") {
      it.disable_recursion_pending();
      continue;
    }
    if (it->is_regular_file() || it->is_symlink()) files.push_back(fs::relative(it->path(), base));
  }
  if (ec) return Error{"cannot list " + base.string() + ": " + ec.message()};
  return files;
}

Status CopyCodeBase(const fs::path& base, const std::vector<fs::path>& files, const fs::path& to) {
  std::error_code ec;
  for (const fs::path& rel : files) {
    const fs::path from = base / rel;
    if (!fs::exists(fs::symlink_status(from, ec))) continue;  // deleted but still tracked
    fs::create_directories((to / rel).parent_path(), ec);
    if (fs::is_symlink(fs::symlink_status(from, ec)))
      fs::copy_symlink(from, to / rel, ec);
    else
      fs::copy_file(from, to / rel, fs::copy_options::overwrite_existing, ec);
    if (ec) return Error{"cannot copy " + from.string() + " to " + (to / rel).string() + ": " + ec.message()};
  }
  return Ok{};
}

Status WriteCandidateFiles(const fs::path& root, const std::vector<SourceFile>& files) {
  for (const auto& f : files) {
    const fs::path path = root / f.path;
    std::error_code ec;
    fs::create_directories(path.parent_path(), ec);
    if (auto s = WriteFile(path.string(), f.text); !s) return s;
  }
  return Ok{};
}

double Mean(const std::vector<double>& v) {
  double sum = 0;
  for (double x : v) sum += x;
  return v.empty() ? 0 : sum / static_cast<double>(v.size());
}

// A benchmark times itself, and the code it times runs in its process: a
// candidate can fake the figure (a clock of its own, a figure printed early).
// The command is timed from outside too. When the figures claim at least
// kClaimedGain and the whole command, timed from outside, got no faster
// (under kOutsideGain), the figure is not believed: the candidate is suspect.
// (A benchmark whose timed work is a sliver of its run can trip this with a
// real gain; its author makes the timed work the larger part.)
constexpr double kClaimedGain = 2.0, kOutsideGain = 1.10;

void CheckAgainstOutsideTime(const PairedSpeedup& figures, const PairedSpeedup& outside, Profile& b) {
  if (b.status != Verdict::kOk || figures.pairs == 0 || outside.pairs == 0) return;
  if (figures.speedup < kClaimedGain || outside.speedup >= kOutsideGain) return;
  b.status = Verdict::kSuspect;
  b.message = fmt::format(
      "its benchmark's figures claim {:.2f}x, but the benchmark command as a whole, timed from outside, ran "
      "{:.3f}x as fast: a figure the timed code itself could have set (a clock of its own), not believed (a "
      "claimed gain of {:g}x or more needs the command {:g}x faster from outside)",
      figures.speedup, outside.speedup, kClaimedGain, kOutsideGain);
}

std::string MetricText(const suite::MetricSpec& m) {
  return m.name + (m.unit.empty() ? "" : " (" + m.unit + ")") + ", " +
         (m.higher_is_better ? "higher is better" : "lower is better");
}

}  // namespace

struct CodeTarget::Prepared {
  std::unique_ptr<ScratchDir> dir;
  fs::path root;
  Profile profile;
  Profile built;                  ///< the profile as the build left it
  std::optional<Profile> tested;  ///< as the tests left it, once they passed
  std::optional<std::string> time_profile;  ///< where its benchmark's time goes, once asked (TimeProfile)
  double start = 0;
  /// Whether it may still be benchmarked: nothing has failed it yet.
  bool ok() const { return profile.status == Verdict::kOk; }
};

// A candidate's built copy, shared with the target's kept copies.
struct CodeTarget::CodeBuilt : targets::Built {
  const suite::Task* task = nullptr;  ///< outlives it, as an EvalRequest's task does
  std::shared_ptr<Prepared> prepared;
  Profile profile;  ///< the build's
  const Profile& BuildProfile() const override { return profile; }
};

CodeTarget::CodeTarget(CodeTargetOptions options) : options_(std::move(options)), machine_(eval::DetectMachine()) {
  if (options_.work_dir.empty()) options_.work_dir = CacheDir() + "/work";
  if (options_.bases_dir.empty()) options_.bases_dir = CacheDir() + "/code";
}

targets::TargetInfo CodeTarget::Describe() const {
  targets::TargetInfo info;
  info.name = "code";
  info.language = "any";  // each task names its own
  info.build_command = "the task's own build command";
  info.prompts_dir = "prompts/code";
  return info;
}

std::string CodeTarget::Machine() const { return machine_.fingerprint; }

std::string CodeTarget::MachineText() const {
  std::string text = fmt::format("{}, {} core(s) available", machine_.cpu_model.empty() ? "a CPU" : machine_.cpu_model,
                                 machine_.cores);
  if (std::string caches = eval::DescribeCaches(); !caches.empty()) text += "; " + caches;
  return text;
}

Result<fs::path> CodeTarget::BaseOf(const suite::Task& task) const {
  const suite::CodeSpec& spec = task.code;
  if (!spec.path.empty()) return fs::path(spec.path);
  std::lock_guard lock(bases_mu_);
  const fs::path dir = fs::path(options_.bases_dir) / ContentHash(spec.repo + "\n" + spec.commit);
  std::error_code ec;
  if (fs::exists(dir / kReadyMark, ec)) return dir;
  fs::remove_all(dir, ec);
  fs::create_directories(dir.parent_path(), ec);
  const std::string where = "task '" + task.name + "': the repository " + spec.repo + " at " + spec.commit;
  auto cloned = Program({"git", "clone", "--quiet", "--no-checkout", spec.repo, dir.string()}, dir.parent_path());
  if (!cloned) return Error{where + ": " + cloned.error().message};
  if (!cloned->exited_cleanly()) return Error{where + ": git clone failed:\n" + eval::TruncateLog(cloned->err, 2000)};
  auto checked = Program({"git", "checkout", "--quiet", "--detach", spec.commit}, dir);
  if (!checked) return Error{where + ": " + checked.error().message};
  if (!checked->exited_cleanly())
    return Error{where + ": git checkout failed:\n" + eval::TruncateLog(checked->err, 2000)};
  if (auto s = WriteFile((dir / kReadyMark).string(), spec.commit + "\n"); !s) return s.error();
  return dir;
}

Result<std::string> CodeTarget::Baseline(const suite::Task& task) const {
  auto base = BaseOf(task);
  if (!base) return base.error();
  auto files = CollectFiles(*base, task.code.files);
  if (!files) return Error{"task '" + task.name + "': " + files.error().message};
  return FormatFiles(std::move(*files));
}

targets::Target::AnswerReader CodeTarget::AnswerReaderFor(const suite::Task& task) const {
  return [globs = task.code.files](const std::string& answer, const std::string& current) {
    return ApplyAnswer(answer, current, globs);
  };
}

std::map<std::string, std::string> CodeTarget::PromptValues(const suite::Task& task) const {
  const suite::CodeSpec& c = task.code;
  std::string globs;
  for (const auto& g : c.files) globs += (globs.empty() ? "" : ", ") + g;
  return {{"language", c.language},
          {"files", globs},
          {"build_command", c.build.empty() ? "(none)" : c.build},
          {"test_command", c.test},
          {"bench_command", c.bench},
          {"metric", MetricText(c.metric)},
          {"repetitions", std::to_string(c.repetitions)},
          {"noise_margin", fmt::format("{:g}%", 100 * c.noise_margin)},
          {"workload", c.workload.empty() ? "(not described by the task: read the benchmark below)" : c.workload},
          {"libraries", c.libraries.empty() ? "not said by the task: the standard library and what the code base "
                                              "already uses; nothing can be installed (the commands run without "
                                              "network)"
                                            : c.libraries},
          {"toolchain", ToolchainText(c.language)},
          {"context", [&] {
             auto base = BaseOf(task);
             return base ? ContextText(*base, c) : "(the code base could not be had: " + base.error().message + ")\n";
           }()}};
}

// A task's command, with the shell, in the candidate's copy: a fresh, empty
// $TMPDIR (and $HOME) for each run (nothing a run leaves there reaches the
// next) and $ACCELOPT_SEED, the seed a benchmark may draw its inputs from.
// Confined where bubblewrap can: everything outside the copy read-only (the
// original code base included), the copy itself writable for the build only
// (the tests and the benchmark read it), no network.
Result<eval::SandboxOutcome> CodeTarget::Shell(const std::string& command, Prepared& p, double timeout, uint64_t seed,
                                               bool writable_copy, std::vector<std::string> extra_env) const {
  const fs::path tmp = p.dir->path() / "tmp", home = p.dir->path() / "home";
  std::error_code ec;
  for (const fs::path& d : {tmp, home}) {
    fs::remove_all(d, ec);
    fs::create_directories(d, ec);
    if (ec) return Error{"cannot make " + d.string() + ": " + ec.message()};
  }
  std::vector<std::string> env = {"TMPDIR=" + tmp.string(), "HOME=" + home.string(),
                                  "ACCELOPT_SEED=" + std::to_string(seed)};
  env.insert(env.end(), extra_env.begin(), extra_env.end());
  if (!ConfinementProblem().empty()) return Program({"sh", "-c", command}, p.root, timeout, std::move(env));
  std::vector<fs::path> writable = {tmp, home};
  if (writable_copy) writable.push_back(p.root);
  return Program(Confined({FindProgram("sh"), "-c", command}, p.root, writable), p.root, timeout, std::move(env));
}

// What the confinement of a task's commands was, for a profile's conditions.
std::string ConfinementText() {
  const std::string& problem = ConfinementProblem();
  if (problem.empty())
    return "each command confined by bubblewrap: the file system read-only but for the candidate's copy (writable "
           "for the build only) and a fresh temporary folder, no network, no other process in sight";
  return "NOT confined (" + problem +
         "): the commands ran as the engine's user with the machine writable, so this result is not trusted";
}

// The first of the original code base's `files` outside the candidate's
// (`globs`) whose copy in `root` differs or is gone: "" when none.
std::string ChangedOriginalFile(const fs::path& base, const std::vector<fs::path>& files, const fs::path& root,
                                const std::vector<std::string>& globs) {
  for (const fs::path& rel : files) {
    if (PathProblem(rel.string(), globs).empty()) continue;  // the candidate's to change
    std::error_code ec;
    const fs::path from = base / rel, to = root / rel;
    if (fs::is_symlink(fs::symlink_status(from, ec)) || !fs::is_regular_file(from, ec)) continue;
    auto original = ReadFile(from.string());
    if (!original) continue;  // unreadable in the original: nothing to compare
    auto copy = fs::is_symlink(fs::symlink_status(to, ec)) ? Result<std::string>(Error{""}) : ReadFile(to.string());
    if (!copy || *copy != *original) return rel.string();
  }
  return std::string();
}

Result<std::unique_ptr<CodeTarget::Prepared>> CodeTarget::Prepare(const targets::EvalRequest& request) const {
  const suite::Task& task = *request.task;
  const suite::CodeSpec& spec = task.code;
  auto p = std::make_unique<Prepared>();
  p->start = NowSeconds();
  p->profile.task = task.name;
  p->profile.shape = request.shape;
  p->profile.target = name();
  auto fail = [&](Verdict verdict, std::string message) {
    p->profile.status = verdict;
    p->profile.message = std::move(message);
    p->profile.wall_seconds = NowSeconds() - p->start;
    return std::move(p);
  };
  if (task.kind != suite::TaskKind::kCode)
    return Error{"the code target runs tasks of kind code; '" + task.name + "' is a kernel"};
  if (auto bound = suite::Bind(task, request.shape); !bound) return bound.error();  // a code task has "bench" only
  auto files = ParseFiles(request.candidate.source);
  if (!files) return fail(Verdict::kCompileError, files.error().message);
  for (const auto& f : *files)
    if (auto problem = PathProblem(f.path, spec.files); !problem.empty()) return fail(Verdict::kForbidden, problem);
  auto base = BaseOf(task);
  if (!base) return base.error();
  auto dir = ScratchDir::Create(options_.work_dir, task.name, options_.keep_work);
  if (!dir) return dir.error();
  p->dir = std::move(*dir);
  p->root = p->dir->path() / "src";
  if (options_.keep_work) p->profile.work_dir = p->root.string();
  auto base_files = FilesToCopy(*base);
  if (!base_files) return base_files.error();
  if (auto s = CopyCodeBase(*base, *base_files, p->root); !s) return s.error();
  if (auto s = WriteCandidateFiles(p->root, *files); !s) return s.error();

  if (!spec.build.empty()) {
    const double t0 = NowSeconds();
    auto built = Shell(spec.build, *p, spec.timeout_seconds, FreshSeed(), /*writable_copy=*/true);
    if (!built) return built.error();
    p->profile.compile_seconds = NowSeconds() - t0;
    p->profile.compile_log = LogOf(spec.build, *built);
    if (!built->exited_cleanly())
      return fail(built->timed_out ? Verdict::kTimeout : Verdict::kCompileError,
                  FailureOf("the build", *built, spec.timeout_seconds));
    // A clean build's log is progress lines; only warnings are worth a planner's attention.
    if (p->profile.compile_log.find("warning") == std::string::npos) p->profile.compile_log.clear();
    // The tests and the benchmark are the original's: a build that changed one
    // (or any file outside the candidate's) would decide its own verdict.
    const std::string changed = ChangedOriginalFile(*base, *base_files, p->root, spec.files);
    if (!changed.empty())
      return fail(Verdict::kForbidden, "the build changed " + changed +
                                           ", a file of the code base outside the candidate's files: the tests and "
                                           "the benchmark must run as the original has them");
  }
  p->built = p->profile;
  return p;
}

Result<bool> CodeTarget::Tested(const suite::Task& task, Prepared& p) const {
  if (p.tested) {
    p.profile = *p.tested;
    return true;
  }
  const suite::CodeSpec& spec = task.code;
  auto tested = Shell(spec.test, p, spec.timeout_seconds, FreshSeed());
  if (!tested) return tested.error();
  p.profile.run_log = LogOf(spec.test, *tested);
  if (!tested->exited_cleanly()) {
    p.profile.phase = "tests";
    p.profile.status = tested->timed_out     ? Verdict::kTimeout
                       : tested->term_signal ? Verdict::kRuntimeError
                                             : Verdict::kWrongAnswer;
    p.profile.message = FailureOf("the tests", *tested, spec.timeout_seconds);
    p.profile.wall_seconds = NowSeconds() - p.start;
    return false;
  }
  p.profile.seeds = 1;
  p.tested = p.profile;
  return true;
}

Result<std::shared_ptr<CodeTarget::Prepared>> CodeTarget::ReadyAndTested(const targets::EvalRequest& request) {
  auto p = Ready(request);
  if (!p) return p.error();
  if ((*p)->ok())
    if (auto tested = Tested(*request.task, **p); !tested) return tested.error();
  return p;
}

Result<std::shared_ptr<CodeTarget::Prepared>> CodeTarget::Ready(const targets::EvalRequest& request) {
  const std::string key = request.task->name + "\n" + ContentHash(request.candidate.source);
  {
    std::lock_guard lock(kept_mu_);
    for (auto& [k, kept] : kept_)
      if (k == key) {
        kept->profile = kept->built;
        kept->start = NowSeconds();
        return kept;
      }
  }
  auto prepared = Prepare(request);
  if (!prepared) return prepared.error();
  std::shared_ptr<Prepared> p = std::move(*prepared);
  if (p->ok() && options_.kept_copies > 0) {
    std::lock_guard lock(kept_mu_);
    kept_.emplace_back(key, p);
    if (kept_.size() > options_.kept_copies) kept_.erase(kept_.begin());
  }
  return p;
}

Result<std::optional<CodeTarget::BenchRun>> CodeTarget::RunBench(const suite::Task& task, Prepared& p,
                                                                 uint64_t seed) const {
  const suite::CodeSpec& spec = task.code;
  const eval::CpuSnapshot before = eval::TakeCpuSnapshot();
  auto ran = Shell(spec.bench, p, spec.timeout_seconds, seed);
  if (!ran) return ran.error();
  eval::CpuSnapshot after = eval::TakeCpuSnapshot();
  // The benchmark's processes are ours too: their CPU time, as its process reaped them.
  after.ours += ran->cpu_seconds * static_cast<double>(sysconf(_SC_CLK_TCK));
  auto fail = [&](Verdict verdict, const std::string& message) -> std::optional<BenchRun> {
    p.profile.status = verdict;
    p.profile.message = message;
    p.profile.phase = "benchmark";
    p.profile.run_log = LogOf(spec.bench, *ran);
    return std::nullopt;
  };
  if (!ran->exited_cleanly())
    return fail(ran->timed_out ? Verdict::kTimeout : Verdict::kRuntimeError,
                FailureOf("the benchmark", *ran, spec.timeout_seconds));
  auto figure = ReadMetric(ran->out, ran->err, spec.metric);
  if (!figure) return fail(Verdict::kRuntimeError, figure.error().message);
  std::string digest;
  if (!spec.digest.empty()) {
    auto read = ReadDigest(ran->out, spec.digest);
    if (!read) return fail(Verdict::kRuntimeError, "the benchmark printed no digest of its result: " + read.error().message);
    digest = std::move(*read);
  }
  return std::optional<BenchRun>(BenchRun{eval::CostOf(*figure, spec.metric), eval::LoadBetween(before, after).others,
                                          ran->wall_seconds, std::move(digest)});
}

bool CodeTarget::Disturbed(const BenchRun& run, int& retries_left, Prepared& p) const {
  if (run.other_load <= options_.disturbed_share || retries_left == 0) return false;
  --retries_left;
  ++p.profile.disturbed_series;
  eval::QuietWait wait;
  wait.share = options_.disturbed_share;
  wait.max_seconds = options_.quiet_wait_seconds;
  eval::WaitForQuiet(wait);  // a moment's patience before running it again
  return true;
}

std::string CodeTarget::TimeProfile(const suite::Task& task, Prepared& p) const {
  if (p.time_profile) return *p.time_profile;
  const suite::CodeSpec& spec = task.code;
  std::string& text = p.time_profile.emplace();
  if (spec.language != "python") {
    text = "no profile was taken: the code base is " + spec.language +
           ", and the engine profiles only Python code bases (one run of the benchmark under cProfile); read the "
           "benchmark and its figures instead\n";
    return text;
  }
  const fs::path site = p.dir->path() / "pyprofile", out = p.dir->path() / "tmp" / ".accelopt-profile";
  std::error_code ec;
  fs::create_directories(site, ec);
  if (auto s = WriteFile((site / "sitecustomize.py").string(), ProfilerSiteCustomize()); !s) {
    text = "no profile was taken: " + s.error().message + "\n";
    return text;
  }
  std::string pythonpath = site.string();
  if (const char* had = std::getenv("PYTHONPATH"); had && *had) pythonpath += std::string(":") + had;
  auto ran = Shell(spec.bench, p, spec.timeout_seconds, FreshSeed(), false,
                   {"PYTHONPATH=" + pythonpath, "ACCELOPT_PROFILE_DIR=" + out.string()});
  if (!ran) {
    text = "no profile was taken: " + ran.error().message + "\n";
  } else if (!ran->exited_cleanly()) {
    text = "no profile was taken: " + FailureOf("the benchmark under cProfile", *ran, spec.timeout_seconds) + "\n";
  } else if (std::string read = ReadPythonProfiles(out, p.root); !read.empty()) {
    text = "one more run of the benchmark with each of its Python processes under cProfile (confined as the "
           "benchmark is; profiling slows calls, so read the shares, not the seconds), top entries by cumulative "
           "time:\n" + read;
  } else {
    text = "no profile was taken: the benchmark ran no Python process that wrote one (started with -S or -I, or "
           "ended by os._exit, or not Python at all)\n";
  }
  return text;
}

void CodeTarget::Finish(const suite::Task& task, Prepared& p, const std::vector<double>& costs,
                        const std::vector<double>& loads) const {
  const suite::CodeSpec& spec = task.code;
  Profile& profile = p.profile;
  profile.other_load = Mean(loads);
  // A run still disturbed after the retries was counted: the figures are shown, marked so, and never decide.
  profile.disturbed = std::any_of(loads.begin(), loads.end(), [&](double l) { return l > options_.disturbed_share; });
  profile.latency = eval::Summarize(costs);
  profile.latency->series = 1;
  profile.metric = eval::FiguresOf(*profile.latency, spec.metric, static_cast<int>(costs.size()));
  profile.conditions = fmt::format(
      "the benchmark command run {} times in the candidate's own built copy, after one run that is not counted; "
      "its figure read from each run's output; a run during which other processes used more than {:.0f}% of the "
      "machine is run again ({} times at most); {}",
      costs.size(), 100 * options_.disturbed_share, options_.disturbed_retries, ConfinementText());
  if (profile.status == Verdict::kOk) profile.time_profile = TimeProfile(task, p);
  profile.wall_seconds = NowSeconds() - p.start;
}

std::vector<Result<std::unique_ptr<targets::Built>>> CodeTarget::Build(std::span<const targets::EvalRequest> requests) {
  std::vector<Result<std::unique_ptr<targets::Built>>> out;
  for (const targets::EvalRequest& request : requests) {
    auto p = Ready(request);
    if (!p) {
      out.push_back(p.error());
      continue;
    }
    auto built = std::make_unique<CodeBuilt>();
    built->task = request.task;
    built->prepared = std::move(*p);
    built->profile = built->prepared->profile;
    out.push_back(std::unique_ptr<targets::Built>(std::move(built)));
  }
  return out;
}

std::vector<Result<Profile>> CodeTarget::Run(std::span<targets::Built* const> built, const OnResult& on_result) {
  std::vector<Result<Profile>> results;
  for (size_t i = 0; i < built.size(); ++i) {
    const auto& one = static_cast<const CodeBuilt&>(*built[i]);
    const suite::Task& task = *one.task;
    Prepared& p = *one.prepared;
    auto measured = [&]() -> Result<Profile> {
      if (!one.ok()) return one.profile;
      p.profile = one.profile;
      auto tested = Tested(task, p);
      if (!tested) return tested.error();
      if (!*tested) return p.profile;
      std::vector<double> costs, loads;
      int retries_left = options_.disturbed_retries;
      for (int r = 0; r <= task.code.repetitions;) {
        auto run = RunBench(task, p, FreshSeed());
        if (!run) return run.error();
        if (!*run) return p.profile;
        if (r == 0 || !Disturbed(**run, retries_left, p)) {
          if (r > 0) {  // the first run warms caches and is not counted
            costs.push_back((*run)->cost);
            loads.push_back((*run)->other_load);
          }
          ++r;
        }
      }
      Finish(task, p, costs, loads);
      return p.profile;
    }();
    results.push_back(measured);
    if (on_result) on_result(i, results.back());
  }
  return results;
}

Result<targets::PairedResult> CodeTarget::Compare(const targets::EvalRequest& a, const targets::EvalRequest& b) {
  const suite::Task& task = *a.task;
  auto pa = ReadyAndTested(a);
  if (!pa) return pa.error();
  auto pb = ReadyAndTested(b);
  if (!pb) return pb.error();
  targets::PairedResult result;
  std::vector<double> ca, cb, wa, wb, loads;
  bool ok = (*pa)->ok() && (*pb)->ok();
  int retries_left = options_.disturbed_retries;
  // Each is run once first, not counted; then in pairs, the order alternating;
  // a pair that other processes disturbed is run again (a few times at most).
  for (int r = 0; ok && r <= task.code.repetitions;) {
    Prepared* first = r % 2 == 0 ? pa->get() : pb->get();
    Prepared* second = first == pa->get() ? pb->get() : pa->get();
    BenchRun run[2];
    const uint64_t seed = FreshSeed();  // the pair's two runs see the same inputs
    for (int k = 0; k < 2 && ok; ++k) {
      auto c = RunBench(task, k == 0 ? *first : *second, seed);
      if (!c) return c.error();
      if (!*c)
        ok = false;
      else
        run[k] = **c;
    }
    if (!ok) break;
    const BenchRun& of_a = first == pa->get() ? run[0] : run[1];
    const BenchRun& of_b = first == pa->get() ? run[1] : run[0];
    // The same input: the same result. The parent's digest stands (it passed
    // this check against its own parent, back to the original code base).
    if (of_a.digest != of_b.digest) {
      Profile& pb_profile = (*pb)->profile;
      pb_profile.status = Verdict::kWrongAnswer;
      pb_profile.phase = "benchmark";
      pb_profile.message = fmt::format(
          "its benchmark's result digest was '{}' where its parent's was '{}' on the same input (seed {}): it "
          "computes something else under the benchmark than under the tests",
          of_b.digest.substr(0, 200), of_a.digest.substr(0, 200), seed);
      ok = false;
      break;
    }
    const BenchRun worse = run[0].other_load > run[1].other_load ? run[0] : run[1];
    if (r > 0 && Disturbed(worse, retries_left, *second)) {
      ++first->profile.disturbed_series;
      continue;
    }
    if (r++ == 0) continue;
    ca.push_back(of_a.cost);
    cb.push_back(of_b.cost);
    wa.push_back(of_a.wall);
    wb.push_back(of_b.wall);
    loads.push_back(worse.other_load);
  }
  if (ok) {
    Finish(task, **pa, ca, loads);
    Finish(task, **pb, cb, loads);
    result.speedup = eval::PairedComparison(ca, cb);
    result.speedup->other_load = Mean(loads);
    result.speedup->disturbed_series = (*pb)->profile.disturbed_series;
    result.speedup->disturbed = (*pa)->profile.disturbed;
    CheckAgainstOutsideTime(*result.speedup, eval::PairedComparison(wa, wb), (*pb)->profile);
  }
  result.a = (*pa)->profile;
  result.b = (*pb)->profile;
  return result;
}

targets::TargetKind Registration() {
  targets::TargetKind kind;
  kind.name = "code";
  kind.summary = "code bases: tasks of kind code, built, tested and timed with their own commands";
  kind.isolation = [] {
    return targets::TargetKind::Isolation{
        false,
        "build, test and benchmark commands confined by bubblewrap (the file system read-only but for the "
        "candidate's copy, no network) where it can; the benchmark's own figure is believed unless a claimed gain "
        "of 2x or more leaves the command less than 1.10x as fast from outside"};
  };
  kind.unavailable = [](const targets::TargetSettings&) {
    return FindProgram("sh").empty() ? std::string("no shell (sh) on $PATH to run the tasks' commands") : std::string();
  };
  kind.make = [](const targets::TargetSettings& settings) -> Result<std::unique_ptr<targets::Target>> {
    CodeTargetOptions options;
    options.keep_work = settings.keep_work;
    if (!settings.cache_dir.empty()) {
      options.work_dir = settings.cache_dir + "/work";
      options.bases_dir = settings.cache_dir + "/code";
    }
    return std::unique_ptr<targets::Target>(std::make_unique<CodeTarget>(options));
  };
  return kind;
}

}  // namespace accelopt::code
