// The code target on a code base of shell commands: verdicts for each way a
// candidate fails, its metric, interleaved comparison, and a repository at a commit.

#include "targets/code/code_target.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <algorithm>
#include <chrono>
#include <thread>
#include <filesystem>

#include "agents/agents.h"
#include "core/json_io.h"
#include "eval/machine_load.h"
#include "core/paths.h"
#include "search/beam_search.h"
#include "suite/task.h"
#include "targets/code/context.h"
#include "targets/code/files.h"
#include "testing/temp_dir.h"

namespace accelopt::code {
namespace {
namespace fs = std::filesystem;

// A code base whose one changeable file holds the benchmark's figure: the
// build refuses an empty file, the tests refuse "bad", the benchmark prints
// the figure (or nothing, for "silent").
class CodeTargetTest : public ::testing::Test {
 protected:
  void SetUp() override {
    base_ = tmp_.path() + "/project";
    fs::create_directories(base_ + "/lib");
    ASSERT_TRUE(WriteFile(base_ + "/lib/value.txt", "4\n"));
    // It takes v/50 s, so that its figure and its time from outside agree.
    ASSERT_TRUE(WriteFile(base_ + "/bench.sh",
                          "v=$(cat lib/value.txt)\n[ \"$v\" = silent ] || { sleep $(awk -v v=\"$v\" 'BEGIN { print v / 50 "
                          "}'); echo \"figure: $v\"; }\n"));
  }

  suite::Task LoadWith(const std::string& direction, const std::string& code_base = "../../project",
                       const std::string& extra = "") {
    const std::string dir = tmp_.path() + "/tasks/" + name_;
    fs::create_directories(dir);
    const std::string where = code_base.rfind("repo:", 0) == 0 ? code_base : "path: " + code_base;
    EXPECT_TRUE(WriteFile(dir + "/task.yaml", "name: " + name_ +
                                                  "\nkind: code\ndescription: a figure in a file\ncode:\n  " + where +
                                                  "\n" + extra + "  language: text\n  files: [lib/*.txt]\n" +
                                                  "  build: " + build_ + "\n  test: \"! grep -q bad lib/value.txt\"\n" +
                                                  "  bench: sh bench.sh\n  metric: {name: figure, unit: u, regex: "
                                                  "'figure: ([0-9.]+)', direction: " +
                                                  direction + "}\n  repetitions: 3\n"));
    auto task = suite::LoadTask(dir);
    EXPECT_TRUE(task) << (task ? "" : task.error().message);
    return task ? *task : suite::Task{};
  }

  static std::string Files(const std::string& value) { return FormatFiles({{"lib/value.txt", value + "\n"}}); }

  Profile Evaluate(const suite::Task& task, const std::string& source) {
    targets::EvalRequest request{&task, "bench", {source, "test", {}}};
    auto results = target_.Evaluate({&request, 1});
    EXPECT_TRUE(results[0]) << results[0].error().message;
    return results[0] ? *results[0] : Profile{};
  }

