// The conformance suite (issue 22), after ggml's backend tests: every
// registered target, on every task it supports at the test shape, against
// the verdict each case must get. Driven by the registry, so a target added
// there is picked up here without a change; driven by data
// (tests/conformance/cases.yaml, tests/bad_kernels/verdicts.yaml), so a case
// is a line, not code. Cases:
//   per task       baseline and the reference run as a kernel (ok), the
//                  task's vendor kernel where it has one (ok), a kernel that
//                  writes zeros (wrong_answer); for a code task, changes to
//                  its code base that break its tests or its build
//   per target     on one fixture task: a kernel that writes nothing, one
//                  that does not compile, one that crashes; two kernels side
//                  by side; every cheat class of tests/bad_kernels (written
//                  in C++: run on the targets whose kernels are C++)
// A row a target cannot run is skipped with the reason, and the summary
// printed at the end lists every row: verdict, failure or why it was skipped.

#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <tuple>
#include <vector>

#include "core/json_io.h"
#include "core/paths.h"
#include "core/profile.h"
#include "suite/task.h"
#include "targets/registry.h"
#include "targets/target.h"
#include "testing/temp_dir.h"

namespace accelopt {
namespace {
namespace fs = std::filesystem;

const std::string kRoot = ACCELOPT_SOURCE_DIR;
// The limit of each of a target's processes (a kernel's, an evaluator's
// answer): generous, for a loaded CI machine.
constexpr double kTimeoutSeconds = 30;
// The cheat rows run on a second instance of their target with this limit,
// which the endless ones wait out.
constexpr double kCheatTimeoutSeconds = 5;
constexpr size_t kBatch = 8;  // requests evaluated together

// What a row must get: one of `verdicts`; ok only with every timed call at
// least `min_latency_s` long (work hidden outside the timed window was caught).
struct Expectation {
  std::vector<Verdict> verdicts;
  double min_latency_s = 0;
};

enum class Scope { kTask, kTarget };  // a case of each task, or of the target (on its fixture task)

struct Row {
  std::string target, task, name;  // registered target, task, case
  Scope scope = Scope::kTask;
  const suite::Task* task_spec = nullptr;
  std::string shape = "test";
  targets::Candidate candidate;
  /// Side by side: `candidate` (kept as a) with this one (b), each with its own expectation.
  std::optional<targets::Candidate> beside;
  Expectation expected, expected_beside;
  bool expect_speedup = false;  ///< side by side: a speedup comes back
  std::string skip;             ///< why the target cannot run it ("" when it runs)
  std::string known_failure;    ///< the bug it shows (cases.yaml), "" when none
  std::string error;            ///< the row could not be made: it fails with this
  bool cheat = false;           ///< run with the cheat rows' shorter limit
  std::string Id() const { return target + "__" + (task.empty() ? "all" : task) + "__" + name; }
};

std::ostream& operator<<(std::ostream& os, const Row& row) { return os << row.Id(); }

std::string Identifier(std::string s) {
  for (char& c : s)
    if (!isalnum(static_cast<unsigned char>(c))) c = '_';
  return s;
}

Expectation Expect(Verdict v) { return {{v}, 0}; }

// ---- Case kernels, per kernel language -------------------------------------

// The elements of a tensor, as an expression a kernel in C, C++ or CUDA can use.
std::string Elements(const suite::Tensor& t) {
  std::string n;
  for (const auto& d : t.shape) n += (n.empty() ? "(" : " * (") + d.text() + ")";
  return n.empty() ? "1" : n;
}

// The kernels a language's case is written as: source for the task, or
// nothing when that language has none (the row is then skipped, saying so).
using Writer = std::function<std::optional<std::string>(const targets::Target&, const suite::Task&)>;
struct Language {
  Writer zeros, nothing, broken, crash, reference;
};

std::string CxxHead(const targets::Target& target, const suite::Task& task) {
  return "extern \"C\" void kernel(" + target.Signature(task) + ") {\n";
}

Language Cxx() {
  Language l;
  l.zeros = [](const targets::Target& target, const suite::Task& task) -> std::optional<std::string> {
    std::string s = CxxHead(target, task);
    for (const auto& o : task.outputs) s += "  for (long i = 0; i < " + Elements(o) + "; ++i) " + o.name + "[i] = 0;\n";
    return s + "}\n";
  };
  l.nothing = [](const targets::Target& target, const suite::Task& task) -> std::optional<std::string> {
    return CxxHead(target, task) + "}\n";
  };
  l.broken = [](const targets::Target& target, const suite::Task& task) -> std::optional<std::string> {
    return CxxHead(target, task) + "  this is not C++;\n}\n";
  };
  l.crash = [](const targets::Target& target, const suite::Task& task) -> std::optional<std::string> {
    return CxxHead(target, task) + "  __builtin_trap();\n}\n";
  };
  // reference.cpp computes each output in double: kept, then rounded to float.
  l.reference = [](const targets::Target& target, const suite::Task& task) -> std::optional<std::string> {
    auto reference = ReadFile(task.reference_path(".cpp"));
    if (!reference) return std::nullopt;
    std::string s = "#include <vector>\n" + *reference + "\n" + CxxHead(target, task), args;
    for (const auto& t : task.inputs) args += (args.empty() ? "" : ", ") + t.name;
    for (const auto& o : task.outputs) {
      s += "  std::vector<double> " + o.name + "_d(" + Elements(o) + ");\n";
      args += ", " + o.name + "_d.data()";
    }
    s += "  reference(" + args + ");\n";
    for (const auto& o : task.outputs)
      s += "  for (long i = 0; i < " + Elements(o) + "; ++i) " + o.name + "[i] = static_cast<float>(" + o.name +
           "_d[i]);\n";
    return s + "}\n";
  };
  return l;
}

Language Cuda() {
  Language l;
  l.zeros = [](const targets::Target& target, const suite::Task& task) -> std::optional<std::string> {
    std::string s =
        "#include <cuda_runtime.h>\n"
        "__global__ void zero(float* p, long n) {\n"
        "  const long i = blockIdx.x * static_cast<long>(blockDim.x) + threadIdx.x;\n"
        "  if (i < n) p[i] = 0.0f;\n"
        "}\n" +
        CxxHead(target, task);
    for (const auto& o : task.outputs)
      s += "  zero<<<(" + Elements(o) + " + 255) / 256, 256, 0, stream>>>(" + o.name + ", " + Elements(o) + ");\n";
    return s + "}\n";
  };
  l.nothing = [](const targets::Target& target, const suite::Task& task) -> std::optional<std::string> {
    return "#include <cuda_runtime.h>\n" + CxxHead(target, task) + "}\n";
  };
  l.broken = [](const targets::Target& target, const suite::Task& task) -> std::optional<std::string> {
    return "#include <cuda_runtime.h>\n" + CxxHead(target, task) + "  this is not CUDA;\n}\n";
  };
  l.crash = [](const targets::Target& target, const suite::Task& task) -> std::optional<std::string> {
    return "#include <cuda_runtime.h>\n__global__ void trap() { __trap(); }\n" + CxxHead(target, task) +
           "  trap<<<1, 1, 0, stream>>>();\n}\n";
  };
  return l;
}

// evaluators/python: `kernel(<inputs>, <outputs>)` over flat buffers.
Language Python() {
  Language l;
  l.zeros = [](const targets::Target&, const suite::Task& task) -> std::optional<std::string> {
    return "def kernel(*args):\n    for out in args[" + std::to_string(task.inputs.size()) +
           ":]:\n        for i in range(len(out)):\n            out[i] = 0.0\n";
  };
  l.nothing = [](const targets::Target&, const suite::Task&) -> std::optional<std::string> {
    return "def kernel(*args):\n    pass\n";
  };
  l.broken = [](const targets::Target&, const suite::Task&) -> std::optional<std::string> {
    return "def kernel(*args)\n    pass\n";
  };
  l.crash = [](const targets::Target&, const suite::Task&) -> std::optional<std::string> {
    return "def kernel(*args):\n    raise RuntimeError('crash')\n";
  };
  l.reference = [](const targets::Target&, const suite::Task& task) -> std::optional<std::string> {
    auto reference = ReadFile(task.reference_path(".py"));
    if (!reference) return std::nullopt;
    return *reference + "\n\ndef kernel(*args):\n    reference(*args)\n";
  };
  return l;
}

const std::map<std::string, Language>& Languages() {
  static const std::map<std::string, Language> languages = {{"c++", Cxx()}, {"cuda", Cuda()}, {"python", Python()}};
  return languages;
}

// ---- The data: tasks, targets, rows ----------------------------------------

Verdict VerdictNamed(const std::string& name) {
  auto v = VerdictFromName(name);
  if (!v) ADD_FAILURE() << "no verdict named '" << name << "'";
  return v.value_or(Verdict::kOk);
}

struct CodeChange {
  std::string name, file, search, replace;
  Verdict verdict = Verdict::kOk;
  std::string Answer() const {
    return "EDIT: " + file + "\n<<<<<<< SEARCH\n" + search + "\n=======\n" + replace + "\n>>>>>>> REPLACE\n";
  }
};

struct World {
  testing::TempDir scratch;
  std::deque<suite::Task> tasks;  // stable addresses: rows point at them
  std::map<std::string, std::unique_ptr<targets::Target>> targets;
  std::map<std::string, std::unique_ptr<targets::Target>> cheat_targets;  // made when first needed
  std::vector<Row> rows;
  std::string problem;  // the data could not be read: one failing row says so
};

targets::TargetSettings Settings(const World& world, double timeout = kTimeoutSeconds) {
  targets::TargetSettings s;
  s.seeds = 2;
  s.timeout = timeout;
  s.calibrate_if_missing = false;  // no scoring: verdicts are the point
  s.data_dir = world.scratch.path() + "/data";
  s.cache_dir = world.scratch.path() + "/cache";
  s.options["evaluator"] = "python3 " + kRoot + "/evaluators/python/evaluator.py";
  return s;
}

std::string ShapeFor(const suite::Task& task) { return task.shapes.count("test") ? "test" : "bench"; }

// The cheat classes and their verdicts (tests/bad_kernels/verdicts.yaml).
struct Cheats {
  std::string language, task;
  std::vector<YAML::Node> rows;
};

void AddCheatRows(World& world, const std::string& target_name, const targets::Target& target,
                  const suite::Task& fixture, const Cheats& cheats) {
  const std::string language = target.Describe().language;
  for (const YAML::Node& c : cheats.rows) {
    const std::string file = c["file"].as<std::string>();
    Row row{target_name, fixture.name, Identifier(file.substr(0, file.find('.'))), Scope::kTarget, &fixture};
    row.cheat = true;
    row.shape = c["shape"] ? c["shape"].as<std::string>() : "test";
    if (c["verdicts"])
      for (const auto& v : c["verdicts"]) row.expected.verdicts.push_back(VerdictNamed(v.as<std::string>()));
    else
      row.expected.verdicts = {VerdictNamed(c["verdict"].as<std::string>())};
    if (c["min_latency_s"]) row.expected.min_latency_s = c["min_latency_s"].as<double>();
    if (language != cheats.language)
      row.skip =
          "the cheat kernels are " + cheats.language + "; the " + target_name + " target's kernels are " + language;
    else if (fixture.name != cheats.task)
      row.skip = "the cheat kernels are written for the task " + cheats.task + ", which this target does not run";
    else if (c["series"])
      row.skip = "caught only over " + c["series"].as<std::string>() +
                 " timed series of 50 calls each, which targets::TargetSettings cannot ask for (bad_kernels_test "
                 "sets the cpu target's timing directly)";
    auto source = ReadFile(kRoot + "/tests/bad_kernels/" + file);
    if (!source) row.error = source.error().message;
    row.candidate = {source ? *source : "", file, {}};
    world.rows.push_back(std::move(row));
  }
}

// The rows of one target that is available here.
void AddTargetRows(World& world, const std::string& name, targets::Target& target, const YAML::Node& data,
                   const Cheats& cheats) {
  const std::string language = target.Describe().language;
  const auto found = Languages().find(language);
  const Language* lang = found == Languages().end() ? nullptr : &found->second;
  const std::string no_case = "the conformance suite has no such case kernel in " + language + " (" + name +
                              " target): add one to Languages() in tests/conformance_test.cc";
  const suite::Task* fixture = nullptr;
  for (const auto& wanted : data["fixtures"])
    for (const suite::Task& t : world.tasks)
      if (!fixture && t.name == wanted.as<std::string>() && target.Supports(t)) fixture = &t;

  auto written = [&](Row row, const Writer Language::*writer, Verdict verdict) {
    row.expected = Expect(verdict);
    std::optional<std::string> source =
        lang && (lang->*writer) ? (lang->*writer)(target, *row.task_spec) : std::nullopt;
    if (!source)
      row.skip = no_case;
    else
      row.candidate = {*source, row.name, {}};
    world.rows.push_back(std::move(row));
  };
  std::map<std::string, std::vector<CodeChange>> changes;
  for (const auto& entry : data["code_changes"])
    for (const auto& c : entry.second)
      changes[entry.first.as<std::string>()].push_back({c["case"].as<std::string>(), c["file"].as<std::string>(),
                                                        c["search"].as<std::string>(), c["replace"].as<std::string>(),
                                                        VerdictNamed(c["verdict"].as<std::string>())});

  for (const suite::Task& task : world.tasks) {
    if (!target.Supports(task)) continue;
    if (!fixture) fixture = &task;
    const Row base{name, task.name, "", Scope::kTask, &task, ShapeFor(task)};
    auto baseline = target.Baseline(task);
    Row row = base;
    row.name = "baseline";
    row.expected = Expect(Verdict::kOk);
    if (!baseline)  // Supports said it has one: the row fails
      row.error = "the target supports the task, but gives no baseline: " + baseline.error().message;
    else
      row.candidate = {*baseline, "baseline", {}};
    world.rows.push_back(row);
    if (task.kind == suite::TaskKind::kCode) {
      auto reader = target.AnswerReaderFor(task);
      for (const CodeChange& change : changes[task.name]) {
        Row r = base;
        r.name = change.name;
        r.expected = Expect(change.verdict);
        auto source = baseline && reader ? reader(change.Answer(), *baseline) : Result<std::string>(Error{"none"});
        if (!reader)
          r.skip = "the " + name + " target reads no edits to a code base";
        else if (!source)  // the data is out of date: the row fails
          r.error = "the change of cases.yaml does not apply: " + source.error().message;
        else
          r.candidate = {*source, change.name, {}};
        world.rows.push_back(std::move(r));
      }
      continue;
    }
    Row ref = base;
    ref.name = "reference";
    written(ref, &Language::reference, Verdict::kOk);
    const std::string vendor = task.dir + "/vendor" + target.Describe().file_extension;
    if (auto source = ReadFile(vendor); source && fs::exists(vendor)) {
      Row r = base;
      r.name = "vendor";
      r.expected = Expect(Verdict::kOk);
      // A C++ vendor kernel is built on OpenBLAS, as `accelopt bench` builds it.
      r.candidate = {*source, vendor,
                     language == "c++" ? std::vector<std::string>{"openblas"} : std::vector<std::string>{}};
      world.rows.push_back(std::move(r));
    }
    Row zeros = base;
    zeros.name = "zeros";
    written(zeros, &Language::zeros, Verdict::kWrongAnswer);
  }
  if (!fixture) return;

  const Row base{name, fixture->name, "", Scope::kTarget, fixture, ShapeFor(*fixture)};
  if (fixture->kind == suite::TaskKind::kKernel) {
    for (auto [case_name, writer, verdict] : {std::tuple{"writes_nothing", &Language::nothing, Verdict::kWrongAnswer},
                                              std::tuple{"does_not_compile", &Language::broken, Verdict::kCompileError},
                                              std::tuple{"crashes", &Language::crash, Verdict::kRuntimeError}}) {
      Row r = base;
      r.name = case_name;
      written(r, writer, verdict);
    }
  }
  // Side by side: the baseline with itself (a speedup), then with the wrong kernel (none).
  std::optional<targets::Candidate> baseline, wrong;
  Verdict wrong_verdict = Verdict::kWrongAnswer;
  for (const Row& r : world.rows)
    if (r.target == name && r.task == fixture->name && r.skip.empty() && r.error.empty()) {
      if (r.name == "baseline") baseline = r.candidate;
      if (r.name == "zeros" || r.name == "breaks_tests") {
        wrong = r.candidate;
        wrong_verdict = r.expected.verdicts[0];
      }
    }
  for (const bool with_wrong : {false, true}) {
    Row r = base;
    r.name = with_wrong ? "side_by_side_wrong" : "side_by_side";
    r.expected = r.expected_beside = Expect(Verdict::kOk);
    if (with_wrong) r.expected_beside = Expect(wrong_verdict);
    r.expect_speedup = !with_wrong;
    if (!target.ComparesSideBySide())
      r.skip = "the " + name + " target does not time two kernels side by side";
    else if (!baseline || (with_wrong && !wrong))
      r.skip = "no " + std::string(baseline ? "wrong kernel" : "baseline") + " for " + fixture->name;
    else {
      r.candidate = *baseline;
      r.beside = with_wrong ? *wrong : *baseline;
    }
    world.rows.push_back(std::move(r));
  }
  AddCheatRows(world, name, target, *fixture, cheats);
}

void Load(World& world) {
  YAML::Node data, table;
  try {
    data = YAML::LoadFile(kRoot + "/tests/conformance/cases.yaml");
    table = YAML::LoadFile(kRoot + "/" + data["cheats"]["table"].as<std::string>());
  } catch (const std::exception& e) {
    world.problem = std::string("tests/conformance/cases.yaml: ") + e.what();
    return;
  }
  auto suite = suite::LoadSuite(kRoot + "/suite");
  if (!suite) {
    world.problem = suite.error().message;
    return;
  }
  for (auto& t : *suite) world.tasks.push_back(std::move(t));
  for (const auto& dir : data["tasks"]) {
    auto task = suite::LoadTask(kRoot + "/" + dir.as<std::string>());
    if (!task) {
      world.problem = task.error().message;
      return;
    }
    world.tasks.push_back(std::move(*task));
  }
  Cheats cheats{data["cheats"]["language"].as<std::string>(), data["cheats"]["task"].as<std::string>(), {}};
  for (const auto& c : table) cheats.rows.push_back(c);

  const targets::TargetSettings settings = Settings(world);
  for (const targets::TargetKind& kind : targets::RegisteredTargets()) {
    Row whole{kind.name, "", "", Scope::kTarget};
    if (std::string why = targets::WhyUnavailable(kind, settings); !why.empty()) {
      whole.name = "unavailable";
      whole.skip = "the " + kind.name + " target is not available here: " + why;
      world.rows.push_back(std::move(whole));
      continue;
    }
    auto target = targets::MakeTarget(kind.name, settings);
    if (!target) {  // available, yet not made: a failure, not a skip
      whole.name = "make";
      whole.error = "available, yet not made: " + target.error().message;
      world.rows.push_back(std::move(whole));
      continue;
    }
    AddTargetRows(world, kind.name, **target, data, cheats);
    world.targets[kind.name] = std::move(*target);
  }
  // Slow rows run only where asked for; elsewhere they are skipped, saying so.
  std::set<std::string> slow_tasks, slow_cases;
  for (const auto& t : data["slow"]["tasks"]) slow_tasks.insert(t.as<std::string>());
  for (const auto& c : data["slow"]["cases"]) slow_cases.insert(c.as<std::string>());
  const char* all = std::getenv("ACCELOPT_CONFORMANCE_ALL");
  if (!all || !*all)
    for (Row& row : world.rows)
      if (row.skip.empty() && (slow_tasks.count(row.task) || slow_cases.count(row.name)))
        row.skip = "a slow row (cases.yaml, slow): run with ACCELOPT_CONFORMANCE_ALL=1";
  for (const auto& known : data["known_failures"])
    for (Row& row : world.rows)
      if (row.target + "/" + row.task + "/" + row.name == known.first.as<std::string>())
        row.known_failure = known.second.as<std::string>();
}

// Made when gtest asks for the rows (the targets are asked which tasks they
// support), kept until the summary is printed.
World& TheWorld() {
  static World world;
  static const bool loaded = [] {
    try {
      Load(world);
    } catch (const std::exception& e) {  // a field missing or of the wrong type
      world.problem = std::string("tests/conformance/cases.yaml or the cheat table: ") + e.what();
    }
    return true;
  }();
  (void)loaded;
  return world;
}

// The target instance that runs `row`; an Error when the cheat rows' one cannot be made.
Result<targets::Target*> TargetFor(const Row& row) {
  World& world = TheWorld();
  if (!row.cheat) return world.targets.at(row.target).get();
  auto& made = world.cheat_targets[row.target];
  if (!made) {
    auto target = targets::MakeTarget(row.target, Settings(world, kCheatTimeoutSeconds));
    if (!target) return Error{"the target for the cheat rows: " + target.error().message};
    made = std::move(*target);
  }
  return made.get();
}

std::vector<Row> Rows() {
  World& world = TheWorld();
  if (!world.problem.empty()) {
    Row broken{"data", "", "load"};
    broken.error = world.problem;
    return {broken};
  }
  return world.rows;
}

// ---- Running rows ----------------------------------------------------------

// The rows of one target, task and shape that this run selects are evaluated
// in batches (built in parallel, one draw of inputs and one reference run
// each), the first time one of them is asked for.
class Results {
 public:
  const Result<Profile>& For(const Row& row) {
    const std::string key = row.target + "/" + row.task + "/" + row.shape + (row.cheat ? "/cheat" : "");
    if (!done_.count(key)) RunBatch(row, key);
    return results_.at(row.Id());
  }

