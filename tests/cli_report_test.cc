// `accelopt report` as a user runs it: the file it writes by default, and
// errors that name what was wrong (a store, a run, an output path).

#include <gtest/gtest.h>

#include <filesystem>

#include "core/json_io.h"
#include "store/store.h"
#include "testing/run_command.h"
#include "testing/temp_dir.h"

namespace accelopt {
namespace {

namespace fs = std::filesystem;

TEST(CliReport, WritesReportRunHtmlAndNamesWhatWasWrong) {
  testing::TempDir dir;
  const std::string db = dir.path() + "/accelopt.db";
  {
    auto store = store::OpenSqliteStore({.path = db});
    ASSERT_TRUE(store.ok()) << store.error().message;
    auto run = (*store)->CreateRun(Json{{"tasks", {"silu"}}});
    ASSERT_TRUE(run.ok());
    Candidate c;
    c.code = "void k() {}";
    c.profile.status = Verdict::kCompileError;
    ASSERT_TRUE((*store)->AddCandidate({*run, "silu", c}).ok());
  }
  testing::CommandRun made = testing::RunShell("cd " + dir.path() + " && " + testing::AccelBinary() + " report 1");
  ASSERT_EQ(made.exit_code, 0) << made.out;
  auto html = ReadFile(dir.path() + "/report-1.html");
  ASSERT_TRUE(html.ok()) << made.out;
  EXPECT_NE(html->find("void k() {}"), std::string::npos);

  testing::CommandRun no_store = testing::Accelopt("report 1 --store " + dir.path() + "/missing.db");
  EXPECT_EQ(no_store.exit_code, 1);
  EXPECT_NE(no_store.out.find("missing.db"), std::string::npos) << no_store.out;
  EXPECT_FALSE(fs::exists(dir.path() + "/missing.db")) << "a mistyped store is never created";

  testing::CommandRun no_run = testing::Accelopt("report 7 --store " + db);
  EXPECT_EQ(no_run.exit_code, 1);
  EXPECT_NE(no_run.out.find("no run 7"), std::string::npos) << no_run.out;

  // A regular file where the output's folder should be.
  testing::CommandRun unwritable = testing::Accelopt("report 1 --store " + db + " -o " + db + "/report.html");
  EXPECT_EQ(unwritable.exit_code, 1);
  EXPECT_NE(unwritable.out.find("cannot write the report"), std::string::npos) << unwritable.out;
  EXPECT_NE(unwritable.out.find(db + "/report.html"), std::string::npos) << unwritable.out;
}

}  // namespace
}  // namespace accelopt
