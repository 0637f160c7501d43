#include "core/paths.h"

#include <gtest/gtest.h>

#include <string>

namespace accelopt {
namespace {

// The tests' main moves every per-user path into the build folder: a test run
// neither reads the user's hardware profile nor leaves one behind.
TEST(Paths, TestsKeepTheirDataOutOfTheUsersHome) {
  const std::string home = ACCELOPT_TEST_HOME;
  EXPECT_EQ(DataDir().rfind(home, 0), 0u) << DataDir();
  EXPECT_EQ(CacheDir().rfind(home, 0), 0u) << CacheDir();
}

}  // namespace
}  // namespace accelopt
