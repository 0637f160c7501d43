// The optimization loop end to end on the `scale` fixture task: scripted
// model, real evaluator, SQLite store. Counts what is paid for (LLM calls,
// evaluations) and checks that a run killed at any point resumes without
// paying for anything twice.

#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <map>
#include <set>

#include "llm/config.h"
#include "run/optimize.h"
#include "testing/cpu_test_target.h"
#include "testing/crashing_store.h"

namespace accelopt {
namespace {

std::string Line(const Json& j) { return j.dump() + "\n"; }

// Kernels for out = 2 * x; the "duplicate" differs from "unrolled" only in comments and spaces.
const char* kUnrolled =
    "extern \"C\" void kernel(const float* x, float* out) {\n"
    "  long i = 0;\n  for (; i + 4 <= M * N; i += 4) {\n"
    "    out[i] = 2.0f * x[i]; out[i+1] = 2.0f * x[i+1]; out[i+2] = 2.0f * x[i+2]; out[i+3] = 2.0f * x[i+3];\n"
    "  }\n  for (; i < M * N; ++i) out[i] = 2.0f * x[i];\n}\n";
const char* kDuplicate =
    "// the same kernel again\nextern \"C\" void kernel(const float* x, float* out) {\n"
    "  long i = 0;\n  for (; i + 4 <= M * N; i += 4) {\n"
    "    out[i] = 2.0f * x[i];   out[i+1] = 2.0f * x[i+1]; out[i+2] = 2.0f * x[i+2]; out[i+3] = 2.0f * x[i+3];\n"
    "  }\n  for (; i < M * N; ++i) out[i] = 2.0f * x[i];\n}\n";
const char* kSimd =
    "extern \"C\" void kernel(const float* x, float* out) {\n#pragma omp simd\n"
    "  for (long i = 0; i < M * N; ++i) out[i] = x[i] + x[i];\n}\n";
const char* kBroken = "extern \"C\" void kernel(const float* x, float* out) { out[0] = x[0] +; }\n";
const char* kFixed =
    "extern \"C\" void kernel(const float* x, float* out) {\n"
    "  for (long i = M * N - 1; i >= 0; --i) out[i] = x[i] * 2.0f;\n}\n";

std::string Fenced(const std::string& code) { return "Here it is.\n```cpp\n" + code + "```\n"; }

class Loop : public ::testing::Test {
 protected:
  void SetUp() override {
    auto task = suite::LoadTask(std::string(ACCELOPT_SOURCE_DIR) + "/tests/fixtures/scale");
    ASSERT_TRUE(task.ok()) << task.error().message;
    task_ = std::make_unique<suite::Task>(*task);
    recording_ = dir_.path() + "/recording.jsonl";
    std::ofstream out(recording_);
    out << "# Recorded exchanges for the loop tests.\n";
    for (const char* plan : {"Unroll by four", "Use OpenMP simd", "Broken attempt", "Duplicate of unroll"})
      out << Line(
          {{"role", "planner"}, {"match", "Task: scale"}, {"response", std::string("PLAN: ") + plan + "\nDo it."}});
    out << Line(
        {{"role", "executor"}, {"match", "Plan: Unroll by four"}, {"response", Fenced(kUnrolled)}, {"repeat", true}});
    out << Line(
        {{"role", "executor"}, {"match", "Plan: Use OpenMP simd"}, {"response", Fenced(kSimd)}, {"repeat", true}});
    out << Line(
        {{"role", "executor"}, {"match", "Plan: Broken attempt"}, {"response", Fenced(kBroken)}, {"repeat", true}});
    out << Line({{"role", "executor"},
                 {"match", "Plan: Duplicate of unroll"},
                 {"response", Fenced(kDuplicate)},
                 {"repeat", true}});
    out << Line(
        {{"role", "fixer"}, {"match", "expected primary-expression"}, {"response", Fenced(kFixed)}, {"repeat", true}});
    out << Line({{"role", "summarizer"},
                 {"response", "**Write each output once**\nStream it.\nbefore: a\nafter: b"},
                 {"repeat", true}});
  }