  testing::TempDir tmp_;
  std::string base_, name_ = "figure", build_ = "test -s lib/value.txt";
  CodeTarget target_{{tmp_.path() + "/work", tmp_.path() + "/bases", false}};
};

TEST_F(CodeTargetTest, TheBaselineIsTheCodeBasesChangeableFiles) {
  suite::Task task = LoadWith("lower");
  auto baseline = target_.Baseline(task);
  ASSERT_TRUE(baseline) << baseline.error().message;
  EXPECT_EQ(*baseline, Files("4"));
}

TEST_F(CodeTargetTest, AnOkCandidateCarriesItsMetric) {
  suite::Task task = LoadWith("lower");
  Profile p = Evaluate(task, Files("2.5"));
  ASSERT_EQ(p.status, Verdict::kOk) << p.message;
  ASSERT_TRUE(p.metric && p.latency);
  EXPECT_EQ(p.metric->runs, 3);
  EXPECT_DOUBLE_EQ(p.metric->median, 2.5);
  EXPECT_DOUBLE_EQ(p.latency->median_s, 2.5);  // lower is better: the cost is the figure
  EXPECT_EQ(MeasureText(p), "2.5 u");
  // The code base itself is never changed.
  EXPECT_EQ(*ReadFile(base_ + "/lib/value.txt"), "4\n");
}

TEST_F(CodeTargetTest, EachFailureIsTheCandidatesVerdict) {
  suite::Task task = LoadWith("lower");
  Profile build = Evaluate(task, FormatFiles({{"lib/value.txt", ""}}));
  EXPECT_EQ(build.status, Verdict::kCompileError) << build.message;
  EXPECT_NE(build.compile_log.find("$ test -s lib/value.txt"), std::string::npos) << build.compile_log;
  Profile tests = Evaluate(task, Files("bad"));
  EXPECT_EQ(tests.status, Verdict::kWrongAnswer) << tests.message;
  Profile silent = Evaluate(task, Files("silent"));
  EXPECT_EQ(silent.status, Verdict::kRuntimeError);
  EXPECT_NE(silent.message.find("no match"), std::string::npos) << silent.message;
  Profile outside = Evaluate(task, FormatFiles({{"bench.sh", "echo 'figure: 0.001'\n"}}));
  EXPECT_EQ(outside.status, Verdict::kForbidden);
  EXPECT_NE(outside.message.find("bench.sh"), std::string::npos) << outside.message;
  Profile garbled = Evaluate(task, "not a document");
  EXPECT_EQ(garbled.status, Verdict::kCompileError);
}

TEST_F(CodeTargetTest, ComparisonInterleavesTheBenchmarkRuns) {
  suite::Task lower = LoadWith("lower");
  targets::EvalRequest a{&lower, "bench", {Files("4"), "a", {}}}, b{&lower, "bench", {Files("2"), "b", {}}};
  auto paired = target_.Compare(a, b);
  ASSERT_TRUE(paired) << paired.error().message;
  ASSERT_TRUE(paired->speedup);
  EXPECT_DOUBLE_EQ(paired->speedup->speedup, 2.0);
  EXPECT_EQ(paired->speedup->pairs, 3);
  name_ = "throughput";
  suite::Task higher = LoadWith("higher");
  a.task = b.task = &higher;
  auto slower = target_.Compare(a, b);
  ASSERT_TRUE(slower && slower->speedup);
  EXPECT_DOUBLE_EQ(slower->speedup->speedup, 0.5);  // a higher figure is better: 2 is half as good as 4
  EXPECT_EQ(MeasureText(slower->b), "2 u");
  // A failing side gives no speedup, and its verdict.
  b.candidate.source = Files("bad");
  auto failing = target_.Compare(a, b);
  ASSERT_TRUE(failing);
  EXPECT_FALSE(failing->speedup);
  EXPECT_EQ(failing->b.status, Verdict::kWrongAnswer);
}

// Runs during which other processes took the machine (here a busy loop the
// benchmark leaves behind, which is not its own work) are run again, a few
// times at most, and the profile says how many were and how busy it was.
TEST_F(CodeTargetTest, DisturbedRunsAreRunAgainAndCounted) {
  ASSERT_TRUE(
      WriteFile(base_ + "/bench.sh", "( while :; do :; done ) &\nsleep 0.3\necho \"figure: $(cat lib/value.txt)\"\n"));
  suite::Task task = LoadWith("lower");
  Profile p = Evaluate(task, Files("2"));
  ASSERT_EQ(p.status, Verdict::kOk) << p.message;
  EXPECT_EQ(p.disturbed_series, 3);
  EXPECT_GT(p.other_load, 0.1);
  EXPECT_EQ(p.metric->runs, 3);
}

// What one run leaves in its temporary folder does not reach the next: a
// candidate that caches its result there in the uncounted run gains nothing.
// Every run is told a seed to draw its inputs from.
TEST_F(CodeTargetTest, NoRunSeesWhatAnEarlierOneLeftInItsTemporaryFolder) {
  ASSERT_TRUE(WriteFile(base_ + "/bench.sh",
                        "[ -n \"$ACCELOPT_SEED\" ] || exit 3\n"
                        "if [ -f \"$TMPDIR/cached\" ]; then echo 'figure: 0.001'; exit 0; fi\n"
                        "touch \"$TMPDIR/cached\"\necho \"figure: $(cat lib/value.txt)\"\n"));
  suite::Task task = LoadWith("lower");
  Profile p = Evaluate(task, Files("2"));
  ASSERT_EQ(p.status, Verdict::kOk) << p.message << p.run_log;
  EXPECT_DOUBLE_EQ(p.metric->best, 2);
}

// Build copies and builds; the tests are Run's, like the benchmark: a
// candidate whose tests fail builds, and is wrong_answer when it runs.
TEST_F(CodeTargetTest, BuildDoesNotRunTheTests) {
  suite::Task task = LoadWith("lower");
  const targets::EvalRequest requests[] = {{&task, "bench", {Files("bad"), "bad", {}}},
                                           {&task, "bench", {FormatFiles({{"lib/value.txt", ""}}), "empty", {}}}};
  auto built = target_.Build(requests);
  ASSERT_EQ(built.size(), 2u);
  ASSERT_TRUE(built[0] && built[1]);
  EXPECT_TRUE((*built[0])->ok()) << (*built[0])->BuildProfile().message;
  EXPECT_TRUE((*built[0])->BuildProfile().run_log.empty());
  EXPECT_EQ((*built[1])->BuildProfile().status, Verdict::kCompileError);
  targets::Built* pointers[] = {built[0]->get(), built[1]->get()};
  auto ran = target_.Run(pointers, {});
  ASSERT_TRUE(ran[0] && ran[1]);
  EXPECT_EQ(ran[0]->status, Verdict::kWrongAnswer) << ran[0]->message;
  EXPECT_EQ(ran[1]->status, Verdict::kCompileError);
}

// A candidate just evaluated is compared without being copied and built
// again: the comparison runs in the very copies the evaluations built, each
// built once (the build writes only in its own copy: everything else is
// read-only to it).
TEST_F(CodeTargetTest, AComparisonReusesTheCopiesEvaluationsBuilt) {
  build_ = "test -s lib/value.txt && echo built >> builds.log";
  CodeTarget target{{tmp_.path() + "/work", tmp_.path() + "/bases", /*keep_work=*/true}};
  suite::Task task = LoadWith("lower");
  auto evaluate = [&](const std::string& value) {
    targets::EvalRequest request{&task, "bench", {Files(value), value, {}}};
    auto results = target.Evaluate({&request, 1});
    EXPECT_TRUE(results[0]) << results[0].error().message;
    return results[0] ? *results[0] : Profile{};
  };
  const Profile four = evaluate("4"), two = evaluate("2");
  ASSERT_EQ(four.status, Verdict::kOk) << four.message;
  ASSERT_EQ(two.status, Verdict::kOk) << two.message;
  targets::EvalRequest a{&task, "bench", {Files("4"), "a", {}}}, b{&task, "bench", {Files("2"), "b", {}}};
  auto paired = target.Compare(a, b);
  ASSERT_TRUE(paired && paired->speedup);
  EXPECT_DOUBLE_EQ(paired->speedup->speedup, 2.0);
  EXPECT_EQ(paired->a.metric->runs, 3);
  EXPECT_EQ(paired->a.work_dir, four.work_dir);
  EXPECT_EQ(paired->b.work_dir, two.work_dir);
  for (const Profile* p : {&four, &two}) EXPECT_EQ(*ReadFile(p->work_dir + "/builds.log"), "built\n");
}

// A benchmark that prints a figure of the candidate's making (here: read
// from its file, the work taking the same time whatever it says) claims 4x
// while the command, timed from outside, runs no faster: suspect, not a gain.
TEST_F(CodeTargetTest, AFigureTheCommandsOwnTimeBeliesIsSuspect) {
  ASSERT_TRUE(WriteFile(base_ + "/bench.sh", "v=$(cat lib/value.txt)\nsleep 0.2\necho \"figure: $v\"\n"));
  suite::Task task = LoadWith("lower");
  targets::EvalRequest a{&task, "bench", {Files("4"), "a", {}}}, b{&task, "bench", {Files("1"), "b", {}}};
  auto paired = target_.Compare(a, b);
  ASSERT_TRUE(paired) << paired.error().message;
  EXPECT_EQ(paired->a.status, Verdict::kOk) << paired->a.message;
  EXPECT_EQ(paired->b.status, Verdict::kSuspect) << paired->b.message;
  EXPECT_NE(paired->b.message.find("timed from outside"), std::string::npos) << paired->b.message;
}

// The benchmark's own work is the candidate's, not another process's load,
// confined or not: a run is not measured "disturbed" by itself. (Under
// bubblewrap with a helper as the namespace's first process, the command's
// CPU time never reached the engine, and every run counted as disturbed.)
TEST_F(CodeTargetTest, TheBenchmarksOwnWorkIsNotCountedAsOtherProcesses) {
  ASSERT_TRUE(WriteFile(base_ + "/bench.sh",
                        "v=$(cat lib/value.txt)\nawk 'BEGIN { for (i = 0; i < 3e7; ++i) s += i }'\n"
                        "echo \"figure: $v\"\n"));
  const int cores = std::max(1u, std::thread::hardware_concurrency());
  const eval::CpuSnapshot before = eval::TakeCpuSnapshot();
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  if (eval::LoadBetween(before, eval::TakeCpuSnapshot()).others > 0.1)
    GTEST_SKIP() << "the machine is busy: a run's load could not be told from its own";
  suite::Task task = LoadWith("lower");
  Profile p = Evaluate(task, Files("3"));
  ASSERT_EQ(p.status, Verdict::kOk) << p.message;
  EXPECT_LT(p.other_load, 0.5 / cores) << p.conditions;
  EXPECT_FALSE(p.disturbed) << p.conditions;
}

// A library that computes one thing under the tests and another under the
// benchmark (here: the benchmark reports what a file of the candidate's says)
// passes the tests; the benchmark's digest of its result, on the same input
// as its parent's run, tells: wrong_answer. Equal digests compare as usual.
TEST_F(CodeTargetTest, ADigestUnlikeTheParentsOnTheSameInputIsAWrongAnswer) {
  ASSERT_TRUE(WriteFile(base_ + "/bench.sh",
                        "v=$(cat lib/value.txt)\nsleep $(awk -v v=\"$v\" 'BEGIN { print v / 50 }')\n"
                        "echo \"figure: $v\"\necho \"digest: $(cat lib/result.txt 2>/dev/null || echo \"$ACCELOPT_SEED\")\"\n"));
  suite::Task task = LoadWith("lower", "../../project", "  digest: {regex: 'digest: (\\w+)'}\n");
  ASSERT_FALSE(task.code.digest.empty());
  targets::EvalRequest a{&task, "bench", {Files("4"), "a", {}}}, b{&task, "bench", {Files("2"), "b", {}}};
  auto same = target_.Compare(a, b);
  ASSERT_TRUE(same && same->speedup) << (same ? same->b.message : same.error().message);
  EXPECT_EQ(same->b.status, Verdict::kOk) << same->b.message;
  b.candidate.source = FormatFiles({{"lib/value.txt", "2\n"}, {"lib/result.txt", "fast\n"}});
  auto other = target_.Compare(a, b);
  ASSERT_TRUE(other) << other.error().message;
  EXPECT_FALSE(other->speedup);
  EXPECT_EQ(other->b.status, Verdict::kWrongAnswer) << other->b.message;
  EXPECT_NE(other->b.message.find("result digest was 'fast'"), std::string::npos) << other->b.message;
}

// The original code base is never written, and the tests and the benchmark
// run as the original has them: a build that writes the original's
// benchmark cannot (everything outside the copy is read-only to it); one
// that rewrites its copy's benchmark is forbidden. Either way every later
// candidate measures as it should.
TEST_F(CodeTargetTest, NeitherTheOriginalNorTheCopysBenchmarkCanBeRewritten) {
  build_ = "sh lib/hook.txt; test -s lib/value.txt";
  suite::Task task = LoadWith("lower");
  const std::string original = *ReadFile(base_ + "/bench.sh");
  auto with_hook = [&](const std::string& hook) {
    return FormatFiles({{"lib/value.txt", "4\n"}, {"lib/hook.txt", hook + "\n"}});
  };
  Profile p = Evaluate(task, with_hook("echo 'echo figure: 0.001' > " + base_ + "/bench.sh"));
  EXPECT_EQ(*ReadFile(base_ + "/bench.sh"), original) << "the build rewrote the original's benchmark";
  if (p.status == Verdict::kOk) {
    EXPECT_DOUBLE_EQ(p.metric->median, 4);
  }
  p = Evaluate(task, with_hook("echo 'echo figure: 0.001' > bench.sh"));
  EXPECT_EQ(p.status, Verdict::kForbidden) << p.message;
  EXPECT_NE(p.message.find("the build changed bench.sh"), std::string::npos) << p.message;
  EXPECT_EQ(Evaluate(task, Files("2.5")).metric->median, 2.5);
}

TEST_F(CodeTargetTest, AVanishedCodeBaseIsTheEnginesErrorNotAVerdict) {
  suite::Task task = LoadWith("lower");
  fs::remove_all(base_);
  targets::EvalRequest request{&task, "bench", {Files("2"), "x", {}}};
  auto results = target_.Evaluate({&request, 1});
  ASSERT_FALSE(results[0]);
}

TEST_F(CodeTargetTest, ARepositoryIsTakenAtItsCommit) {
  if (FindProgram("git").empty()) GTEST_SKIP() << "git is not installed";
  const std::string git = "git -C " + base_ + " -c user.name=t -c user.email=t@t ";
  ASSERT_EQ(std::system((git + "init -q && " + git + "add -A && " + git + "commit -qm one").c_str()), 0);
  ASSERT_TRUE(WriteFile(base_ + "/lib/value.txt", "9\n"));  // after the commit: not what the task starts from
  ASSERT_EQ(std::system((git + "commit -qam two").c_str()), 0);
  suite::Task task = LoadWith("lower", "repo: ../../project", "  commit: HEAD~1\n");
  EXPECT_FALSE(task.code.repo.empty());
  auto baseline = target_.Baseline(task);
  ASSERT_TRUE(baseline) << baseline.error().message;
  EXPECT_EQ(*baseline, Files("4"));
  Profile p = Evaluate(task, Files("3"));
  EXPECT_EQ(p.status, Verdict::kOk) << p.message;
}

// What an expert would want told, for a small Python code base: the planner's
// prompt, rendered from prompts/code as a search renders it, says each fact.
class CodePromptTest : public CodeTargetTest {
 protected:
  void SetUp() override {
    CodeTargetTest::SetUp();
    py_ = tmp_.path() + "/pyproject";
    fs::create_directories(py_ + "/lib");
    fs::create_directories(py_ + "/tests");
    ASSERT_TRUE(WriteFile(py_ + "/lib/words.py",
                          "def slow_count(words):\n    counts = {}\n    for w in words:\n"
                          "        counts[w] = sum(1 for x in words if x == w)\n    return counts\n"));
    ASSERT_TRUE(WriteFile(py_ + "/tests/test_words.py",
                          "import sys\nsys.path.insert(0, '.')\nfrom lib.words import slow_count\n"
                          "assert slow_count(['a', 'b', 'a']) == {'a': 2, 'b': 1}  # the_test_marker\n"));
    ASSERT_TRUE(WriteFile(py_ + "/bench.py",
                          "import sys, time, random\nsys.path.insert(0, '.')\nfrom lib.words import slow_count\n"
                          "def make_words():\n    rng = random.Random(7)\n"
                          "    return [rng.choice(['ab', 'cd', 'ef', 'gh']) for _ in range(400)]\n"
                          "words = make_words()\nt = time.perf_counter()\nslow_count(words)\n"
                          "print('figure: %.6f' % (time.perf_counter() - t))  # the_bench_marker\n"));
  }

