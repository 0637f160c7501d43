#include "core/paths.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "core/dist.h"
#include "testing/temp_dir.h"

namespace accelopt {
namespace {
namespace fs = std::filesystem;

// Runs the body with the working directory at `dir`, then goes back.
class InDirectory {
 public:
  explicit InDirectory(const std::string& dir) : before_(fs::current_path()) { fs::current_path(dir); }
  ~InDirectory() { fs::current_path(before_); }

 private:
  fs::path before_;
};

// The tests' main moves every per-user path into the build folder: a test run
// neither reads the user's hardware profile nor leaves one behind.
TEST(Paths, TestsKeepTheirDataOutOfTheUsersHome) {
  const std::string home = ACCELOPT_TEST_HOME;
  EXPECT_EQ(DataDir().rfind(home, 0), 0u) << DataDir();
  EXPECT_EQ(CacheDir().rfind(home, 0), 0u) << CacheDir();
}

// A build tree (no marker beside bin/): ./suite wins over the one beside the
// executable's folder, which is the fallback.
TEST(Paths, BuildTreeDataPrefersTheWorkingDirectory) {
  testing::TempDir root, work;
  fs::create_directories(root.path() + "/build");
  fs::create_directories(root.path() + "/suite");
  fs::create_directories(root.path() + "/prompts");
  fs::create_directories(work.path() + "/suite");
  InDirectory here(work.path());
  EXPECT_EQ(ProjectDataPathFor(root.path() + "/build", "suite"), fs::absolute("suite").string());
  EXPECT_EQ(ProjectDataPathFor(root.path() + "/build", "prompts"), root.path() + "/prompts");
  EXPECT_EQ(ProjectDataPathFor(root.path() + "/build", "missing"), "missing");
}

// An unpacked dist (kDistMarker at its root) reads its own data whatever the
// working directory holds, and falls back as a build tree does for what it lacks.
TEST(Paths, DistDataComesFromBesideTheExecutable) {
  testing::TempDir root, work;
  fs::create_directories(root.path() + "/bin");
  fs::create_directories(root.path() + "/suite");
  std::ofstream(root.path() + "/" + kDistMarker) << "accelopt\n";
  fs::create_directories(work.path() + "/suite");
  fs::create_directories(work.path() + "/extra");
  InDirectory here(work.path());
  EXPECT_EQ(ProjectDataPathFor(root.path() + "/bin", "suite"), root.path() + "/suite");
  EXPECT_EQ(ProjectDataPathFor(root.path() + "/bin", "extra"), fs::absolute("extra").string());
}

// The tests run from the build tree, which is no dist.
TEST(Paths, TheBuildTreeIsNoDist) { EXPECT_EQ(DistRoot(), ""); }

}  // namespace
}  // namespace accelopt