 private:
  static std::set<std::string> Selected() {
    std::set<std::string> ids;
    const auto* unit = ::testing::UnitTest::GetInstance();
    for (int i = 0; i < unit->total_test_suite_count(); ++i) {
      const auto* suite = unit->GetTestSuite(i);
      for (int j = 0; j < suite->total_test_count(); ++j) {
        const auto* info = suite->GetTestInfo(j);
        const std::string name = info->name();
        if (info->should_run() && name.find('/') != std::string::npos) ids.insert(name.substr(name.find('/') + 1));
      }
    }
    return ids;
  }

  void RunBatch(const Row& first, const std::string& key) {
    done_.insert(key);
    const std::set<std::string> selected = Selected();
    std::vector<const Row*> rows;
    std::vector<targets::EvalRequest> requests;
    for (const Row& r : TheWorld().rows)
      if (r.target == first.target && r.task == first.task && r.shape == first.shape && r.cheat == first.cheat &&
          r.skip.empty() && r.error.empty() && !r.beside && (r.Id() == first.Id() || selected.count(r.Id()))) {
        rows.push_back(&r);
        requests.push_back({r.task_spec, r.shape, r.candidate});
      }
    // In batches of a few: a target may hold its device for a whole batch,
    // and other tests (run beside this one) wait for it.
    auto target = TargetFor(first);
    for (size_t at = 0; at < rows.size(); at += kBatch) {
      const size_t n = std::min(kBatch, rows.size() - at);
      std::vector<Result<Profile>> results(n, Error{target ? "" : target.error().message});
      if (target) results = (*target)->Evaluate(std::span(requests).subspan(at, n));
      for (size_t i = 0; i < n; ++i) results_.emplace(rows[at + i]->Id(), std::move(results[i]));
    }
  }