  std::unique_ptr<llm::LlmClient> Client() {
    llm::LlmConfig config;
    config.backends["rec"] = llm::BackendConfig{"scripted"};
    config.backends["rec"].scripted.path = recording_;
    config.roles["default"] = llm::RoleSettings{"rec"};
    auto client = llm::BuildLlmClient(config);
    EXPECT_TRUE(client.ok()) << client.error().message;
    return std::move(*client);
  }

  std::unique_ptr<store::Store> Db() {
    auto db = store::OpenSqliteStore({dir_.path() + "/accelopt.db"});
    EXPECT_TRUE(db.ok()) << db.error().message;
    return std::move(*db);
  }

  run::TaskSettings Settings() {
    run::TaskSettings s;
    s.search.iterations = 2;
    s.search.plans = 2;
    s.search.beam = 1;
    s.search.samples = 1;
    s.search.fix_rounds = 1;
    s.search.max_threshold = 0;  // every faster-or-not pair counts as positive on this tiny shape
    s.search.llm_parallelism = 1;
    s.search.proposals = search::ProposalMode::kSequential;  // the recording answers one plan per call
    s.memory_name = "test-memory";
    s.shape = "test";
    s.prompts_dir = std::string(ACCELOPT_SOURCE_DIR) + "/prompts/cpu";
    return s;
  }

  // Evaluations actually run (not answered from the store).
  struct CountingTarget : targets::Target {
    explicit CountingTarget(std::unique_ptr<targets::Target> t) : inner(std::move(t)) {}
    std::string name() const override { return inner->name(); }
    targets::TargetInfo Describe() const override { return inner->Describe(); }
    std::string Machine() const override { return inner->Machine(); }
    std::string MachineText() const override { return inner->MachineText(); }
    std::vector<std::string> CheckedShapes(const suite::Task& t, const std::string& shape) const override {
      return inner->CheckedShapes(t, shape);
    }
    bool Supports(const suite::Task& t) const override { return inner->Supports(t); }
    std::vector<Result<std::unique_ptr<targets::Built>>> Build(std::span<const targets::EvalRequest> r) override {
      evaluations += static_cast<int>(r.size());
      for (const auto& request : r) hashes.insert(agents::CodeHash(request.candidate.source, "c++"));
      return inner->Build(r);
    }
    std::vector<Result<Profile>> Run(std::span<targets::Built* const> built, const OnResult& on_result) override {
      return inner->Run(built, on_result);
    }
    bool ComparesSideBySide() const override { return inner->ComparesSideBySide(); }
    Result<targets::PairedResult> Compare(const targets::EvalRequest& a, const targets::EvalRequest& b) override {
      return inner->Compare(a, b);
    }
    std::unique_ptr<targets::Target> inner;
    int evaluations = 0;
    std::set<std::string> hashes;
  };

  // `hardware`: the profile the machine is described with to the agents (no scoring).
  std::unique_ptr<CountingTarget> Target(std::optional<cpu::HardwareProfile> hardware = std::nullopt) {
    auto options = testing::TestTargetOptions(scratch_);
    options.timing.min_calls = 3;
    options.hardware = std::move(hardware);
    return std::make_unique<CountingTarget>(cpu::MakeCpuTarget(options));
  }

