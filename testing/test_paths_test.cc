#include "testing/test_paths.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <filesystem>

#include "testing/scoped_env.h"
#include "testing/temp_dir.h"

namespace accelopt::testing {
namespace {

namespace fs = std::filesystem;

// Changes the working folder for one scope.
class ScopedCwd {
 public:
  explicit ScopedCwd(const std::string& to) : from_(fs::current_path()) { fs::current_path(to); }
  ~ScopedCwd() { fs::current_path(from_); }

 private:
  fs::path from_;
};

TEST(TestPaths, TheEnvironmentNamesTheSourceTreeAndTheHome) {
  ScopedEnv source("ACCELOPT_SOURCE_DIR", "/elsewhere/accelopt");
  ScopedEnv home("ACCELOPT_TEST_HOME", "/elsewhere/home");
  ScopedEnv binary("ACCELOPT_BINARY", "/elsewhere/bin/accelopt");
  EXPECT_EQ(SourceDir(), "/elsewhere/accelopt");
  EXPECT_EQ(TestHome(), "/elsewhere/home");
  EXPECT_EQ(AccelBinary(), "/elsewhere/bin/accelopt");
}

// Without the environment, from any working folder: the checkout the build
// folder is in, as a test binary run from a bundle's bin/ finds its src/.
TEST(TestPaths, WithoutTheEnvironmentTheTreeIsFoundFromTheBinary) {
  const char* saved = getenv("ACCELOPT_SOURCE_DIR");
  const std::string was = saved ? saved : "";
  unsetenv("ACCELOPT_SOURCE_DIR");
  TempDir elsewhere;
  std::string found;
  {
    ScopedCwd cwd(elsewhere.path());
    found = SourceDir();
  }
  if (saved) setenv("ACCELOPT_SOURCE_DIR", was.c_str(), 1);
  if (fs::path(ExecutableDir()).parent_path() != fs::canonical(ACCELOPT_SOURCE_DIR))
    GTEST_SKIP() << "the build folder is not inside the checkout";
  EXPECT_EQ(fs::canonical(found), fs::canonical(ACCELOPT_SOURCE_DIR));
  EXPECT_TRUE(fs::exists(fs::path(found) / "suite/silu/task.yaml"));
  EXPECT_EQ(AccelBinary(), ExecutableDir() + "/accelopt");
}

}  // namespace
}  // namespace accelopt::testing
