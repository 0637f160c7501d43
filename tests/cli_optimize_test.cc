// `accelopt optimize --demo`, `runs`, `show`, `memory` and `resume` as a user runs them
// (test shape, so it takes seconds).

#include <gtest/gtest.h>
#include <signal.h>
#include <stdio.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <string>

#include "core/json_io.h"
#include "testing/fake_llm_server.h"
#include "testing/run_command.h"
#include "testing/temp_dir.h"

namespace accelopt {
namespace {

using testing::Accelopt;
using testing::CommandRun;
namespace fs = std::filesystem;

TEST(CliOptimize, DemoRunsRecordsAndShows) {
  testing::TempDir dir;
  std::string db = " --db " + dir.path() + "/accelopt.db";
  CommandRun run = Accelopt("optimize --demo --shape test --suite " + std::string(ACCELOPT_SOURCE_DIR) + "/suite" + db);
  ASSERT_EQ(run.exit_code, 0) << run.out;
  for (const char* task : {"silu", "matmul", "rmsnorm_matmul"})
    EXPECT_NE(run.out.find(std::string("\n") + task + " "), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("% peak after"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("iteration 2/2"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find(" left\n"), std::string::npos) << "no estimate of the time left: " << run.out;

  CommandRun runs = Accelopt("runs --json" + db);
  ASSERT_EQ(runs.exit_code, 0) << runs.out;
  Json list = Json::parse(runs.out);
  ASSERT_EQ(list.size(), 1u);
  EXPECT_EQ(list[0]["status"], "finished");
  EXPECT_EQ(list[0]["summary"].size(), 3u);

  CommandRun show = Accelopt("show 1 --no-code" + db);
  ASSERT_EQ(show.exit_code, 0) << show.out;
  EXPECT_NE(show.out.find("(baseline)"), std::string::npos) << show.out;
  EXPECT_NE(show.out.find("LLM calls"), std::string::npos) << show.out;
  // The run names the hardware profile its percentages were scored against
  // (none when this busy test machine's calibration refused to be saved).
  EXPECT_NE(show.out.find("scored against: "), std::string::npos) << show.out;
  // Unscored, the table says so: never 0.00% of a peak nobody measured.
  if (show.out.find("scored against: no hardware profile") != std::string::npos) {
    EXPECT_NE(run.out.find("unscored"), std::string::npos) << run.out;
    EXPECT_EQ(run.out.find(" 0.00%"), std::string::npos) << run.out;
  }

  CommandRun memory = Accelopt("memory list" + db);
  ASSERT_EQ(memory.exit_code, 0) << memory.out;
  EXPECT_NE(memory.out.find("demo ("), std::string::npos) << memory.out;

  // Before it starts, the run says what it will ask of its models; a recording costs nothing.
  EXPECT_NE(run.out.find("estimate for 3 task(s), at most"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("(answers replayed from a recording: nothing is paid)"), std::string::npos) << run.out;

  // The same facts for machines: `show`, `memory list` and `memory show` with --json.
  CommandRun show_json = Accelopt("show 1 --json --no-code" + db);
  ASSERT_EQ(show_json.exit_code, 0) << show_json.out;
  Json shown = Json::parse(show_json.out);
  EXPECT_EQ(shown["run"], 1);
  EXPECT_EQ(shown["status"], "finished");
  ASSERT_EQ(shown["tasks"].size(), 3u) << show_json.out;
  for (const auto& t : shown["tasks"]) {
    ASSERT_FALSE(t["lineage"].empty());
    EXPECT_EQ(t["lineage"][0]["iteration"], 0);  // the baseline first
    EXPECT_EQ(t["lineage"].back()["id"], t["best_candidate"]);
    EXPECT_FALSE(t["lineage"][0].contains("code"));
  }
  EXPECT_GT(shown["llm"]["calls"].get<long>(), 0);
  CommandRun lessons = Accelopt("memory list --json" + db);
  ASSERT_EQ(lessons.exit_code, 0) << lessons.out;
  Json memories = Json::parse(lessons.out);
  // Lessons come only from comparisons measured quietly: where other work
  // kept the machine busy through every comparison, none may be written.
  int quiet = 0;
  for (const auto& t : list[0]["summary"])
    quiet += t["measured"]["comparisons"].get<int>() - t["measured"]["disturbed_comparisons"].get<int>();
  if (quiet == 0) {
    for (const auto& m : memories) EXPECT_TRUE(m["lessons"].empty()) << lessons.out;
  } else {
    ASSERT_FALSE(memories.empty());
    EXPECT_EQ(memories[0]["memory"], "demo");
    ASSERT_FALSE(memories[0]["lessons"].empty());
    const long lesson_id = memories[0]["lessons"][0]["id"];
    CommandRun one = Accelopt("memory show " + std::to_string(lesson_id) + " --json" + db);
    ASSERT_EQ(one.exit_code, 0) << one.out;
    Json lesson = Json::parse(one.out);
    EXPECT_EQ(lesson["id"], lesson_id);
    EXPECT_EQ(lesson["memory"], "demo");
    EXPECT_EQ(lesson["title"], memories[0]["lessons"][0]["title"]);
  }

  // Every candidate, listed; one exported with a patch against its parent.
  CommandRun candidates = Accelopt("candidates 1 --json" + db);
  ASSERT_EQ(candidates.exit_code, 0) << candidates.out;
  Json all = Json::parse(candidates.out);
  ASSERT_GE(all.size(), 6u) << candidates.out;  // three baselines and their children at least
  const Json* child = nullptr;
  for (const auto& c : all) {
    EXPECT_TRUE(c.contains("status") && c.contains("percent_of_peak") && c.contains("plan")) << c.dump();
    if (!child && !c["parent"].is_null() && c["status"] == "ok") child = &c;
  }
  ASSERT_NE(child, nullptr) << candidates.out;
  CommandRun silu = Accelopt("candidates 1 --task silu" + db);
  ASSERT_EQ(silu.exit_code, 0) << silu.out;
  EXPECT_NE(silu.out.find("(baseline)"), std::string::npos) << silu.out;
  EXPECT_EQ(silu.out.find("matmul"), std::string::npos) << silu.out;
  const std::string id = std::to_string((*child)["id"].get<long>());
  CommandRun exported = Accelopt("export candidate " + id + " " + dir.path() + "/c --patch" + db);
  ASSERT_EQ(exported.exit_code, 0) << exported.out;
  auto code = ReadFile(dir.path() + "/c/kernel.cpp");
  ASSERT_TRUE(code.ok()) << exported.out;
  auto patch = ReadFile(dir.path() + "/c/candidate-" + id + ".patch");
  ASSERT_TRUE(patch.ok()) << exported.out;
  EXPECT_EQ(patch->rfind("--- a/kernel.cpp\n+++ b/kernel.cpp\n@@ ", 0), 0u) << *patch;
  CommandRun baseline_patch = Accelopt("export candidate 1 " + dir.path() + "/b --patch" + db);
  EXPECT_EQ(baseline_patch.exit_code, 1) << baseline_patch.out;
  EXPECT_NE(baseline_patch.out.find("is a baseline: it has no parent"), std::string::npos) << baseline_patch.out;
  EXPECT_EQ(Accelopt("export candidate 99999 " + dir.path() + "/x" + db).exit_code, 1);

  // Resuming a finished run redoes nothing and reports the same table.
  CommandRun resume = Accelopt("resume 1" + db);
  ASSERT_EQ(resume.exit_code, 0) << resume.out;
  EXPECT_NE(resume.out.find("resuming after iteration 2"), std::string::npos) << resume.out;
  EXPECT_EQ(resume.out.find("evaluating the baseline"), std::string::npos) << resume.out;
}

// The loop runs on the external target as on the cpu: the Python
// evaluator's prompts (their code blocks are ```python, which the recorded
// answers match), its kernels, its verdicts; a resume rebuilds the target.
TEST(CliOptimize, TheLoopRunsOnAnExternalTarget) {
  testing::TempDir dir;
  const std::string root = ACCELOPT_SOURCE_DIR;
  const std::string db = " --db " + dir.path() + "/accelopt.db";
  CommandRun run = Accelopt("optimize scale_add --target external --evaluator 'python3 " + root +
                            "/evaluators/python/evaluator.py' --suite " + root +
                            "/evaluators/python/suite --shape test -I 1 -N 1 -B 1 -K 1 --memory fresh "
                            "--proposals sequential --scripted " +
                            root + "/tests/fixtures/external/scale_add.jsonl" + db);
  ASSERT_EQ(run.exit_code, 0) << run.out;
  EXPECT_NE(run.out.find("[scale_add] iteration 1/1: evaluated 1/1"), std::string::npos) << run.out;
  // The child was compared with its parent side by side; it joins the best
  // lineage when its interval clears the noise margin, which a loaded machine
  // (a parallel ctest) can deny it: then the run says what it measured and
  // the child is the baseline's, not best.
  const size_t compared = run.out.find("candidate 2 against its parent 1, side by side: ");
  ASSERT_NE(compared, std::string::npos) << run.out;
  CommandRun show = Accelopt("show 1 --no-code" + db);
  ASSERT_EQ(show.exit_code, 0) << show.out;
  const bool cleared = show.out.find("Replace the indexed loop with C-speed map") != std::string::npos;
  if (!cleared) std::printf("the child did not clear the noise margin here: %s\n", run.out.substr(compared, 160).c_str());
  EXPECT_NE(show.out.find(cleared ? "best candidate 2" : "best candidate 1"), std::string::npos) << show.out;
  EXPECT_NE(show.out.find("scored against: the external target's peaks"), std::string::npos) << show.out;
  CommandRun resume = Accelopt("resume 1" + db);
  ASSERT_EQ(resume.exit_code, 0) << resume.out;
  EXPECT_NE(resume.out.find("resuming after iteration 1"), std::string::npos) << resume.out;
}

// The code example end to end, as its README runs it: the library copied per
// candidate, built, tested and benchmarked; the recorded plans' changes applied
// as SEARCH/REPLACE edits; the kept child compared with its parent side by side.
TEST(CliOptimize, TheCodeExampleRunsEndToEnd) {
  testing::TempDir dir;
  const std::string root = ACCELOPT_SOURCE_DIR;
  const std::string db = " --db " + dir.path() + "/accelopt.db";
  CommandRun run = Accelopt("optimize wordfreq --suite " + root + "/examples/suite --scripted " + root +
                            "/examples/answers/wordfreq.jsonl -I 1 -N 2 -B 1 -K 1 -R 0 --memory fresh" + db);
  ASSERT_EQ(run.exit_code, 0) << run.out;
  EXPECT_NE(run.out.find("[wordfreq] iteration 1/1: evaluated 2/2"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("side by side"), std::string::npos) << run.out;
  CommandRun runs = Accelopt("runs --json" + db);
  ASSERT_EQ(runs.exit_code, 0) << runs.out;
  const Json summary = Json::parse(runs.out)[0]["summary"][0];
  EXPECT_EQ(summary["task"], "wordfreq");
  EXPECT_GT(summary["metric_before"].get<double>(), 0);
  EXPECT_GT(summary["metric_after"].get<double>(), 0);
  // A changed version, not the original; on a busy machine, where every
  // comparison was measured disturbed, nothing is decided and the run says so.
  if (run.out.find("no comparison was measured quietly") != std::string::npos) return;
  EXPECT_NE(summary["best_candidate"].get<int>(), 1) << runs.out;
  CommandRun show = Accelopt("show 1 --no-code" + db);
  ASSERT_EQ(show.exit_code, 0) << show.out;
  EXPECT_NE(show.out.find("Count string views in a hash map"), std::string::npos) << show.out;
  EXPECT_NE(show.out.find(" ns"), std::string::npos) << show.out;
}

// An executor answer whose edit does not apply is no candidate: it is recorded
// with the reason, shown by `show`, and the run goes on.
TEST(CliOptimize, AnAnswerThatDoesNotApplyIsRecordedWithItsReason) {
  testing::TempDir dir;
  fs::create_directories(dir.path() + "/project/lib");
  fs::create_directories(dir.path() + "/tasks/figure");
  std::ofstream(dir.path() + "/project/lib/value.txt") << "4\n";
  std::ofstream(dir.path() + "/project/bench.sh") << "echo \"figure: $(cat lib/value.txt)\"\n";
  std::ofstream(dir.path() + "/tasks/figure/task.yaml")
      << "name: figure\nkind: code\ndescription: a figure in a file\ncode:\n  path: ../../project\n"
         "  language: text\n  files: [lib/*.txt]\n  test: test -s lib/value.txt\n  bench: sh bench.sh\n"
         "  metric: {name: figure, regex: 'figure: ([0-9.]+)', direction: lower}\n  repetitions: 3\n";
  std::ofstream(dir.path() + "/answers.jsonl")
      << R"({"role": "planner", "response": "PLAN: Halve it\nWrite 2."})"
      << "\n"
      << R"({"role": "executor", "response": "EDIT: lib/value.txt\n<<<<<<< SEARCH\n5\n=======\n2\n>>>>>>> REPLACE\n"})"
      << "\n";
  const std::string db = " --db " + dir.path() + "/accelopt.db";
  CommandRun run = Accelopt("optimize figure --suite " + dir.path() + "/tasks --scripted " + dir.path() +
                            "/answers.jsonl -I 1 -N 1 -B 1 -K 1 -R 0 --memory fresh" + db);
  ASSERT_EQ(run.exit_code, 0) << run.out;
  EXPECT_NE(run.out.find("executor failed: the executor's answer does not apply"), std::string::npos) << run.out;
  CommandRun show = Accelopt("show 1 --no-code" + db);
  ASSERT_EQ(show.exit_code, 0) << show.out;
  EXPECT_NE(show.out.find("1 answer(s) not used"), std::string::npos) << show.out;
  EXPECT_NE(show.out.find("EDIT: lib/value.txt, edit 1 of 1: the SEARCH text"), std::string::npos) << show.out;
}

// A code task whose repository cannot be had is refused before a run or a store is made.
TEST(CliOptimize, ACodeTaskWithoutItsRepositoryCreatesNoRun) {
  testing::TempDir dir;
  fs::create_directories(dir.path() + "/tasks/gone");
  std::ofstream(dir.path() + "/tasks/gone/task.yaml")
      << "name: gone\nkind: code\ncode:\n  repo: " << dir.path() << "/no-such-repo.git\n  commit: main\n"
      << "  language: c++\n  files: [src/*.cc]\n  test: 'true'\n  bench: echo 1\n"
      << "  metric: {name: t, regex: '([0-9]+)', direction: lower}\n";
  CommandRun run =
      Accelopt("optimize gone --suite " + dir.path() + "/tasks --scripted " + std::string(ACCELOPT_SOURCE_DIR) +
               "/examples/answers/wordfreq.jsonl --db " + dir.path() + "/accelopt.db");
  EXPECT_EQ(run.exit_code, 1) << run.out;
  EXPECT_NE(run.out.find("no-such-repo.git at main: git clone failed"), std::string::npos) << run.out;
  EXPECT_FALSE(fs::exists(dir.path() + "/accelopt.db"));
}

// A recorded demo that leaves an agent without an answer is a failure naming
// the task and the agent, not a run that ends as if nothing had been found.
TEST(CliOptimize, ADemoThatLeavesAnAgentUnansweredFails) {
  testing::TempDir dir;
  const std::string root = ACCELOPT_SOURCE_DIR;
  // The cpu demo's recording without its executor answers: accelopt finds
  // demo/recording.jsonl in its working folder before the project's.
  fs::create_directories(dir.path() + "/demo");
  std::ifstream in(root + "/demo/recording.jsonl");
  std::ofstream out(dir.path() + "/demo/recording.jsonl");
  for (std::string line; std::getline(in, line);)
    if (line.find("\"role\": \"executor\"") == std::string::npos) out << line << "\n";
  out.close();
  CommandRun run = testing::RunShell("cd " + dir.path() + " && " + ACCELOPT_BINARY + " optimize --demo silu --shape test --suite " +
                            root + "/suite --db " + dir.path() + "/accelopt.db");
  EXPECT_EQ(run.exit_code, 1) << run.out;
  EXPECT_NE(run.out.find("left agents without an answer"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("task 'silu', executor: "), std::string::npos) << run.out;
}

// A shape the task does not have is refused before a run or a store is made.
TEST(CliOptimize, AnUnknownShapeCreatesNoRun) {
  testing::TempDir dir;
  const std::string root = ACCELOPT_SOURCE_DIR;
  CommandRun run = Accelopt("optimize silu --shape nosuch --suite " + root + "/suite --scripted " + root +
                            "/demo/recording.jsonl --db " + dir.path() + "/accelopt.db");
  EXPECT_EQ(run.exit_code, 1) << run.out;
  EXPECT_NE(run.out.find("task 'silu' has no shape 'nosuch' (it has: bench, gpu, test)"), std::string::npos) << run.out;
  EXPECT_FALSE(fs::exists(dir.path() + "/accelopt.db"));
}

// Named tasks without a model are an error that says how to configure one or
// ask for the demo; the recorded demo never stands in for them silently.
TEST(CliOptimize, NamedTasksWithoutAModelAreAnErrorNotTheDemo) {
  testing::TempDir dir;
  const std::string db = " --db " + dir.path() + "/accelopt.db";
  CommandRun run =
      Accelopt("optimize silu -I 3 --shape test --suite " + std::string(ACCELOPT_SOURCE_DIR) + "/suite" + db);
  EXPECT_EQ(run.exit_code, 1) << run.out;
  EXPECT_NE(run.out.find("No language model is configured"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("accelopt optimize --demo"), std::string::npos) << run.out;
  EXPECT_EQ(run.out.find("recorded demo (answers replayed"), std::string::npos) << run.out;
  EXPECT_FALSE(fs::exists(dir.path() + "/accelopt.db"));  // no run was created, nor a store
}

// A failing kernel that writes bytes that are not UTF-8 to stderr: its log
// reaches the fixer over HTTP (the engine aborted on it, exit 134).
TEST(CliOptimize, BinaryStderrOfAFailingKernelReachesTheFixer) {
  testing::FakeLlmServer server;
  server.Enqueue({.text = "PLAN: double in place\nMultiply by two."});
  server.Enqueue({.text = "```cpp\n#include <cstdio>\n#include <cstdlib>\n"
                          "extern \"C\" void kernel(const float* x, float* out) {\n"
                          "  std::fputs(\"garbage \\xff\\xfe\\xc3 end\", stderr);\n  std::abort();\n}\n```\n"});
  testing::TempDir dir;
  CommandRun run = Accelopt("optimize scale -I 1 -N 1 -B 1 -K 1 -R 1 --shape test --memory fresh --suite " +
                            std::string(ACCELOPT_SOURCE_DIR) + "/tests/fixtures --db " + dir.path() +
                            "/accelopt.db --base-url " + server.base_url() + " --model fake-model");
  ASSERT_EQ(run.exit_code, 0) << run.out;
  bool fixer_saw_log = false;
  for (const auto& request : server.requests())
    if (request.body.find("garbage \xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd end") != std::string::npos)
      fixer_saw_log = true;
  EXPECT_TRUE(fixer_saw_log) << server.requests().size() << " requests";
}

// Settings are checked before a run is created: a run that cannot start
// never shows in `runs` (they stayed `running` forever).
TEST(CliOptimize, InvalidSettingsCreateNoRun) {
  testing::TempDir dir;
  testing::FakeLlmServer server;
  const std::string db = " --db " + dir.path() + "/accelopt.db";
  const std::string model = " --base-url " + server.base_url() + " --model fake-model";
  CommandRun nosuch = Accelopt("optimize nosuch --shape test" + model + db);
  EXPECT_EQ(nosuch.exit_code, 1) << nosuch.out;
  EXPECT_NE(nosuch.out.find("nosuch"), std::string::npos) << nosuch.out;
  unsetenv("ACCELOPT_TEST_UNSET_KEY");
  CommandRun key = Accelopt("optimize silu --shape test --api-key-env ACCELOPT_TEST_UNSET_KEY" + model + db);
  EXPECT_EQ(key.exit_code, 1) << key.out;
  EXPECT_NE(key.out.find("ACCELOPT_TEST_UNSET_KEY"), std::string::npos) << key.out;
  for (const char* budget : {"-1", "nan", "inf", "cheap"}) {
    CommandRun bad = Accelopt(std::string("optimize silu --shape test --budget ") + budget + model + db);
    EXPECT_EQ(bad.exit_code, 2) << bad.out;
    EXPECT_NE(bad.out.find("--budget: expected dollars, a finite number 0 or more"), std::string::npos) << bad.out;
  }
  EXPECT_FALSE(fs::exists(dir.path() + "/accelopt.db"));  // checked before a run (or a store) was created
}

// Ctrl-C (or SIGTERM) in the middle of a run: the run is marked interrupted,
// the user is told how to resume, and the scratch folders are gone.
TEST(CliOptimize, InterruptedRunIsMarkedAndSaysHowToResume) {
  for (int signal : {SIGINT, SIGTERM}) {
    testing::TempDir dir;
    const std::string exchange = dir.path() + "/exchange";
    const std::string db = " --db " + dir.path() + "/accelopt.db";
    testing::BackgroundAccelopt run("optimize scale -I 1 --shape test --suite " + std::string(ACCELOPT_SOURCE_DIR) +
                                        "/tests/fixtures --exchange " + exchange + db,
                                    dir.path() + "/log");
    // The baseline is evaluated, then the planner's prompt waits for an answer.
    bool waiting = false;
    for (int i = 0; i < 1200 && !waiting; ++i) {
      std::error_code ec;
      for (fs::directory_iterator it(exchange, ec), end; !ec && it != end; it.increment(ec))
        waiting = waiting || it->path().string().ends_with(".prompt.md");
      if (!waiting) usleep(50000);
    }
    ASSERT_TRUE(waiting) << "no prompt appeared";
    kill(run.pid(), signal);
    CommandRun done = run.Wait();
    EXPECT_EQ(done.exit_code, 128 + signal) << done.out;
    EXPECT_NE(done.out.find("run 1 interrupted; `accelopt resume 1`"), std::string::npos) << done.out;
    Json runs = Json::parse(Accelopt("runs --json" + db).out);
    ASSERT_EQ(runs.size(), 1u);
    EXPECT_EQ(runs[0]["status"], "interrupted");
  }
}

// Two runs at once on one machine and one store: both finish, their
// measurements take turns on the device, and the store holds both whole.
TEST(CliOptimize, TwoConcurrentRunsShareAStore) {
  testing::TempDir dir;
  const std::string db = " --db " + dir.path() + "/accelopt.db";
  const std::string args = "optimize --demo --shape test --suite " + std::string(ACCELOPT_SOURCE_DIR) + "/suite" + db;
  testing::BackgroundAccelopt first(args, dir.path() + "/first.log");
  testing::BackgroundAccelopt second(args, dir.path() + "/second.log");
  CommandRun a = first.Wait(), b = second.Wait();
  ASSERT_EQ(a.exit_code, 0) << a.out;
  ASSERT_EQ(b.exit_code, 0) << b.out;
  Json runs = Json::parse(Accelopt("runs --json" + db).out);
  ASSERT_EQ(runs.size(), 2u) << runs.dump();
  for (const auto& run : runs) {
    EXPECT_EQ(run["status"], "finished");
    EXPECT_EQ(run["summary"].size(), 3u);
    CommandRun show = Accelopt("show " + std::to_string(run["id"].get<int>()) + " --no-code" + db);
    EXPECT_EQ(show.exit_code, 0) << show.out;
    for (const char* task : {"silu", "matmul", "rmsnorm_matmul"})
      EXPECT_NE(show.out.find(std::string("== ") + task + ": best candidate"), std::string::npos) << show.out;
  }
}

// A task file changed under a run once resumed silently, mixing two shapes in
// one run: the run keeps its tasks' definitions, a resume against other files
// is refused naming the task and the file, and a suite that moved (the same
// files elsewhere) is taken with --suite.
TEST(CliOptimize, AResumeRefusesChangedTasksAndTakesAMovedSuite) {
  testing::TempDir dir;
  const std::string db = " --db " + dir.path() + "/accelopt.db";
  for (const char* where : {"/first", "/moved"}) {
    fs::create_directories(dir.path() + where);
    fs::copy(std::string(ACCELOPT_SOURCE_DIR) + "/suite/silu", dir.path() + where + "/silu");
  }
  CommandRun run = Accelopt("optimize --demo silu --shape test --suite " + dir.path() + "/first" + db);
  ASSERT_EQ(run.exit_code, 0) << run.out;
  Json runs = Json::parse(Accelopt("runs --json" + db).out);
  ASSERT_TRUE(runs[0]["config"]["task_definitions"]["silu"]["files"].contains("task.yaml")) << runs.dump();

  std::ofstream(dir.path() + "/first/silu/task.yaml", std::ios::app) << "# edited after the run began\n";
  CommandRun refused = Accelopt("resume 1" + db);
  EXPECT_EQ(refused.exit_code, 1) << refused.out;
  EXPECT_NE(refused.out.find("run 1 cannot resume"), std::string::npos) << refused.out;
  EXPECT_NE(refused.out.find("task 'silu' (" + dir.path() + "/first/silu): task.yaml changed"), std::string::npos)
      << refused.out;
  EXPECT_EQ(refused.out.find("resuming after iteration"), std::string::npos) << refused.out;

  CommandRun moved = Accelopt("resume 1 --suite " + dir.path() + "/moved" + db);
  ASSERT_EQ(moved.exit_code, 0) << moved.out;
  EXPECT_NE(moved.out.find("resuming after iteration 2"), std::string::npos) << moved.out;
  // What earlier sessions spent counts against the run's budget ($0 for a recording).
  EXPECT_NE(moved.out.find("run 1 spent $0.0000 on "), std::string::npos) << moved.out;
  fs::remove(dir.path() + "/moved/silu/baseline.cpp");
  CommandRun gone = Accelopt("resume 1 --suite " + dir.path() + "/moved" + db);
  EXPECT_EQ(gone.exit_code, 1) << gone.out;
  EXPECT_NE(gone.out.find("baseline.cpp is gone"), std::string::npos) << gone.out;
}

TEST(CliOptimize, UnknownRunIsAClearError) {
  testing::TempDir dir;
  const std::string db = " --db " + dir.path() + "/accelopt.db";
  { std::ofstream(dir.path() + "/none.json") << "[]"; }
  ASSERT_EQ(Accelopt("memory import " + dir.path() + "/none.json" + db).exit_code, 0);  // a store without runs
  CommandRun resume = Accelopt("resume 42" + db);
  EXPECT_EQ(resume.exit_code, 1);
  EXPECT_NE(resume.out.find("no run 42"), std::string::npos) << resume.out;
}

// `memory search` shows the lessons a planner of the described kernel would
// get, in its order: same bound and family first, then the largest verified effect.
TEST(CliMemory, SearchRanksAsAPlannerIsGivenAndFilters) {
  testing::TempDir dir;
  const std::string db = " --db " + dir.path() + "/accelopt.db";
  const std::string file = dir.path() + "/lessons.json";
  std::ofstream(file) << R"([
    {"task": "matmul", "family": "matmul", "bound": "mm", "speedup": 3.0, "speedup_low": 2.9, "speedup_high": 3.1,
     "speedup_coverage": 0.9375, "strategies": ["tiling"], "title": "Tile", "text": "**Tile** for L2"},
    {"task": "adamw", "family": "elementwise", "bound": "memory", "speedup": 1.3, "speedup_low": 1.2,
     "speedup_high": 1.4, "strategies": ["vectorization"], "title": "Vector sqrt", "text": "**Vector sqrt** no errno"},
    {"task": "silu", "family": "elementwise", "bound": "memory", "speedup": 0.5, "speedup_low": 0.45,
     "speedup_high": 0.55, "strategies": ["threading"], "title": "Too many threads", "text": "**Too many threads**"}
  ])";
  ASSERT_EQ(Accelopt("memory import " + file + " --memory m" + db).exit_code, 0);
  CommandRun ranked = Accelopt("memory search --memory m --tag family=elementwise --tag bound=memory --json" + db);
  ASSERT_EQ(ranked.exit_code, 0) << ranked.out;
  Json lessons = Json::parse(ranked.out);
  ASSERT_EQ(lessons.size(), 3u);
  EXPECT_EQ(lessons[0]["title"], "Too many threads");  // |log 0.55| > log 1.2
  EXPECT_EQ(lessons[0]["relevance"], 2);
  EXPECT_EQ(lessons[1]["title"], "Vector sqrt");
  EXPECT_EQ(lessons[2]["title"], "Tile");
  EXPECT_EQ(lessons[2]["relevance"], 0);
  CommandRun filtered = Accelopt("memory search --memory m --tag strategy=tiling L2" + db);
  EXPECT_EQ(filtered.exit_code, 0) << filtered.out;
  EXPECT_NE(filtered.out.find("1 of 3 lessons in memory 'm'"), std::string::npos) << filtered.out;
  EXPECT_NE(filtered.out.find("Lesson 1 (from matmul, matmul, mm-bound; tiling; made a kernel faster, 3.00x (93.75% "
                              "interval 2.90 to 3.10)):\n**Tile** for L2"),
            std::string::npos)
      << filtered.out;
  CommandRun bad = Accelopt("memory search --memory m --tag colour=red" + db);
  EXPECT_EQ(bad.exit_code, 2) << bad.out;
  EXPECT_NE(bad.out.find("unknown tag 'colour'"), std::string::npos) << bad.out;
}

// `compare` builds a task's own vendor anchor as `bench` does, linked with
// OpenBLAS, so a kernel can be timed side by side against it.
TEST(CliCompare, TheTasksVendorAnchorIsLinkedWithOpenBlas) {
  const std::string suite = std::string(ACCELOPT_SOURCE_DIR) + "/suite";
  CommandRun run = Accelopt("compare matmul " + suite + "/matmul/vendor.cpp " + suite +
                            "/matmul/baseline.cpp --shape test --suite " + suite);
  EXPECT_EQ(run.exit_code, 0) << run.out;
  EXPECT_EQ(run.out.find("compile_error"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("speedup of B over A: "), std::string::npos) << run.out;
}

}  // namespace
}  // namespace accelopt
