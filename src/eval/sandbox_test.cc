// The sandbox's isolation (issue 24): what an isolated child sees of the
// machine, checked with ordinary programs run in it.

#include "eval/sandbox.h"

#include <gtest/gtest.h>
#include <grp.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

namespace accelopt::eval {
namespace {

SandboxOutcome RunIsolated(const std::string& script) {
  SandboxRequest request;
  request.argv = {"/bin/sh", "-c", script};
  request.isolate = true;
  request.limits.wall_seconds = 20;
  auto child = SandboxedProcess::Start(request);
  EXPECT_TRUE(child.ok()) << child.error().message;
  if (!child.ok()) return {};
  EXPECT_TRUE((*child)->isolation().full()) << (*child)->isolation().refused;
  return (*child)->Wait();
}

class Isolated : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!ProbeIsolation().full()) GTEST_SKIP() << "this machine refuses isolation: " << ProbeIsolation().refused;
  }
};

// Its own PID namespace and /proc: the engine has no entry there (no
// /proc/PID/mem to open), and it sees no process but its namespace's init.
TEST_F(Isolated, SeesNoProcessOfTheEngine) {
  const std::string engine = std::to_string(getpid());
  auto run = RunIsolated("test ! -e /proc/" + engine + " && ls /proc | grep -E '^[0-9]+$' | sort -n | tr '\\n' ' '");
  ASSERT_TRUE(run.exited_cleanly()) << run.out << run.err;
  // 1: the idle init; 2: the shell; 3: ls; 4, 5...: the pipeline's other programs.
  EXPECT_EQ(run.out.rfind("1 2 ", 0), 0u) << run.out;
  EXPECT_EQ(run.out.find(engine + " "), std::string::npos) << run.out;
}

// A user of its own: not root, and not the engine's.
TEST_F(Isolated, RunsAsAUserOfItsOwn) {
  auto run = RunIsolated("id -u; id -g; cat /proc/self/status | grep CapEff");
  ASSERT_TRUE(run.exited_cleanly()) << run.out << run.err;
  const unsigned uid = static_cast<unsigned>(std::stoul(run.out));
  EXPECT_GE(uid, kSandboxUidBase);
  EXPECT_NE(uid, static_cast<unsigned>(getuid()));
  EXPECT_NE(run.out.find("CapEff:\t0000000000000000"), std::string::npos) << run.out;
}

// Its own network namespace: loopback only (down), none of the machine's interfaces.
TEST_F(Isolated, HasNoNetwork) {
  auto run = RunIsolated("tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' '");
  ASSERT_TRUE(run.exited_cleanly()) << run.out << run.err;
  EXPECT_EQ(run.out, "lo\n");
}

// Its own IPC namespace: a System V segment it makes is gone once it ended.
TEST_F(Isolated, SystemVSharedMemoryDiesWithIt) {
  auto run = RunIsolated("ipcmk -M 4096 >/dev/null && ipcs -m | grep -c '^0x'");
  ASSERT_TRUE(run.exited_cleanly()) << run.out << run.err;
  EXPECT_EQ(run.out, "1\n") << "its namespace held only its own segment";
  // The namespace ended with it: nothing of it is left in the engine's (which
  // it never shared), and a new isolated child starts with none.
  auto after = RunIsolated("ipcs -m | grep -c '^0x' || true");
  EXPECT_EQ(after.out, "0\n");
}

// It sees only the environment a kernel needs, not the engine's (API keys,
// the engine's folders); what the request adds and the OpenMP settings pass.
TEST_F(Isolated, SeesOnlyTheEnvironmentItNeeds) {
  setenv("ACCELOPT_TEST_SECRET", "do-not-show", 1);
  setenv("OMP_TEST_SETTING", "kept", 1);
  SandboxRequest request;
  request.argv = {"/usr/bin/env"};
  request.env = {"ADDED=yes"};
  request.isolate = true;
  auto run = RunSandboxed(request);
  unsetenv("ACCELOPT_TEST_SECRET");
  unsetenv("OMP_TEST_SETTING");
  ASSERT_TRUE(run.ok()) << run.error().message;
  EXPECT_EQ(run->out.find("do-not-show"), std::string::npos) << run->out;
  EXPECT_NE(run->out.find("OMP_TEST_SETTING=kept"), std::string::npos) << run->out;
  EXPECT_NE(run->out.find("ADDED=yes"), std::string::npos) << run->out;
  EXPECT_NE(run->out.find("PATH="), std::string::npos) << run->out;
}

