// `accelopt export fib`: a run's best kernels as FlashInfer-Bench Solution and
// Trace JSON. The files are read back and held to the schema's rules
// (docs/fib-export.md names the version followed): required fields, the
// status table for correctness and performance, the dataset's layout.

#include "run/fib_export.h"

#include <fmt/core.h>
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "llm/config.h"
#include "run/optimize.h"
#include "testing/cpu_test_target.h"
#include "testing/run_command.h"
#include "testing/temp_dir.h"

namespace accelopt {
namespace {

namespace fs = std::filesystem;

std::string Line(const Json& j) { return j.dump() + "\n"; }
std::string Fenced(const std::string& code) { return "Here it is.\n```cpp\n" + code + "```\n"; }

const char* kUnrolled =
    "extern \"C\" void kernel(const float* x, float* out) {\n"
    "  long i = 0;\n  for (; i + 4 <= M * N; i += 4) {\n"
    "    out[i] = 2.0f * x[i]; out[i+1] = 2.0f * x[i+1]; out[i+2] = 2.0f * x[i+2]; out[i+3] = 2.0f * x[i+3];\n"
    "  }\n  for (; i < M * N; ++i) out[i] = 2.0f * x[i];\n}\n";
const char* kWrong =
    "extern \"C\" void kernel(const float* x, float* out) {\n  for (long i = 0; i < M * N; ++i) out[i] = x[i];\n}\n";

// What FlashInfer-Bench's models (flashinfer_bench/data/trace.py, workload.py)
// would refuse in a trace; "" when nothing.
std::string TraceProblem(const Json& t) {
  for (const char* key : {"definition", "workload", "solution", "evaluation"})
    if (!t.contains(key)) return std::string("missing ") + key;
  if (!t["definition"].is_string() || t["definition"].get<std::string>().empty()) return "definition";
  const Json& w = t["workload"];
  if (!w["uuid"].is_string() || w["uuid"].get<std::string>().empty()) return "workload.uuid";
  if (!w["axes"].is_object()) return "workload.axes";
  for (const auto& [axis, value] : w["axes"].items())
    if (!value.is_number_integer() || value.get<long>() < 0) return "workload.axes." + axis;
  if (!w["inputs"].is_object()) return "workload.inputs";
  for (const auto& [name, input] : w["inputs"].items()) {
    const std::string type = input.value("type", "");
    if (type == "scalar" ? !input.contains("value") : type != "random" && type != "safetensors")
      return "workload.inputs." + name;
  }
  const Json& e = t["evaluation"];
  static const std::set<std::string> statuses = {"PASSED",          "INCORRECT_SHAPE", "INCORRECT_NUMERICAL",
                                                 "INCORRECT_DTYPE", "RUNTIME_ERROR",   "COMPILE_ERROR",
                                                 "TIMEOUT"};
  const std::string status = e.value("status", "");
  if (!statuses.count(status)) return "evaluation.status " + status;
  if (!e["environment"]["hardware"].is_string() || e["environment"]["hardware"].get<std::string>().empty())
    return "evaluation.environment.hardware";
  if (!e["environment"]["libs"].is_object()) return "evaluation.environment.libs";
  if (!e["timestamp"].is_string() || e["timestamp"].get<std::string>().empty()) return "evaluation.timestamp";
  if (!e["log"].is_string()) return "evaluation.log";
  const bool correctness = status == "PASSED" || status == "INCORRECT_NUMERICAL", performance = status == "PASSED";
  if (e.contains("correctness") != correctness) return "correctness present/absent for " + status;
  if (e.contains("performance") != performance) return "performance present/absent for " + status;
  if (correctness)
    for (const char* key : {"max_relative_error", "max_absolute_error"})
      if (!e["correctness"][key].is_number() || e["correctness"][key].get<double>() < 0)
        return std::string("correctness.") + key;
  if (performance)
    for (const char* key : {"latency_ms", "reference_latency_ms", "speedup_factor"})
      if (!e["performance"][key].is_number() || e["performance"][key].get<double>() < 0)
        return std::string("performance.") + key;
  return "";
}

// What the Solution model (docs/flashinfer-trace/solution.mdx) would refuse; "" when nothing.
std::string SolutionProblem(const Json& s) {
  for (const char* key : {"name", "definition", "author"})
    if (!s[key].is_string() || s[key].get<std::string>().empty()) return key;
  const Json& spec = s["spec"];
  static const std::set<std::string> languages = {"python", "triton", "cpp", "cuda", "tilelang"};
  if (!languages.count(spec.value("language", ""))) return "spec.language";
  if (!spec["target_hardware"].is_array() || spec["target_hardware"].empty()) return "spec.target_hardware";
  const std::string entry = spec.value("entry_point", "");
  if (entry.find("::") == std::string::npos || entry.find("::") != entry.rfind("::")) return "spec.entry_point";
  if (!s["sources"].is_array() || s["sources"].empty()) return "sources";
  std::set<std::string> paths;
  for (const Json& f : s["sources"]) {
    const std::string path = f.value("path", "");
    if (path.empty() || path[0] == '/' || path.find("..") != std::string::npos || !f["content"].is_string())
      return "sources[].path " + path;
    if (!paths.insert(path).second) return "duplicate source " + path;
  }
  if (!paths.count(entry.substr(0, entry.find("::")))) return "the entry point's file is not a source";
  return "";
}

std::vector<Json> ReadLines(const std::string& path) {
  std::ifstream in(path);
  std::vector<Json> out;
  for (std::string line; std::getline(in, line);)
    if (!line.empty()) out.push_back(Json::parse(line));
  return out;
}

Json ReadJson(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return Json::parse(s.str());
}

Profile OkProfile(double median_s, double max_abs = 1e-7) {
  Profile p;
  p.task = "scale";
  p.shape = "test";
  p.target = "cpu";
  p.tolerance = 2e-5;
  p.errors = ErrorStats{};
  p.errors->rel_l2 = 3e-8;
  p.errors->max_abs = max_abs;
  p.errors->elements = 231;
  p.latency = LatencyStats{};
  p.latency->median_s = median_s;
  p.latency->calls = 10;
  return p;
}

class FibExport : public ::testing::Test {
 protected:
  void SetUp() override {
    suite_ = dir_.path() + "/suite";
    const std::string fixture = std::string(ACCELOPT_SOURCE_DIR) + "/tests/fixtures/scale";
    // `scale` names a definition; `plain` is the same task without one.
    // `broken` never had an ok kernel.
    for (const char* name : {"scale", "plain", "broken"}) {
      fs::create_directories(suite_ + "/" + name);
      for (const char* file : {"baseline.cpp", "reference.cpp"})
        fs::copy_file(fixture + "/" + file, suite_ + "/" + name + "/" + file);
      std::string yaml = *ReadFile(fixture + "/task.yaml");
      yaml.replace(yaml.find("name: scale"), 11, std::string("name: ") + name);
      if (std::string(name) == "scale") yaml += "fib_definition: scale_m_n_f32\nfamily: elementwise\n";
      std::ofstream(suite_ + "/" + name + "/task.yaml") << yaml;
    }
    auto tasks = suite::LoadSuite(suite_);
    ASSERT_TRUE(tasks.ok()) << tasks.error().message;
    tasks_ = *tasks;
    auto db = store::OpenSqliteStore({dir_.path() + "/accelopt.db"});
    ASSERT_TRUE(db.ok()) << db.error().message;
    db_ = std::move(*db);
  }

