// The tests' main: before any test runs, every accelopt path that would land
// in the user's home (hardware profiles, builds, scratch) is moved into the
// build folder, for this process and every accelopt command a test starts.
// A test never writes into ~/.local/share/accelopt or ~/.cache/accelopt, and
// never scores against a profile the user calibrated.

#include <gtest/gtest.h>
#include <stdlib.h>

#include <string>

#include "testing/test_paths.h"

int main(int argc, char** argv) {
  // A binary built with its home compiled in (accelopt_tests) keeps it unless
  // $ACCELOPT_TEST_HOME says otherwise; one built without (accelopt_gpu_tests,
  // which runs from a bundle too) finds it beside itself.
#ifdef ACCELOPT_TEST_HOME
  if (!getenv("ACCELOPT_TEST_HOME")) setenv("ACCELOPT_TEST_HOME", ACCELOPT_TEST_HOME, 1);
#endif
  const std::string home = accelopt::testing::TestHome();
  setenv("ACCELOPT_HOME", (home + "/data").c_str(), 1);
  setenv("ACCELOPT_CACHE", (home + "/cache").c_str(), 1);
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