  suite::Task LoadPython(const std::string& extra) {
    const std::string dir = tmp_.path() + "/tasks/words";
    fs::create_directories(dir);
    EXPECT_TRUE(WriteFile(dir + "/task.yaml",
                          "name: words\nkind: code\ndescription: word counts\ncode:\n  path: ../../pyproject\n"
                          "  language: python\n  files: [lib/*.py]\n  test: python3 tests/test_words.py\n"
                          "  bench: python3 bench.py\n  metric: {name: time, unit: s, regex: 'figure: ([0-9.]+)', "
                          "direction: lower}\n  repetitions: 3\n" + extra));
    auto task = suite::LoadTask(dir);
    EXPECT_TRUE(task) << (task ? "" : task.error().message);
    return task ? *task : suite::Task{};
  }

  // The planner's prompt for `task`'s code base as it is, measured.
  std::string PlannerPrompt(const suite::Task& task) {
    struct Capture : agents::ModelPort {
      std::string prompt;
      Result<std::string> Ask(const std::string&, const std::string& p, const std::string&) override {
        prompt = p;
        return std::string("PLAN: x\nDo it.");
      }
    } model;
    auto templates = agents::PromptTemplates::Load(std::string(ACCELOPT_SOURCE_DIR) + "/prompts/code");
    EXPECT_TRUE(templates) << (templates ? "" : templates.error().message);
    if (!templates) return "";
    agents::TaskBrief brief;
    brief.task = task.name;
    brief.description = task.description;
    brief.values = target_.PromptValues(task);
    auto baseline = target_.Baseline(task);
    EXPECT_TRUE(baseline);
    const Profile measured = Evaluate(task, baseline ? *baseline : "");
    EXPECT_EQ(measured.status, Verdict::kOk) << measured.message << measured.run_log;
    agents::Agents agents(model, *templates, brief);
    agents::KernelView view{baseline ? *baseline : "", search::ProfileText(measured), "", ""};
    EXPECT_TRUE(agents.Propose(view, "", 1, 1, {}, "k"));
    return model.prompt;
  }