  std::set<std::string> done_;
  std::map<std::string, Result<Profile>> results_;
};

Results& TheResults() {
  static Results results;
  return results;
}

// What each row came to, for the summary.
struct Outcome {
  std::string cell;  // the verdict got, "FAIL ...", "skip", "known bug"
  std::string why;   // skipped: the reason
};
std::map<std::string, Outcome>& Outcomes() {
  static std::map<std::string, Outcome> outcomes;
  return outcomes;
}

std::string Names(const std::vector<Verdict>& verdicts) {
  std::string s;
  for (Verdict v : verdicts) s += (s.empty() ? "" : " or ") + std::string(VerdictName(v));
  return s;
}

// "" when `p` is what `e` asks; else what is wrong.
std::string Mismatch(const Profile& p, const Expectation& e) {
  bool verdict_ok = false;
  for (Verdict v : e.verdicts) verdict_ok |= p.status == v;
  if (!verdict_ok) return std::string("got ") + VerdictName(p.status) + ", expected " + Names(e.verdicts);
  if (p.status == Verdict::kOk && e.min_latency_s > 0 && (!p.latency || p.latency->min_s < e.min_latency_s))
    return "ok with a timed call shorter than " + std::to_string(e.min_latency_s) + " s: work went untimed";
  return "";
}

class Conformance : public ::testing::TestWithParam<Row> {};

TEST_P(Conformance, GivesTheExpectedVerdict) {
  const Row& row = GetParam();
  Outcome& outcome = Outcomes()[row.Id()];
  if (!row.error.empty()) {
    outcome.cell = "FAIL";
    FAIL() << row.error;
  }
  if (!row.skip.empty()) {
    outcome = {"skip", row.skip};
    GTEST_SKIP() << row.skip;
  }
  std::string wrong, got;
  if (row.beside) {
    auto target = TargetFor(row);
    if (!target) {
      outcome.cell = "FAIL error";
      FAIL() << target.error().message;
    }
    auto paired =
        (*target)->Compare({row.task_spec, row.shape, row.candidate}, {row.task_spec, row.shape, *row.beside});
    if (!paired) {
      outcome.cell = "FAIL error";
      FAIL() << "engine error: " << paired.error().message;
    }
    got = std::string(VerdictName(paired->a.status)) + "+" + VerdictName(paired->b.status);
    wrong = Mismatch(paired->a, row.expected);
    if (wrong.empty()) wrong = Mismatch(paired->b, row.expected_beside);
    if (wrong.empty() && row.expect_speedup != paired->speedup.has_value())
      wrong = row.expect_speedup ? "no speedup came back" : "a speedup came back with a failing side";
    if (!wrong.empty()) wrong += " (" + paired->a.message + " | " + paired->b.message + ")";
  } else {
    const Result<Profile>& profile = TheResults().For(row);
    if (!profile) {
      outcome.cell = "FAIL error";
      FAIL() << "engine error, not a verdict: " << profile.error().message;
    }
    got = VerdictName(profile->status);
    wrong = Mismatch(*profile, row.expected);
    if (!wrong.empty()) wrong += ": " + profile->message + "\n" + profile->run_log.substr(0, 2000);
  }
  if (!row.known_failure.empty()) {
    if (wrong.empty()) {
      outcome.cell = "FAIL fixed";
      FAIL() << "listed as a known failure in cases.yaml, but passes now: remove the line";
    }
    outcome = {"known bug", "known failure: " + row.known_failure};
    GTEST_SKIP() << "known failure: " << row.known_failure << "; " << wrong;
  }
  outcome.cell = wrong.empty() ? got : "FAIL " + got;
  EXPECT_TRUE(wrong.empty()) << row.Id() << ": " << wrong;
}

INSTANTIATE_TEST_SUITE_P(Registry, Conformance, ::testing::ValuesIn(Rows()),
                         [](const ::testing::TestParamInfo<Row>& info) { return Identifier(info.param.Id()); });

// Every kernel of tests/bad_kernels has its verdict in the table: a cheat
// class added there is never left out of the conformance suite.
TEST(ConformanceData, EveryBadKernelHasAVerdict) {
  std::set<std::string> listed;
  for (const auto& c : YAML::LoadFile(kRoot + "/tests/bad_kernels/verdicts.yaml"))
    listed.insert(c["file"].as<std::string>());
  for (const auto& entry : fs::directory_iterator(kRoot + "/tests/bad_kernels")) {
    if (entry.path().extension() != ".cpp") continue;
    EXPECT_TRUE(listed.count(entry.path().filename().string())) << entry.path().filename() << " has no verdict";
  }
}

// ---- The summary -----------------------------------------------------------

std::string Pad(std::string s, size_t width) {
  if (s.size() > width) s = s.substr(0, width - 1) + "~";
  return s + std::string(width - s.size() + 1, ' ');
}

class Summary : public ::testing::Environment {
 public:
  void TearDown() override {
    const World& world = TheWorld();
    std::vector<std::string> targets;
    for (const Row& r : world.rows)
      if (std::find(targets.begin(), targets.end(), r.target) == targets.end()) targets.push_back(r.target);
    auto cell = [](const Row& r) {
      auto it = Outcomes().find(r.Id());
      return it == Outcomes().end() ? std::string("not run") : it->second.cell;
    };
    std::string out =
        "\n=== Conformance summary: target x case -> verdict (FAIL: not the expected one; skip: "
        "see the reasons below) ===\n";
    // Per task: a row per target and task, a column per case.
    std::vector<std::string> task_cases;
    for (const Row& r : world.rows)
      if (r.scope == Scope::kTask && std::find(task_cases.begin(), task_cases.end(), r.name) == task_cases.end())
        task_cases.push_back(r.name);
    out += "\n" + Pad("target", 9) + Pad("task", 34);
    for (const auto& c : task_cases) out += Pad(c, 13);
    out += "\n";
    std::map<std::string, std::map<std::string, std::string>> by_task;  // target/task -> case -> cell
    std::vector<std::string> order;
    for (const Row& r : world.rows) {
      if (r.scope != Scope::kTask) continue;
      const std::string key = r.target + "/" + r.task;
      if (!by_task.count(key)) order.push_back(key);
      by_task[key][r.name] = cell(r);
    }
    for (const auto& key : order) {
      out += Pad(key.substr(0, key.find('/')), 9) + Pad(key.substr(key.find('/') + 1), 34);
      for (const auto& c : task_cases) out += Pad(by_task[key].count(c) ? by_task[key][c] : "-", 13);
      out += "\n";
    }
    // Per target, on its fixture task: a row per case, a column per target.
    std::vector<std::string> target_cases;
    std::map<std::string, std::map<std::string, std::string>> by_case;  // case -> target -> cell
    std::map<std::string, std::string> fixture;
    for (const Row& r : world.rows) {
      if (r.scope != Scope::kTarget) continue;
      if (!by_case.count(r.name)) target_cases.push_back(r.name);
      by_case[r.name][r.target] = cell(r);
      fixture[r.target] = r.task.empty() ? "-" : r.task;
    }
    out += "\n" + Pad("case", 28);
    for (const auto& t : targets) out += Pad(t + " (" + fixture[t] + ")", 20);
    out += "\n";
    for (const auto& c : target_cases) {
      out += Pad(c, 28);
      for (const auto& t : targets) out += Pad(by_case[c].count(t) ? by_case[c][t] : "-", 20);
      out += "\n";
    }
    // Why rows were skipped.
    std::map<std::string, std::vector<std::string>> skipped;
    size_t passed = 0, failed = 0, skips = 0;
    for (const Row& r : world.rows) {
      auto it = Outcomes().find(r.Id());
      if (it == Outcomes().end()) continue;
      if (!it->second.why.empty()) {
        skipped[it->second.why].push_back(r.Id());
        ++skips;
      } else if (it->second.cell.rfind("FAIL", 0) == 0) {
        ++failed;
      } else {
        ++passed;
      }
    }
    out += "\nSkipped rows, by reason:\n";
    for (const auto& [why, ids] : skipped) {
      out += "- " + why + " (" + std::to_string(ids.size()) + "):";
      for (const auto& id : ids) out += " " + id;
      out += "\n";
    }
    out += "\n" + std::to_string(passed) + " rows as expected, " + std::to_string(failed) + " failed, " +
           std::to_string(skips) + " skipped (" + std::to_string(world.rows.size()) + " rows)\n";
    std::fputs(out.c_str(), stdout);
    // Gone before the process exits: what the targets hold (scratch folders,
    // evaluator processes) is cleaned up while the library's statics live.
    TheWorld().targets.clear();
    TheWorld().cheat_targets.clear();
  }
};

[[maybe_unused]] const auto* const kSummary = ::testing::AddGlobalTestEnvironment(new Summary);

}  // namespace
}  // namespace accelopt