  // A run through the engine: scripted plans, the cpu target, the store.
  int64_t EngineRun() {
    const std::string recording = dir_.path() + "/recording.jsonl";
    std::ofstream(recording) << Line({{"role", "planner"},
                                      {"match", "Task: scale"},
                                      {"response", "PLAN: Unroll by four\nFour outputs per step."}})
                             << Line({{"role", "planner"},
                                      {"match", "Task: scale"},
                                      {"response", "PLAN: Copy the input\nSkip the multiply."}})
                             << Line({{"role", "executor"},
                                      {"match", "Plan: Unroll by four"},
                                      {"response", Fenced(kUnrolled)},
                                      {"repeat", true}})
                             << Line({{"role", "executor"},
                                      {"match", "Plan: Copy the input"},
                                      {"response", Fenced(kWrong)},
                                      {"repeat", true}})
                             << Line({{"role", "fixer"}, {"response", Fenced(kUnrolled)}, {"repeat", true}})
                             << Line({{"role", "summarizer"}, {"response", "no optimization found"}, {"repeat", true}});
    llm::LlmConfig config;
    config.backends["rec"] = llm::BackendConfig{"scripted"};
    config.backends["rec"].scripted.path = recording;
    config.roles["default"] = llm::RoleSettings{"rec"};
    auto client = llm::BuildLlmClient(config);
    EXPECT_TRUE(client.ok()) << client.error().message;
    auto options = testing::TestTargetOptions(scratch_);
    options.timing.min_calls = 3;
    auto target = cpu::MakeCpuTarget(options);
    auto run = db_->CreateRun({{"suite", suite_}});
    EXPECT_TRUE(run.ok());
    run::TaskSettings s;
    s.search.iterations = 1;
    s.search.plans = 2;
    s.search.beam = 1;
    s.search.samples = 1;
    s.search.fix_rounds = 0;
    s.search.llm_parallelism = 1;
    s.search.proposals = search::ProposalMode::kSequential;
    s.memory_name = "test-memory";
    s.shape = "test";
    s.prompts_dir = std::string(ACCELOPT_SOURCE_DIR) + "/prompts/cpu";
    ::testing::internal::CaptureStderr();
    auto result = run::OptimizeTask(s, Task("scale"), *run, *db_, **client, *target);
    ::testing::internal::GetCapturedStderr();
    EXPECT_TRUE(result.ok()) << result.error().message;
    return *run;
  }