  testing::TempDir dir_, scratch_;
  std::unique_ptr<suite::Task> task_;
  std::string recording_;
};

// An evaluation is reused only where it was measured: the same code on the
// same target and machine is not measured twice, on another machine it is.
// Evaluations recorded before keys named the target and the machine are
// still reused by a resumed run.
TEST_F(Loop, EvaluationsAreKeptPerTargetAndMachine) {
  auto db = Db();
  auto target = Target();
  auto run = db->CreateRun(Json::object());
  ASSERT_TRUE(run.ok());
  auto baseline = ReadFile(task_->baseline_path(cpu::kKernelExtension));
  ASSERT_TRUE(baseline.ok());
  auto made_here = run::StoreEvaluator::Make(*db, *target, *task_, "test", *run, {});
  ASSERT_TRUE(made_here.ok()) << made_here.error().message;
  run::StoreEvaluator& here = **made_here;
  ASSERT_TRUE(here.EvaluateOne(*baseline).ok());
  ASSERT_TRUE(here.EvaluateOne(*baseline).ok());
  EXPECT_EQ(target->evaluations, 1);

  struct Elsewhere : CountingTarget {
    using CountingTarget::CountingTarget;
    std::string Machine() const override { return "another-machine"; }
  };
  auto options = testing::TestTargetOptions(scratch_);
  options.timing.min_calls = 3;
  Elsewhere elsewhere(cpu::MakeCpuTarget(options));
  auto made_there = run::StoreEvaluator::Make(*db, elsewhere, *task_, "test", *run, {});
  ASSERT_TRUE(made_there.ok()) << made_there.error().message;
  run::StoreEvaluator& there = **made_there;
  ASSERT_TRUE(there.EvaluateOne(*baseline).ok());
  EXPECT_EQ(elsewhere.evaluations, 1);

  const std::string older = *baseline + "\nstatic int recorded_earlier = 0;\n";
  Profile recorded;
  recorded.task = task_->name;
  recorded.shape = "test";
  recorded.message = "recorded under the older key";
  ASSERT_TRUE(
      db->PutEvaluation("run" + std::to_string(*run) + "/" + task_->name + "/test/" + agents::CodeHash(older, "c++"),
                        *run, task_->name, recorded.ToJson())
          .ok());
  auto reused = here.EvaluateOne(older);
  ASSERT_TRUE(reused.ok()) << reused.error().message;
  EXPECT_EQ(reused->message, "recorded under the older key");
  EXPECT_EQ(target->evaluations, 1);
}

TEST_F(Loop, FullRunRecordsEverythingOnceAndDeduplicates) {
  auto db = Db();
  auto client = Client();
  auto target = Target();
  auto run = db->CreateRun(Json::object());
  ASSERT_TRUE(run.ok());
  ::testing::internal::CaptureStderr();
  auto result = run::OptimizeTask(Settings(), *task_, *run, *db, *client, *target);
  const std::string progress = ::testing::internal::GetCapturedStderr();
  ASSERT_TRUE(result.ok()) << result.error().message;
  EXPECT_TRUE(result->best.ok());
  // The duplicate is said to be one, not dropped without a word.
  EXPECT_NE(progress.find("the kernel written for plan 'Duplicate of unroll' is candidate 2 again"), std::string::npos)
      << progress;

  // baseline + unrolled + simd (iteration 1) + broken + fixed (iteration 2); the duplicate is not evaluated.
  EXPECT_EQ(target->evaluations, 5);
  auto candidates = db->ListCandidates(*run, "scale");
  ASSERT_TRUE(candidates.ok());
  std::vector<std::string> statuses;
  for (const auto& c : *candidates) statuses.push_back(VerdictName(c.candidate.profile.status));
  EXPECT_EQ(statuses, (std::vector<std::string>{"ok", "ok", "ok", "compile_error", "ok"}));
  EXPECT_EQ((*candidates)[1].candidate.parent_id, (*candidates)[0].candidate.id);

  // 4 plans, 4 executor answers, 1 fix, and one summary per kept pair.
  llm::Totals t = client->totals();
  auto calls = db->ListLlmCalls(*run);
  ASSERT_TRUE(calls.ok());
  EXPECT_EQ(static_cast<long>(calls->size()), t.calls);
  int fixer = 0, summaries = 0;
  for (const auto& c : *calls) {
    fixer += c["agent_role"] == "fixer";
    summaries += c["agent_role"] == "summarizer";
  }
  EXPECT_EQ(fixer, 1);
  // Pairs become lessons only from comparisons measured quietly (none where
  // other work kept the machine busy through every one).
  int quiet = 0;
  for (const auto& c : *candidates) quiet += c.candidate.vs_parent && !c.candidate.vs_parent->disturbed ? 1 : 0;
  if (quiet > 0)
    EXPECT_GE(summaries, 1);
  else
    EXPECT_EQ(summaries, 0);
  auto lessons = db->ListLessons("test-memory", 0);
  ASSERT_TRUE(lessons.ok());
  EXPECT_EQ(static_cast<int>(lessons->size()), summaries);
  // Every lesson's pair is a parent->child edge of the recorded lineage.
  std::map<int64_t, int64_t> parent_of;
  for (const auto& c : *candidates) parent_of[c.candidate.id] = c.candidate.parent_id;
  for (const auto& l : *lessons) EXPECT_EQ(parent_of[l.fast_candidate], l.slow_candidate) << l.lesson.title;
  auto checkpoint = db->LatestIteration(*run, "scale");
  ASSERT_TRUE(checkpoint.ok() && checkpoint->has_value());
  EXPECT_EQ((*checkpoint)->first, 2);
}

// With one call for a kernel's plans (the default), the planner is asked once
// per beam kernel for N distinct plans, and each plan gets its executor.
TEST_F(Loop, OneCallAsksThePlannerOnceForAllItsPlans) {
  std::ofstream(recording_)
      << Line({{"role", "planner"},
               {"match", "Propose 2 DISTINCT optimization steps"},
               {"response", "PLAN: Unroll by four\nA.\n\nPLAN: Use OpenMP simd\nB."},
               {"repeat", true}})
      << Line({{"role", "executor"},
               {"match", "Plan: Unroll by four"},
               {"response", Fenced(kUnrolled)},
               {"repeat", true}})
      << Line({{"role", "executor"}, {"match", "Plan: Use OpenMP simd"}, {"response", Fenced(kSimd)}, {"repeat", true}})
      << Line({{"role", "summarizer"}, {"response", "no optimization found"}, {"repeat", true}});
  auto db = Db();
  auto client = Client();
  auto target = Target();
  auto run = db->CreateRun(Json::object());
  run::TaskSettings settings = Settings();
  settings.search.iterations = 1;
  settings.search.proposals = search::ProposalMode::kOneCall;
  auto result = run::OptimizeTask(settings, *task_, *run, *db, *client, *target);
  ASSERT_TRUE(result.ok()) << result.error().message;
  auto calls = db->ListLlmCalls(*run);
  ASSERT_TRUE(calls.ok());
  int planner = 0, executor = 0;
  for (const auto& c : *calls) {
    planner += c["agent_role"] == "planner";
    executor += c["agent_role"] == "executor";
  }
  EXPECT_EQ(planner, 1);
  EXPECT_EQ(executor, 2);
  EXPECT_EQ(target->evaluations, 3);  // the baseline and one kernel per plan
}

// A kernel that declares a constant tunable is swept by the engine with the
// real evaluator: the variant that is faster side by side is recorded as the
// plan's child of the same parent, with the setting in its plan.
TEST_F(Loop, TheEngineTunesDeclaredConstants) {
  const std::string slow_by_default =
      "constexpr int REPEAT = 65536;  // accelopt:tune REPEAT 1 65536\n"
      "extern \"C\" void kernel(const float* x, float* out) {\n"
      "  for (int r = 0; r < REPEAT; ++r) {\n"
      "    asm volatile(\"\" ::: \"memory\");\n"
      "    for (long i = 0; i < M * N; ++i) out[i] = 2.0f * x[i];\n"
      "  }\n}\n";
  std::ofstream(recording_) << Line({{"role", "planner"},
                                     {"response", "PLAN: Repeat the work\nDo it."},
                                     {"repeat", true}})
                            << Line({{"role", "executor"}, {"response", Fenced(slow_by_default)}, {"repeat", true}})
                            << Line({{"role", "summarizer"}, {"response", "no optimization found"}, {"repeat", true}});
  auto db = Db();
  auto client = Client();
  auto target = Target();
  auto run = db->CreateRun(Json::object());
  run::TaskSettings settings = Settings();
  settings.search.iterations = 1;
  settings.search.plans = 1;
  settings.search.tune_budget = 4;
  ::testing::internal::CaptureStderr();
  auto result = run::OptimizeTask(settings, *task_, *run, *db, *client, *target);
  const std::string progress = ::testing::internal::GetCapturedStderr();
  ASSERT_TRUE(result.ok()) << result.error().message;
  auto candidates = db->ListCandidates(*run, "scale");
  ASSERT_TRUE(candidates.ok());
  ASSERT_EQ(candidates->size(), 3u) << progress;  // baseline, the executor's kernel, one variant
  const Candidate& variant = (*candidates)[2].candidate;
  EXPECT_NE(variant.code.find("constexpr int REPEAT = 1;"), std::string::npos) << variant.code;
  EXPECT_NE(variant.plan.find("(constants tuned by the engine: REPEAT=1)"), std::string::npos) << variant.plan;
  EXPECT_EQ(variant.parent_id, (*candidates)[0].candidate.id);
  EXPECT_NE(progress.find("1 variants; the fastest, (constants tuned by the engine: REPEAT=1)"), std::string::npos)
      << progress;
  EXPECT_LT(variant.latency(), (*candidates)[1].candidate.latency() / 2);
  // Kept or not is the side-by-side comparison's call (pinned down in
  // beam_search_test); under a loaded machine its interval may reach 1, or
  // the comparison be measured disturbed and decide nothing.
  EXPECT_TRUE(progress.find("timed side by side): kept") != std::string::npos ||
              progress.find("timed side by side): not kept") != std::string::npos ||
              progress.find(": not kept (measured disturbed: it decides nothing)") != std::string::npos)
      << progress;
}

// The planner sees what a kernel engineer looks at: the latency's minimum and
// maximum beside its median (a gap between them shows a one-time cost), and the
// conditions every timed call runs under.
TEST_F(Loop, PlannerSeesTheLatencyRangeAndTheCallConditions) {
  auto db = Db();
  auto client = Client();
  cpu::HardwareProfile hardware;
  hardware.bandwidth_gbs = 12.5;
  hardware.peak_mm_gflops = 345;
  hardware.peak_vec_gflops = 170;
  auto target = Target(hardware);
  auto run = db->CreateRun(Json::object());
  run::TaskSettings settings = Settings();
  ASSERT_TRUE(run::OptimizeTask(settings, *task_, *run, *db, *client, *target).ok());
  auto calls = db->ListLlmCalls(*run);
  ASSERT_TRUE(calls.ok());
  ASSERT_FALSE(calls->empty());
  std::string prompt;
  for (const auto& m : (*calls)[0]["prompt"]) prompt += m["content"].get<std::string>();
  EXPECT_EQ((*calls)[0]["agent_role"], "planner");
  EXPECT_NE(prompt.find("latency: median "), std::string::npos) << prompt;
  EXPECT_NE(prompt.find(", min "), std::string::npos) << prompt;
  EXPECT_NE(prompt.find(", max "), std::string::npos) << prompt;
  EXPECT_NE(prompt.find("each timed call: every timed call gets fresh inputs"), std::string::npos) << prompt;
  // Every roofline component, not only the one that bounds.
  EXPECT_NE(prompt.find("roofline components: memory "), std::string::npos) << prompt;
  EXPECT_NE(prompt.find(", matmul (FMA) 0, other vector "), std::string::npos) << prompt;
  // Machine facts: the caches (where the system says) and the measured rates.
  const std::string caches = cpu::DescribeCaches();
  if (!caches.empty()) {
    EXPECT_NE(prompt.find("caches: " + caches), std::string::npos) << prompt;
  }
  EXPECT_NE(prompt.find("memory bandwidth 12.5 GB/s (the best of a read-only sum, a non-temporal copy and a triad"),
            std::string::npos)
      << prompt;
  EXPECT_NE(prompt.find("without the write-allocate read a plain store adds), FMA peak 345 GFLOP/s, non-FMA vector "
                        "peak 170 GFLOP/s"),
            std::string::npos)
      << prompt;
  // The other shapes the kernel is checked on, with their constants: none
  // smaller than `test`; `test` for `bench`.
  EXPECT_NE(prompt.find("checked on, untimed (it must be correct for each, remainders included): none."),
            std::string::npos)
      << prompt;
  EXPECT_EQ(run::BriefFor(*task_, "bench", *target).checked_shapes, "test (M=7 N=33)");
  // The build command is the target's own, as it builds kernels.
  EXPECT_NE(prompt.find("Compiled with: g++ -O3 -march=native -fopenmp -std=c++20 -fPIC -shared."), std::string::npos)
      << prompt;
  // What did vectorize is noise; what did not is said where there is any.
  EXPECT_EQ(prompt.find("vectorization remarks"), std::string::npos) << prompt;
}

TEST_F(Loop, LaterRunStartsFromTheMemory) {
  auto db = Db();
  {
    auto client = Client();
    auto target = Target();
    auto run = db->CreateRun(Json::object());
    ASSERT_TRUE(run::OptimizeTask(Settings(), *task_, *run, *db, *client, *target).ok());
  }
  auto client = Client();
  auto target = Target();
  auto run = db->CreateRun(Json::object());
  ASSERT_TRUE(run::OptimizeTask(Settings(), *task_, *run, *db, *client, *target).ok());
  auto calls = db->ListLlmCalls(*run);
  ASSERT_TRUE(calls.ok());
  // The second run's first planner prompt carries the first run's lesson.
  std::string first_prompt = (*calls)[0]["prompt"][0]["content"];
  EXPECT_NE(first_prompt.find("Write each output once"), std::string::npos);
}

TEST_F(Loop, KilledAnywhereResumesWithoutPayingTwice) {
  // The writes of a full run: count them on a first, complete run in another store.
  for (int crash_after : {2, 5, 9, 14}) {
    SCOPED_TRACE("killed after write " + std::to_string(crash_after));
    testing::TempDir fresh;
    std::string path = fresh.path() + "/accelopt.db";
    int64_t run_id = 0;
    {
      auto db = store::OpenSqliteStore({path});
      ASSERT_TRUE(db.ok());
      run_id = *(*db)->CreateRun(Json::object());
    }
    pid_t child = fork();
    if (child == 0) {
      auto db = store::OpenSqliteStore({path});
      testing::CrashingStore crashing(**db, crash_after);
      auto client = Client();
      auto target = Target();
      auto r = run::OptimizeTask(Settings(), *task_, run_id, crashing, *client, *target);
      _exit(r.ok() ? 0 : 1);
    }
    int status = 0;
    waitpid(child, &status, 0);
    ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) << "the child was not killed";

    auto db = store::OpenSqliteStore({path});
    ASSERT_TRUE(db.ok());
    size_t calls_before = (*db)->ListLlmCalls(run_id)->size();
    std::set<std::string> evaluated_before;  // kernels whose evaluation the killed run recorded
    for (const char* code : {kUnrolled, kSimd, kBroken, kFixed})
      if (*(*db)->GetEvaluation("run" + std::to_string(run_id) + "/scale/test/" + agents::CodeHash(code, "c++")))
        evaluated_before.insert(agents::CodeHash(code, "c++"));
    auto client = Client();
    auto target = Target();
    auto result = run::OptimizeTask(Settings(), *task_, run_id, **db, *client, *target);
    ASSERT_TRUE(result.ok()) << result.error().message;
    // Everything recorded before the kill was answered from the store.
    EXPECT_EQ(static_cast<size_t>(client->totals().calls) + calls_before, (*db)->ListLlmCalls(run_id)->size());
    for (const auto& hash : target->hashes) EXPECT_FALSE(evaluated_before.count(hash)) << "evaluated twice: " << hash;
    auto candidates = (*db)->ListCandidates(run_id, "scale");
    // (How many distinct kernels there are depends on which recorded plans the resumed
    // process replays: a recording is consumed in order, and the killed process had
    // consumed some. What must hold is that nothing is paid for twice.)
    // One row per distinct kernel.
    std::set<std::string> hashes;
    for (const auto& c : *candidates) EXPECT_TRUE(hashes.insert(c.candidate.hash).second) << c.candidate.hash;
    auto checkpoint = (*db)->LatestIteration(run_id, "scale");
    ASSERT_TRUE(checkpoint.ok() && checkpoint->has_value());
    EXPECT_EQ((*checkpoint)->first, 2);
  }
}

// A store made before content hashes were SHA-256 holds 16-digit FNV hashes
// in its candidates and checkpoints: it still opens, and its run resumes with
// the hashes computed again from the code, so a kernel seen before is still
// seen (not evaluated or recorded again) and every hash is SHA-256.
TEST_F(Loop, ARunRecordedWithOldHashesResumes) {
  auto db = Db();
  auto run = db->CreateRun(Json::object());
  run::TaskSettings settings = Settings();
  settings.search.iterations = 1;
  {
    auto client = Client();
    auto target = Target();
    ASSERT_TRUE(run::OptimizeTask(settings, *task_, *run, *db, *client, *target).ok());
  }
  auto first = db->ListCandidates(*run, "scale");
  ASSERT_TRUE(first.ok());
  std::set<std::string> evaluated_first;
  for (const auto& c : *first) evaluated_first.insert(agents::CodeHash(c.candidate.code, "c++"));
  ASSERT_TRUE(evaluated_first.count(agents::CodeHash(kUnrolled, "c++")));
  db.reset();
  {  // As an old engine wrote them: 16 hex digits.
    sqlite3* raw = nullptr;
    ASSERT_EQ(sqlite3_open((dir_.path() + "/accelopt.db").c_str(), &raw), SQLITE_OK);
    ASSERT_EQ(sqlite3_exec(raw, "UPDATE candidates SET code_hash = substr(code_hash, 1, 16)", nullptr, nullptr, nullptr),
              SQLITE_OK);
    sqlite3_stmt* read = nullptr;
    ASSERT_EQ(sqlite3_prepare_v2(raw, "SELECT state FROM iterations", -1, &read, nullptr), SQLITE_OK);
    ASSERT_EQ(sqlite3_step(read), SQLITE_ROW);
    Json state = Json::parse(reinterpret_cast<const char*>(sqlite3_column_text(read, 0)));
    sqlite3_finalize(read);
    for (Json& c : state["beam"]) {
      c["hash"] = c["hash"].get<std::string>().substr(0, 16);
      c["parent_hash"] = c["parent_hash"].get<std::string>().substr(0, 16);
    }
    sqlite3_stmt* write = nullptr;
    ASSERT_EQ(sqlite3_prepare_v2(raw, "UPDATE iterations SET state = ?", -1, &write, nullptr), SQLITE_OK);
    const std::string text = state.dump();
    sqlite3_bind_text(write, 1, text.c_str(), -1, SQLITE_TRANSIENT);
    ASSERT_EQ(sqlite3_step(write), SQLITE_DONE);
    sqlite3_finalize(write);
    sqlite3_close(raw);
  }
  db = Db();
  settings.search.iterations = 2;
  auto client = Client();  // replays the recording from its start: "Unroll by four" again
  auto target = Target();
  auto result = run::OptimizeTask(settings, *task_, *run, *db, *client, *target);
  ASSERT_TRUE(result.ok()) << result.error().message;
  for (const auto& hash : target->hashes) EXPECT_FALSE(evaluated_first.count(hash)) << "evaluated again: " << hash;
  auto candidates = db->ListCandidates(*run, "scale");
  ASSERT_TRUE(candidates.ok());
  auto checkpoint = db->LatestIteration(*run, "scale");
  ASSERT_TRUE(checkpoint.ok() && checkpoint->has_value());
  EXPECT_EQ((*checkpoint)->first, 2);
  EXPECT_GT(client->totals().calls, 0);  // iteration 2 asked for kernels: those of iteration 1 again
  std::set<std::string> codes;
  for (const auto& c : *candidates) {
    EXPECT_TRUE(codes.insert(agents::CodeHash(c.candidate.code, "c++")).second) << "recorded twice: " << c.candidate.id;
    if (c.candidate.iteration == 2) EXPECT_EQ(c.candidate.hash.size(), 64u);
  }
}

// An evaluation that fails in the engine (a full disk, say) is no verdict:
// nothing is recorded for the kernel, no fixer sees it, the iteration is not
// checkpointed, and a resume redoes it without paying for the answers again.
TEST_F(Loop, EngineFailureStopsTheSearchWithoutAVerdict) {
  struct FailingTarget : CountingTarget {
    using CountingTarget::CountingTarget;
    std::vector<Result<std::unique_ptr<targets::Built>>> Build(std::span<const targets::EvalRequest> r) override {
      if (++calls == 1) return CountingTarget::Build(r);  // the baseline
      std::vector<Result<std::unique_ptr<targets::Built>>> out;
      for (size_t k = 0; k < r.size(); ++k)
        out.push_back(Error{"cannot write the build folder: No space left on device"});
      return out;
    }
    int calls = 0;
  };
  auto db = Db();
  auto run = db->CreateRun(Json::object());
  {
    auto client = Client();
    FailingTarget failing(cpu::MakeCpuTarget(testing::TestTargetOptions(scratch_)));
    auto result = run::OptimizeTask(Settings(), *task_, *run, *db, *client, failing);
    ASSERT_FALSE(result.ok());
    EXPECT_NE(result.error().message.find("No space left on device"), std::string::npos) << result.error().message;
    EXPECT_NE(result.error().message.find("no kernel is blamed"), std::string::npos) << result.error().message;
  }
  auto candidates = db->ListCandidates(*run, "scale");
  ASSERT_TRUE(candidates.ok());
  EXPECT_EQ(candidates->size(), 1u);  // the baseline only
  auto calls = db->ListLlmCalls(*run);
  for (const auto& c : *calls) EXPECT_NE(c["agent_role"], "fixer");
  auto checkpoint = db->LatestIteration(*run, "scale");
  ASSERT_TRUE(checkpoint.ok());
  EXPECT_FALSE(checkpoint->has_value());

  auto client = Client();
  auto target = Target();
  auto result = run::OptimizeTask(Settings(), *task_, *run, *db, *client, *target);
  ASSERT_TRUE(result.ok()) << result.error().message;
  checkpoint = db->LatestIteration(*run, "scale");
  ASSERT_TRUE(checkpoint.ok() && checkpoint->has_value());
  EXPECT_EQ((*checkpoint)->first, 2);
}

TEST_F(Loop, BudgetStopsTheSearchCleanly) {
  auto db = Db();
  llm::LlmConfig config;
  config.backends["rec"] = llm::BackendConfig{"scripted"};
  config.backends["rec"].scripted.path = recording_;
  config.roles["default"] = llm::RoleSettings{"rec"};
  config.budget.tokens = 1;  // spent by the first call
  auto client = llm::BuildLlmClient(config);
  ASSERT_TRUE(client.ok());
  auto target = Target();
  auto run = db->CreateRun(Json::object());
  auto result = run::OptimizeTask(Settings(), *task_, *run, *db, **client, *target);
  ASSERT_TRUE(result.ok()) << result.error().message;
  EXPECT_NE(result->stopped.find("token budget"), std::string::npos) << result->stopped;
  auto checkpoint = db->LatestIteration(*run, "scale");
  ASSERT_TRUE(checkpoint.ok() && checkpoint->has_value());
  EXPECT_EQ((*checkpoint)->first, 1);  // the first iteration finished, the second never started
}

}  // namespace
}  // namespace accelopt
