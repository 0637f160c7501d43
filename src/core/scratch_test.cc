// Scratch folders: removed when dropped or on interruption; those of a
// process that was killed outright are swept by the next one.

#include "core/scratch.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>

#include "testing/temp_dir.h"

namespace accelopt {
namespace {

namespace fs = std::filesystem;

TEST(ScratchDir, RemovedWhenDroppedUnlessKept) {
  testing::TempDir parent;
  fs::path dropped, kept;
  {
    auto a = ScratchDir::Create(parent.path(), "silu", /*keep=*/false);
    auto b = ScratchDir::Create(parent.path(), "silu", /*keep=*/true);
    ASSERT_TRUE(a.ok() && b.ok());
    dropped = (*a)->path(), kept = (*b)->path();
    EXPECT_TRUE(fs::is_directory(dropped));
  }
  EXPECT_FALSE(fs::exists(dropped));
  EXPECT_TRUE(fs::exists(kept));
  EXPECT_EQ(SweepStaleScratchDirs(parent.path()), 0);  // a kept folder is never swept
  EXPECT_TRUE(fs::exists(kept));
}

TEST(ScratchDir, LiveFoldersAreRemovedOnRequest) {
  testing::TempDir parent;
  auto a = ScratchDir::Create(parent.path(), "matmul", false);
  ASSERT_TRUE(a.ok());
  RemoveLiveScratchDirs();
  EXPECT_FALSE(fs::exists((*a)->path()));
}

TEST(ScratchDir, FoldersOfDeadProcessesAreSweptOthersKept) {
  testing::TempDir parent;
  // A process that created a folder and was killed before it could remove it.
  pid_t child = fork();
  if (child == 0) {
    auto dir = ScratchDir::Create(parent.path(), "killed", false);
    _exit(dir.ok() ? 0 : 1);  // _exit: no destructor runs, as with kill -9
  }
  int status = 0;
  waitpid(child, &status, 0);
  ASSERT_EQ(WEXITSTATUS(status), 0);
  // A folder from an older version, named by a dead pid, without a lock file.
  fs::create_directories(parent.path() + "/" + std::to_string(child) + "-old-silu");
  auto mine = ScratchDir::Create(parent.path(), "alive", false);  // this process is alive
  ASSERT_TRUE(mine.ok());
  fs::create_directories(parent.path() + "/" + std::to_string(getpid()) + "-unlocked-but-alive");

  EXPECT_EQ(SweepStaleScratchDirs(parent.path()), 2);
  std::vector<std::string> left;
  for (const auto& e : fs::directory_iterator(parent.path())) left.push_back(e.path().filename().string());
  std::sort(left.begin(), left.end());
  ASSERT_EQ(left.size(), 2u);
  EXPECT_TRUE(fs::exists((*mine)->path()));
  EXPECT_TRUE(fs::exists(parent.path() + "/" + std::to_string(getpid()) + "-unlocked-but-alive"));
}

}  // namespace
}  // namespace accelopt