  // A run written straight into the store: the figures are known exactly.
  int64_t CraftedRun() {
    auto run = db_->CreateRun({{"suite", suite_}, {"hardware", {{"machine", {{"cpu_model", "Test CPU 9000"}}}}}});
    EXPECT_TRUE(run.ok());
    // A child of `parent`, timed against it side by side at `vs` (0: not compared).
    auto add = [&](const std::string& task, int iteration, const std::string& plan, const std::string& code,
                   Profile p, int64_t parent = 0, double vs = 0) {
      Candidate c;
      c.iteration = iteration;
      c.parent_id = parent;
      c.plan = plan;
      c.code = code;
      p.task = task;
      c.profile = p;
      auto id = db_->AddCandidate({*run, task, c});
      EXPECT_TRUE(id.ok());
      if (vs > 0) EXPECT_TRUE(db_->SetVsParent(*id, PairedSpeedup{vs, vs * 0.95, vs * 1.05, 40}).ok());
      return *id;
    };
    Profile wrong = OkProfile(0);
    wrong.status = Verdict::kWrongAnswer;
    wrong.latency.reset();
    wrong.errors->rel_l2 = 0.5;
    baseline_ = add("scale", 0, "", "// baseline\n", OkProfile(2e-3));
    add("scale", 1, "PLAN: Slower\n", "// slower\n", OkProfile(1.5e-3), baseline_, 1.3);
    best_ = add("scale", 1, "Unroll by four\nFour outputs per step.", "// fastest\n", OkProfile(1e-3, 2e-7), baseline_,
                2.0);
    // The lowest median, but slower than its parent side by side: never the best.
    add("scale", 1, "PLAN: Fast alone\n", "// fast alone\n", OkProfile(0.5e-3), baseline_, 0.9);
    add("scale", 1, "Copy\n", "// wrong\n", wrong);
    add("plain", 0, "", "// plain baseline\n", OkProfile(4e-3));
    add("gone", 0, "", "// a task no longer in the suite\n", OkProfile(1e-3));
    Profile failed = OkProfile(0);
    failed.status = Verdict::kCompileError;
    failed.latency.reset();
    failed.errors.reset();
    add("broken", 0, "", "// does not build\n", failed);
    return *run;
  }