// Nothing of it survives: a child it left behind dies with its namespace.
TEST_F(Isolated, LeavesNoProcessBehind) {
  auto run = RunIsolated("setsid sleep 1000 & echo started");
  ASSERT_TRUE(run.exited_cleanly()) << run.out << run.err;
  FILE* ps = popen("pgrep -x -f 'sleep 1000' | wc -l", "r");
  ASSERT_NE(ps, nullptr);
  char line[32] = {};
  ASSERT_NE(fgets(line, sizeof line, ps), nullptr);
  pclose(ps);
  EXPECT_EQ(std::string(line), "0\n");
}

// An engine that is not root isolates its child in a user namespace of its
// own, where the machine lets an ordinary user make one: a user of its own
// there without capabilities, its own /proc, nothing of the engine in sight.
// Run from a forked copy of this test that became an ordinary user.
TEST(Sandbox, AnOrdinaryUsersChildGetsAUserNamespaceOfItsOwn) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root, to become an ordinary user in a forked copy";
  auto allowed = RunSandboxed(SandboxRequest{
      {"/bin/sh", "-c", "setpriv --reuid=65534 --regid=65534 --clear-groups unshare -r -p -f -i -n -m --mount-proc true"}});
  if (!allowed.ok() || !allowed->exited_cleanly()) GTEST_SKIP() << "this machine refuses ordinary users a user namespace";
  int out[2];
  ASSERT_EQ(pipe(out), 0);
  const pid_t engine = getpid();
  const pid_t copy = fork();
  ASSERT_GE(copy, 0);
  if (copy == 0) {
    close(out[0]);
    if (setgroups(0, nullptr) != 0 || setresgid(65534, 65534, 65534) != 0 || setresuid(65534, 65534, 65534) != 0)
      _exit(2);
    SandboxRequest request;
    request.argv = {"/bin/sh", "-c",
                    "id -u; grep CapEff /proc/self/status; test ! -e /proc/" + std::to_string(engine) +
                        " && echo hidden; cat /proc/1/environ >/dev/null 2>&1 || echo sealed"};
    request.isolate = true;
    request.workdir = "/";
    auto child = SandboxedProcess::Start(request);
    if (!child.ok()) _exit(3);
    const SandboxIsolation isolation = (*child)->isolation();
    const SandboxOutcome run = (*child)->Wait();
    const std::string report = std::string(isolation.full() ? "full" : isolation.refused) + "|" +
                               (isolation.user_namespace ? "userns" : "no-userns") + "|" + run.out;
    ssize_t ignored = write(out[1], report.data(), report.size());
    (void)ignored;
    _exit(0);
  }
  close(out[1]);
  std::string report;
  char buf[4096];
  for (ssize_t n; (n = read(out[0], buf, sizeof buf)) > 0;) report.append(buf, n);
  close(out[0]);
  int status = 0;
  waitpid(copy, &status, 0);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "the forked copy failed: " << status;
  EXPECT_EQ(report.rfind("full|userns|", 0), 0u) << report;
  EXPECT_NE(report.find(std::to_string(kSandboxUidBase) + "\n"), std::string::npos) << report;
  EXPECT_NE(report.find("CapEff:\t0000000000000000"), std::string::npos) << report;
  EXPECT_NE(report.find("hidden"), std::string::npos) << report;
  EXPECT_NE(report.find("sealed"), std::string::npos) << "its init, a copy of the engine, was readable: " << report;
}

// Not isolated unless asked: the engine's own tools (compilers) run as before.
TEST(Sandbox, NotIsolatedUnlessAsked) {
  SandboxRequest request;
  request.argv = {"/bin/sh", "-c", "id -u"};
  auto run = RunSandboxed(request);
  ASSERT_TRUE(run.ok()) << run.error().message;
  EXPECT_EQ(run->out, std::to_string(getuid()) + "\n");
}

}  // namespace
}  // namespace accelopt::eval
