// The control group of an isolated child (issue 24): everything its
// processes allocate is counted together, and the group is gone when it ends.

#include "eval/cgroup.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <sstream>
#include <string>

#include "eval/sandbox.h"

namespace accelopt::eval {
namespace {

bool Exists(const std::string& path) {
  struct stat st {};
  return stat(path.c_str(), &st) == 0;
}

class IsolatedGroup : public ::testing::Test {
 protected:
  void SetUp() override {
    const SandboxIsolation& probed = ProbeIsolation();
    if (!probed.full()) GTEST_SKIP() << "this machine refuses isolation: " << probed.refused;
    if (probed.limits.rfind("cgroup", 0) != 0) GTEST_SKIP() << "no control group here: " << probed.limits;
  }

  SandboxOutcome Run(const std::string& script, long memory_bytes, SandboxIsolation* isolation = nullptr) {
    SandboxRequest request;
    request.argv = {"/bin/sh", "-c", script};
    request.isolate = true;
    request.limits.wall_seconds = 30;
    request.limits.address_space_bytes = memory_bytes;
    auto child = SandboxedProcess::Start(request);
    EXPECT_TRUE(child.ok()) << child.error().message;
    if (!child.ok()) return {};
    if (isolation) *isolation = (*child)->isolation();
    return (*child)->Wait();
  }
};

TEST_F(IsolatedGroup, MakesAndRemovesItsFolders) {
  auto group = SandboxCgroup::Create({64L << 20, 16, {}});
  ASSERT_TRUE(group.ok()) << group.error().message;
  const std::vector<std::string> folders = (*group)->folders();
  ASSERT_FALSE(folders.empty());
  for (const auto& f : folders) EXPECT_TRUE(Exists(f)) << f;
  EXPECT_NE((*group)->description().find("memory 64 MiB, 16 tasks"), std::string::npos) << (*group)->description();
  group->reset();
  for (const auto& f : folders) EXPECT_FALSE(Exists(f)) << f << " outlived its group";
}

// A group an engine that was killed left behind (named after a pid that no
// longer runs) is removed when the next engine makes its first group there.
TEST_F(IsolatedGroup, AGroupLeftByADeadEngineIsRemoved) {
  auto group = SandboxCgroup::Create({64L << 20, 16, {}});
  ASSERT_TRUE(group.ok()) << group.error().message;
  const std::string parent = (*group)->folders()[0].substr(0, (*group)->folders()[0].rfind('/'));
  group->reset();
  // A pid that ran and is gone: a child of ours, reaped.
  const pid_t gone = fork();
  if (gone == 0) _exit(0);
  waitpid(gone, nullptr, 0);
  const std::string stale = parent + "/accelopt-" + std::to_string(gone) + "-0";
  ASSERT_EQ(mkdir(stale.c_str(), 0755), 0) << stale;
  RemoveStaleCgroups(parent);
  EXPECT_FALSE(Exists(stale)) << stale << " was left";
}

// Every process of the child is in the group its isolation names, and the
// group's folders are gone once the child was waited for.
TEST_F(IsolatedGroup, HoldsEveryProcessOfTheChildAndEndsWithIt) {
  SandboxIsolation isolation;
  auto run = Run("cat /proc/self/cgroup", 256L << 20, &isolation);
  ASSERT_TRUE(run.exited_cleanly()) << run.err;
  const std::string name = isolation.limits.substr(10, isolation.limits.find(':') - 10);  // "cgroup vN NAME: ..."
  ASSERT_EQ(name.rfind("accelopt-", 0), 0u) << isolation.limits;
  std::istringstream lines(run.out);
  int in_group = 0;
  for (std::string line; std::getline(lines, line);) {
    if (line.find("/" + name) == std::string::npos) continue;
    ++in_group;
    // "4:memory:/x/accelopt-1-2" -> /sys/fs/cgroup/memory/x/accelopt-1-2; "0::/x/..." -> /sys/fs/cgroup/x/...
    const size_t a = line.find(':'), b = line.find(':', a + 1);
    const std::string controller = line.substr(a + 1, b - a - 1);
    const std::string folder = "/sys/fs/cgroup" + (controller.empty() ? "" : "/" + controller) + line.substr(b + 1);
    EXPECT_FALSE(Exists(folder)) << folder << " outlived the child";
  }
  EXPECT_GE(in_group, 1) << run.out;
}

// Four processes of 100 MiB each: each is within a 256 MiB address-space
// limit of its own, but together they are not, and the group counts them
// together (the out-of-memory killer ends at least one).
TEST_F(IsolatedGroup, CountsTheMemoryOfAllItsProcessesTogether) {
  const std::string hold = "python3 -c 'import time; b = b\"x\" * (100 << 20); time.sleep(2); print(\"held\")'";
  auto run = Run("for i in 1 2 3 4; do " + hold + " & done; wait", 256L << 20);
  int held = 0;
  for (size_t at = run.out.find("held"); at != std::string::npos; at = run.out.find("held", at + 1)) ++held;
  EXPECT_LT(held, 4) << "four processes of 100 MiB each all ran within a group of 256 MiB\n" << run.err;
  auto alone = Run(hold, 256L << 20);
  EXPECT_EQ(alone.out, "held\n") << "one process of 100 MiB alone fits: " << alone.err;
}

}  // namespace
}  // namespace accelopt::eval