  const suite::Task& Task(const std::string& name) const {
    for (const auto& t : tasks_)
      if (t.name == name) return t;
    ADD_FAILURE() << "no task " << name;
    return tasks_[0];
  }

  testing::TempDir dir_, scratch_;
  std::string suite_;
  std::vector<suite::Task> tasks_;
  std::unique_ptr<store::Store> db_;
  int64_t baseline_ = 0, best_ = 0;
};

TEST_F(FibExport, ARunThroughTheEngineExportsItsBestKernel) {
  const int64_t run = EngineRun();
  auto candidates = db_->ListCandidates(run, "scale");
  ASSERT_TRUE(candidates.ok());
  // What the store says: the baseline, the best by the side-by-side evidence
  // (never merely the lowest median), and a wrong one that is not exported.
  const Candidate* baseline = nullptr;
  std::vector<const Candidate*> all;
  bool some_wrong = false;
  for (const auto& s : *candidates) {
    const Candidate& c = s.candidate;
    if (c.iteration == 0) baseline = &c;
    all.push_back(&c);
    some_wrong = some_wrong || c.profile.status == Verdict::kWrongAnswer;
  }
  const BestCandidate chosen = BestByEvidence(all);
  const Candidate* best = chosen.candidate;
  ASSERT_TRUE(baseline && best);
  EXPECT_TRUE(some_wrong);

  const std::string out = dir_.path() + "/fib";
  auto report = run::ExportFib(*db_, tasks_, {run, out, "accelopt", "9.9.9"});
  ASSERT_TRUE(report.ok()) << report.error().message;
  ASSERT_EQ(report->tasks.size(), 1u);
  const run::FibTaskExport& t = report->tasks[0];
  EXPECT_EQ(t.definition, "scale_m_n_f32");
  EXPECT_FALSE(t.definition_is_task_name);
  EXPECT_EQ(t.baseline_id, baseline->id);
  EXPECT_EQ(t.best_id, best->id);
  EXPECT_DOUBLE_EQ(t.speedup, chosen.evidence.estimate);

  const std::string solutions = out + "/solutions/accelopt/elementwise/scale_m_n_f32/";
  const Json solution = ReadJson(solutions + fmt::format("accelopt-scale-run{}-c{}.json", run, best->id));
  EXPECT_EQ(SolutionProblem(solution), "");
  EXPECT_EQ(solution["definition"], "scale_m_n_f32");
  EXPECT_EQ(solution["spec"]["language"], "cpp");
  EXPECT_EQ(solution["spec"]["entry_point"], "kernel.cpp::kernel");
  EXPECT_EQ(solution["sources"][0]["content"], best->code);
  EXPECT_NE(solution["sources"][1]["content"].get<std::string>().find("constexpr long M = 7;"), std::string::npos);
  if (best->id != baseline->id) {
    EXPECT_EQ(solution["description"].get<std::string>().rfind(best->plan.substr(0, best->plan.find('\n')), 0), 0u)
        << solution["description"];
  }

  const std::vector<Json> traces = ReadLines(out + "/traces/accelopt/elementwise/scale_m_n_f32.jsonl");
  ASSERT_EQ(traces.size(), best->id == baseline->id ? 1u : 2u);
  for (const Json& trace : traces) {
    EXPECT_EQ(TraceProblem(trace), "") << trace.dump(2);
    EXPECT_EQ(trace["evaluation"]["status"], "PASSED");
    EXPECT_EQ(trace["workload"]["axes"], Json({{"M", 7}, {"N", 33}}));
    EXPECT_EQ(trace["workload"]["inputs"], Json({{"x", {{"type", "random"}}}}));
    EXPECT_EQ(trace["workload"]["uuid"], traces[0]["workload"]["uuid"]);
    EXPECT_EQ(trace["evaluation"]["environment"]["libs"]["accelopt"], "9.9.9");
  }
  const Json& last = traces.back();
  EXPECT_EQ(last["solution"], fmt::format("accelopt-scale-run{}-c{}", run, best->id));
  const Json& performance = last["evaluation"]["performance"];
  EXPECT_DOUBLE_EQ(performance["latency_ms"].get<double>(), 1e3 * best->latency());
  EXPECT_DOUBLE_EQ(performance["reference_latency_ms"].get<double>(), 1e3 * baseline->latency());
  EXPECT_NEAR(performance["speedup_factor"].get<double>(), baseline->latency() / best->latency(), 1e-12);
  EXPECT_DOUBLE_EQ(last["evaluation"]["correctness"]["max_absolute_error"].get<double>(),
                   best->profile.errors->max_abs);
  EXPECT_DOUBLE_EQ(traces[0]["evaluation"]["performance"]["speedup_factor"].get<double>(), 1.0);

  // Exporting again replaces the run's traces instead of adding them twice.
  ASSERT_TRUE(run::ExportFib(*db_, tasks_, {run, out, "accelopt", "9.9.9"}).ok());
  EXPECT_EQ(ReadLines(out + "/traces/accelopt/elementwise/scale_m_n_f32.jsonl").size(), traces.size());
}

TEST_F(FibExport, StatusesFollowTheSchemaTable) {
  const std::vector<std::pair<Verdict, std::string>> table = {{Verdict::kOk, "PASSED"},
                                                              {Verdict::kWrongAnswer, "INCORRECT_NUMERICAL"},
                                                              {Verdict::kCompileError, "COMPILE_ERROR"},
                                                              {Verdict::kTimeout, "TIMEOUT"},
                                                              {Verdict::kRuntimeError, "RUNTIME_ERROR"},
                                                              {Verdict::kResourceLimit, "RUNTIME_ERROR"},
                                                              {Verdict::kSuspect, "RUNTIME_ERROR"},
                                                              {Verdict::kForbidden, "RUNTIME_ERROR"}};
  auto bound = suite::Bind(Task("scale"), "bench");
  ASSERT_TRUE(bound.ok());
  for (const auto& [verdict, status] : table) {
    Candidate c;
    c.profile = OkProfile(1e-3);
    c.profile.status = verdict;
    c.profile.message = "why it is what it is";
    if (verdict != Verdict::kOk) c.profile.latency.reset();
    run::FibTraceContext context{"scale_m_n_f32",
                                 "s",
                                 run::FibWorkloadJson(*bound),
                                 2e-3,
                                 "hw",
                                 Json::object(),
                                 "2026-01-01T00:00:00Z",
                                 "accelopt run 1, candidate 1"};
    const Json trace = run::FibTraceJson(c, context);
    EXPECT_EQ(trace["evaluation"]["status"], status) << VerdictName(verdict);
    EXPECT_EQ(TraceProblem(trace), "") << VerdictName(verdict) << "\n" << trace.dump(2);
    // The log names accelopt's own verdict, which FlashInfer-Bench's status may not.
    EXPECT_NE(trace["evaluation"]["log"].get<std::string>().find(std::string("verdict ") + VerdictName(verdict)),
              std::string::npos);
  }
  // The workload's identity depends on the task, the shape and its parameters only.
  EXPECT_EQ(run::FibWorkloadUuid(Task("scale"), "bench", bound->params),
            run::FibWorkloadUuid(Task("scale"), "bench", bound->params));
  EXPECT_NE(run::FibWorkloadUuid(Task("scale"), "bench", bound->params),
            run::FibWorkloadUuid(Task("scale"), "test", suite::Bind(Task("scale"), "test")->params));
  EXPECT_EQ(run::FibWorkloadUuid(Task("scale"), "bench", bound->params)[14], '8');  // version 8
  EXPECT_EQ(run::FibLanguageFor("triton")->language, "triton");
  EXPECT_EQ(run::FibLanguageFor("cuda")->language, "cuda");
  EXPECT_EQ(run::FibLanguageFor("cpu")->language, "cpp");
  EXPECT_FALSE(run::FibLanguageFor("nki").has_value());
}

TEST_F(FibExport, ChoosesTheBestBySideBySideEvidenceAndSaysWhatItSkips) {
  const int64_t run = CraftedRun();
  const std::string out = dir_.path() + "/fib";
  // A trace of another solution already there is kept.
  fs::create_directories(out + "/traces/accelopt/elementwise");
  std::ofstream(out + "/traces/accelopt/elementwise/scale_m_n_f32.jsonl") << R"({"solution": "someone-else"})"
                                                                          << "\n";
  auto report = run::ExportFib(*db_, tasks_, {run, out, "accelopt", ""});
  ASSERT_TRUE(report.ok()) << report.error().message;
  ASSERT_EQ(report->tasks.size(), 2u);
  ASSERT_EQ(report->skipped.size(), 2u);
  EXPECT_EQ(report->skipped[0].rfind("gone: not in the suite", 0), 0u) << report->skipped[0];
  EXPECT_EQ(report->skipped[1], "broken: no ok kernel");

  const run::FibTaskExport& scale = report->tasks[0];
  EXPECT_EQ(scale.best_id, best_);
  EXPECT_EQ(scale.baseline_id, baseline_);
  EXPECT_DOUBLE_EQ(scale.speedup, 2.0);
  const std::vector<Json> traces = ReadLines(out + "/traces/accelopt/elementwise/scale_m_n_f32.jsonl");
  ASSERT_EQ(traces.size(), 3u);
  EXPECT_EQ(traces[0]["solution"], "someone-else");
  const Json& best = traces[2]["evaluation"];
  EXPECT_EQ(TraceProblem(traces[2]), "");
  EXPECT_DOUBLE_EQ(best["performance"]["latency_ms"].get<double>(), 1.0);
  EXPECT_DOUBLE_EQ(best["performance"]["reference_latency_ms"].get<double>(), 2.0);
  EXPECT_DOUBLE_EQ(best["performance"]["speedup_factor"].get<double>(), 2.0);
  EXPECT_DOUBLE_EQ(best["correctness"]["max_absolute_error"].get<double>(), 2e-7);
  EXPECT_DOUBLE_EQ(best["correctness"]["max_relative_error"].get<double>(), 3e-8);
  EXPECT_EQ(best["environment"]["hardware"], "Test CPU 9000");
  EXPECT_EQ(best["environment"]["libs"], Json::object());
  const Json solution = ReadJson(out + "/" + scale.files[1]);
  EXPECT_EQ(solution["sources"][0]["content"], "// fastest\n");
  EXPECT_EQ(solution["spec"]["target_hardware"], Json::array({"Test CPU 9000"}));
  EXPECT_EQ(solution["description"].get<std::string>().rfind("Unroll by four (accelopt run", 0), 0u);

  // A task without a definition is filed under its own name; its best is its baseline.
  const run::FibTaskExport& plain = report->tasks[1];
  EXPECT_EQ(plain.definition, "plain");
  EXPECT_TRUE(plain.definition_is_task_name);
  EXPECT_EQ(plain.best_id, plain.baseline_id);
  EXPECT_EQ(plain.files.size(), 2u);  // one solution, one traces file
  EXPECT_EQ(ReadLines(out + "/traces/accelopt/uncategorized/plain.jsonl").size(), 1u);
}

TEST_F(FibExport, ErrorsNameWhatAndWhere) {
  auto none = run::ExportFib(*db_, tasks_, {42, dir_.path() + "/fib", "accelopt", ""});
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.error().message, "no run 42");

