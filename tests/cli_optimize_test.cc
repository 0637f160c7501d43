// `accelopt optimize --demo`, `runs`, `show`, `memory` and `resume` as a user runs them
// (test shape, so it takes seconds).

#include <gtest/gtest.h>
#include <stdio.h>

#include <string>

#include "core/json_io.h"
#include "testing/fake_llm_server.h"
#include "testing/run_command.h"
#include "testing/temp_dir.h"

namespace accelopt {
namespace {

using testing::Accelopt;
using testing::CommandRun;

TEST(CliOptimize, DemoRunsRecordsAndShows) {
  testing::TempDir dir;
  std::string db = " --db " + dir.path() + "/accelopt.db";
  CommandRun run = Accelopt("optimize --demo --shape test --suite " + std::string(ACCELOPT_SOURCE_DIR) + "/suite" + db);
  ASSERT_EQ(run.exit_code, 0) << run.out;
  for (const char* task : {"silu", "matmul", "rmsnorm_matmul"})
    EXPECT_NE(run.out.find(std::string("\n") + task + " "), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("% peak after"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("iteration 2/2"), std::string::npos) << run.out;

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

  CommandRun memory = Accelopt("memory list" + db);
  ASSERT_EQ(memory.exit_code, 0) << memory.out;
  EXPECT_NE(memory.out.find("demo ("), std::string::npos) << memory.out;

  // Resuming a finished run redoes nothing and reports the same table.
  CommandRun resume = Accelopt("resume 1" + db);
  ASSERT_EQ(resume.exit_code, 0) << resume.out;
  EXPECT_NE(resume.out.find("resuming after iteration 2"), std::string::npos) << resume.out;
  EXPECT_EQ(resume.out.find("evaluating the baseline"), std::string::npos) << resume.out;
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
  CommandRun runs = Accelopt("runs --json" + db);
  EXPECT_EQ(Json::parse(runs.out).size(), 0u) << runs.out;  // no run was created
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

TEST(CliOptimize, UnknownRunIsAClearError) {
  testing::TempDir dir;
  CommandRun resume = Accelopt("resume 42 --db " + dir.path() + "/accelopt.db");
  EXPECT_EQ(resume.exit_code, 1);
  EXPECT_NE(resume.out.find("no run 42"), std::string::npos) << resume.out;
}

}  // namespace
}  // namespace accelopt