  std::string py_;
};

TEST_F(CodePromptTest, TheTasksOwnDescriptionOfItsWorkloadIsInThePlannersPrompt) {
  const std::string said = PlannerPrompt(LoadPython("  workload: 400 words drawn from four two-letter words\n"));
  EXPECT_NE(said.find("What the benchmark's data is (the task's own words): 400 words drawn from four two-letter "
                      "words"),
            std::string::npos)
      << said;
  name_ = "figure";
  EXPECT_NE(target_.PromptValues(LoadWith("lower")).at("workload").find("not described by the task"),
            std::string::npos);
}

TEST_F(CodePromptTest, TheTestsAndTheBenchmarkAreShownReadOnlyWithinABound) {
  const std::string said = PlannerPrompt(LoadPython(""));
  // Found by path from the test and bench commands; the candidate's own file is not repeated.
  EXPECT_NE(said.find("FILE: bench.py (read-only)"), std::string::npos) << said;
  EXPECT_NE(said.find("the_bench_marker"), std::string::npos) << said;
  EXPECT_NE(said.find("FILE: tests/test_words.py (read-only)"), std::string::npos) << said;
  EXPECT_NE(said.find("the_test_marker"), std::string::npos) << said;
  EXPECT_EQ(said.find("FILE: lib/words.py (read-only)"), std::string::npos) << said;
  // Listed in the task, and cut short within the bound, saying so.
  ASSERT_TRUE(WriteFile(py_ + "/data.txt", std::string(5000, 'w') + "\n"));
  suite::Task task = LoadPython("  context: [data.txt]\n");
  const std::string bounded = ContextText(py_, task.code, 1150, 1000);
  EXPECT_NE(bounded.find("FILE: data.txt (read-only)"), std::string::npos) << bounded;
  EXPECT_NE(bounded.find("cut short: 4001 more bytes of this file not shown"), std::string::npos) << bounded;
  EXPECT_NE(bounded.find("more file(s) not shown, to keep this within 1150 bytes"), std::string::npos) << bounded;
  EXPECT_LE(bounded.size(), 1150u + 200u);  // and a line naming what was left out
}

TEST_F(CodePromptTest, TheLanguageVersionAndTheAllowedLibrariesAreInThePlannersPrompt) {
  if (FindProgram("python3").empty()) GTEST_SKIP() << "python3 is not installed";
  const std::string said = PlannerPrompt(LoadPython("  libraries: the standard library only; no numpy\n"));
  EXPECT_NE(said.find("its toolchain: `python3 --version`: Python 3."), std::string::npos) << said;
  EXPECT_NE(said.find("What the code may use: the standard library only; no numpy"), std::string::npos) << said;
  name_ = "figure";
  EXPECT_NE(target_.PromptValues(LoadWith("lower")).at("libraries").find("not said by the task"), std::string::npos);
}

TEST_F(CodePromptTest, WhereAPythonBenchmarksTimeGoesIsInThePlannersPromptAndOtherwiseWhyNot) {
  if (FindProgram("python3").empty()) GTEST_SKIP() << "python3 is not installed";
  const std::string said = PlannerPrompt(LoadPython(""));
  EXPECT_NE(said.find("where the benchmark's time goes: one more run of the benchmark with each of its Python "
                      "processes under cProfile"),
            std::string::npos)
      << said;
  EXPECT_NE(said.find(" lib/words.py:1(slow_count)"), std::string::npos) << said;  // relative to the copy
  EXPECT_NE(said.find("cumulative"), std::string::npos) << said;
  name_ = "figure";
  Profile text = Evaluate(LoadWith("lower"), Files("2"));
  ASSERT_EQ(text.status, Verdict::kOk) << text.message;
  EXPECT_NE(search::ProfileText(text).find("where the benchmark's time goes: no profile was taken: the code base is "
                                           "text, and the engine profiles only Python code bases"),
            std::string::npos)
      << search::ProfileText(text);
}


}  // namespace
}  // namespace accelopt::code