  auto slash = run::ExportFib(*db_, tasks_, {42, dir_.path() + "/fib", "../up", ""});
  ASSERT_FALSE(slash.ok());
  EXPECT_NE(slash.error().message.find("must be a plain name"), std::string::npos) << slash.error().message;

  auto empty_run = db_->CreateRun({{"suite", suite_}});
  auto empty = run::ExportFib(*db_, tasks_, {*empty_run, dir_.path() + "/fib", "accelopt", ""});
  ASSERT_FALSE(empty.ok());
  EXPECT_NE(empty.error().message.find("has nothing to export (it holds no candidates)"), std::string::npos)
      << empty.error().message;
  EXPECT_FALSE(fs::exists(dir_.path() + "/fib"));  // nothing written

  const int64_t run = CraftedRun();
  std::ofstream(dir_.path() + "/a-file") << "";
  auto unwritable = run::ExportFib(*db_, tasks_, {run, dir_.path() + "/a-file/fib", "accelopt", ""});
  ASSERT_FALSE(unwritable.ok());
  EXPECT_NE(unwritable.error().message.find("task scale: cannot create the folder " + dir_.path() + "/a-file/fib"),
            std::string::npos)
      << unwritable.error().message;
}

TEST_F(FibExport, TheCommandWritesAndFailsClearly) {
  const int64_t run = CraftedRun();
  const std::string db = " --db " + dir_.path() + "/accelopt.db";
  const std::string out = dir_.path() + "/fib";
  auto ok = testing::Accelopt(fmt::format("export fib {} {}{}", run, out, db));
  ASSERT_EQ(ok.exit_code, 0) << ok.out;
  EXPECT_NE(ok.out.find("scale: definition scale_m_n_f32, baseline candidate"), std::string::npos) << ok.out;
  EXPECT_NE(ok.out.find("(2.00x)"), std::string::npos) << ok.out;
  EXPECT_NE(ok.out.find("task plain names no fib_definition"), std::string::npos) << ok.out;
  EXPECT_NE(ok.out.find("skipped gone: not in the suite"), std::string::npos) << ok.out;
  const Json solution = ReadJson(out + fmt::format("/solutions/accelopt/elementwise/scale_m_n_f32/"
                                                   "accelopt-scale-run{}-c{}.json",
                                                   run, best_));
  EXPECT_EQ(SolutionProblem(solution), "");
  const std::vector<Json> traces = ReadLines(out + "/traces/accelopt/elementwise/scale_m_n_f32.jsonl");
  ASSERT_EQ(traces.size(), 2u);
  EXPECT_TRUE(traces[1]["evaluation"]["environment"]["libs"].contains("accelopt"));

  auto unknown = testing::Accelopt("export fib 99 " + out + db);
  EXPECT_EQ(unknown.exit_code, 1);
  EXPECT_NE(unknown.out.find("no run 99 in " + dir_.path() + "/accelopt.db"), std::string::npos) << unknown.out;
  auto empty_run = db_->CreateRun({{"suite", suite_}});
  auto empty = testing::Accelopt(fmt::format("export fib {} {}{}", *empty_run, out, db));
  EXPECT_EQ(empty.exit_code, 1);
  EXPECT_NE(empty.out.find("has nothing to export"), std::string::npos) << empty.out;
  std::ofstream(dir_.path() + "/a-file") << "";
  auto unwritable = testing::Accelopt(fmt::format("export fib {} {}/a-file/x{}", run, dir_.path(), db));
  EXPECT_EQ(unwritable.exit_code, 1);
  EXPECT_NE(unwritable.out.find("cannot create the folder"), std::string::npos) << unwritable.out;
  auto no_db = testing::Accelopt(fmt::format("export fib {} {} --db {}/missing.db", run, out, dir_.path()));
  EXPECT_EQ(no_db.exit_code, 1) << no_db.out;
  EXPECT_EQ(testing::Accelopt("export fib " + std::to_string(run) + db).exit_code, 2);  // DIR missing
  EXPECT_EQ(testing::Accelopt("export").exit_code, 2);

  // `tasks --json` says which definition a task names.
  auto listed = testing::Accelopt("tasks --json --shape test --suite " + suite_);
  ASSERT_EQ(listed.exit_code, 0) << listed.out;
  const Json list = Json::parse(listed.out.substr(listed.out.find('[')));
  std::map<std::string, Json> definitions;
  for (const Json& t : list) definitions[t["task"]] = t["fib_definition"];
  EXPECT_EQ(definitions["scale"], "scale_m_n_f32");
  EXPECT_TRUE(definitions["plain"].is_null());
  EXPECT_EQ(testing::Accelopt("export fob 1 x").exit_code, 2);
}

}  // namespace
}  // namespace accelopt

namespace accelopt {
namespace {

// A paged-attention workload: its page tables go into a safetensors file that
// FlashInfer-Bench loads (the same one on every export), sm_scale is a scalar.
TEST(FibWorkload, PageTablesAreSafetensorsAndTheScaleAScalar) {
  auto task = suite::LoadTask(std::string(ACCELOPT_SOURCE_DIR) + "/suite/gqa_paged_decode_h32_kv8_d128_ps1");
  ASSERT_TRUE(task) << task.error().message;
  auto bound = suite::Bind(*task, "test");
  ASSERT_TRUE(bound) << bound.error().message;
  const Json w = run::FibWorkloadJson(*bound);
  const std::string blob = run::FibWorkloadBlob(*bound);
  EXPECT_EQ(blob, "blob/workloads/attention/gqa_paged_decode_h32_kv8_d128_ps1/" + w["uuid"].get<std::string>() +
                      ".safetensors");
  EXPECT_EQ(w["inputs"]["q"]["type"], "random");
  EXPECT_EQ(w["inputs"]["sm_scale"], (Json{{"type", "scalar"}, {"value", 0.08838834764831845}}));
  for (const char* name : {"kv_indptr", "kv_indices"})
    EXPECT_EQ(w["inputs"][name], (Json{{"type", "safetensors"}, {"path", blob}, {"tensor_key", name}})) << name;
  EXPECT_EQ(w["axes"]["num_kv_indices"], 37);

  testing::TempDir dir;
  ASSERT_TRUE(run::WriteFibWorkloadBlob(*bound, dir.path()));
  auto bytes = ReadFile(dir.path() + "/" + blob);
  ASSERT_TRUE(bytes) << bytes.error().message;
  ASSERT_GT(bytes->size(), 8u);
  uint64_t header_size = 0;
  for (int i = 7; i >= 0; --i) header_size = header_size << 8 | static_cast<unsigned char>((*bytes)[i]);
  EXPECT_EQ(header_size % 8, 0u);
  const Json header = Json::parse(bytes->substr(8, header_size));
  EXPECT_EQ(header["kv_indptr"]["dtype"], "I32");
  EXPECT_EQ(header["kv_indptr"]["shape"], (Json{4}));
  EXPECT_EQ(header["kv_indices"]["shape"], (Json{37}));
  const std::string data = bytes->substr(8 + header_size);
  auto int_at = [&](const Json& t, long i) {
    int32_t v = 0;
    std::memcpy(&v, data.data() + t["data_offsets"][0].get<size_t>() + 4 * i, 4);
    return v;
  };
  EXPECT_EQ(data.size(), (4u + 37u) * 4);
  EXPECT_EQ(int_at(header["kv_indptr"], 0), 0);
  EXPECT_EQ(int_at(header["kv_indptr"], 3), 37);
  std::set<int32_t> pages;
  for (long i = 0; i < 37; ++i) pages.insert(int_at(header["kv_indices"], i));
  EXPECT_EQ(pages.size(), 37u);
  EXPECT_LT(*pages.rbegin(), 50);

  testing::TempDir again;
  ASSERT_TRUE(run::WriteFibWorkloadBlob(*bound, again.path()));
  EXPECT_EQ(ReadFile(again.path() + "/" + blob).value(), *bytes) << "the same workload file on every export";

  // A task without integer inputs has no workload file.
  auto silu = suite::LoadTask(std::string(ACCELOPT_SOURCE_DIR) + "/suite/silu");
  ASSERT_TRUE(silu);
  EXPECT_EQ(run::FibWorkloadBlob(*suite::Bind(*silu, "test")), "");
}

}  // namespace
}  // namespace accelopt
