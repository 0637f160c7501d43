// The Slurm commands SlurmWorkers runs, checked without a cluster: a runner
// that records each command line and answers as Slurm 22.05 does.

#include "service/slurm_workers.h"

#include <gtest/gtest.h>

#include <deque>

namespace accelopt::service {
namespace {

// Answers commands from a script, in order; records what was asked.
struct ScriptedSlurm {
  std::vector<std::vector<std::string>> asked;
  std::deque<CommandOutput> answers;
  CommandRunner Runner() {
    return [this](const std::vector<std::string>& argv) -> Result<CommandOutput> {
      asked.push_back(argv);
      if (answers.empty()) return CommandOutput{};
      CommandOutput next = answers.front();
      answers.pop_front();
      return next;
    };
  }
};

SlurmWorkersOptions Options(ScriptedSlurm& slurm, std::vector<std::string>* said) {
  SlurmWorkersOptions o;
  o.slurm.partition = "gpu";
  o.slurm.gres = "gpu:1";
  o.slurm.time_limit = "1:00:00";
  o.slurm.account = "lab";
  o.slurm.max_workers = 2;
  o.program = "/opt/accelopt/bin/accelopt";
  o.arguments = {"worker", "--db", "/shared/accelopt.db", "--machine-class", "h100 node"};
  o.name_prefix = "run7-worker";
  o.log_dir = "/shared/logs";
  o.idle_exit_seconds = 60;
  o.run = slurm.Runner();
  o.say = [said](const std::string& text) { said->push_back(text); };
  return o;
}

TEST(SlurmWorkers, SbatchRunsTheWorkerWithTheSettingsAndNoPasswordOnTheLine) {
  SlurmSettings s;
  s.partition = "gpu";
  s.gres = "gpu:1";
  s.time_limit = "30:00";
  s.account = "lab";
  auto argv = SbatchCommand(s, "run1-worker-1", "/logs/run1-worker-1.log",
                            {"/bin/accelopt", "worker", "--queue", "postgresql://me@db/q", "--machine-class", "it's"});
  const std::vector<std::string> expected = {
      "sbatch",
      "--parsable",
      "--job-name=run1-worker-1",
      "--output=/logs/run1-worker-1.log",
      "--partition=gpu",
      "--ntasks=1",
      "--no-requeue",
      "--export=ALL",
      "--gres=gpu:1",
      "--time=30:00",
      "--account=lab",
      "--wrap=exec '/bin/accelopt' 'worker' '--queue' 'postgresql://me@db/q' '--machine-class' 'it'\\''s'"};
  EXPECT_EQ(argv, expected);
  SlurmSettings bare;
  bare.partition = "test";
  auto plain = SbatchCommand(bare, "w", "/l", {"/a"});
  EXPECT_EQ(plain.size(), 9u) << "no --gres, --time or --account when not asked for";
}

TEST(SlurmWorkers, ParsesScontrolAndSqueue) {
  auto running = ParseScontrolJob(
      "JobId=12 JobName=run1-worker-1 UserId=root(0) JobState=RUNNING Reason=None Dependency=(null) Requeue=0 "
      "Restarts=0 BatchFlag=1 Reboot=0 ExitCode=0:0 NodeList=node1 BatchHost=node1");
  ASSERT_TRUE(running.ok()) << running.error().message;
  EXPECT_EQ(running->state, "RUNNING");
  EXPECT_EQ(running->node, "node1");
  EXPECT_FALSE(running->Ended());
  auto cancelled = ParseScontrolJob("JobId=12 JobState=CANCELLED Reason=None ExitCode=0:15 NodeList=node1\n");
  ASSERT_TRUE(cancelled.ok());
  EXPECT_TRUE(cancelled->Ended());
  EXPECT_EQ(cancelled->exit_code, 0);
  EXPECT_EQ(cancelled->signal, 15);
  auto failed = ParseScontrolJob("JobId=13 JobState=FAILED Reason=NonZeroExitCode ExitCode=1:0 NodeList=(null)");
  ASSERT_TRUE(failed.ok());
  EXPECT_EQ(failed->exit_code, 1);
  EXPECT_EQ(failed->reason, "NonZeroExitCode");
  EXPECT_EQ(failed->node, "");
  EXPECT_FALSE(ParseScontrolJob("slurm_load_jobs error: Invalid job id specified").ok());

  auto listed = ParseSqueue("12|RUNNING|node1\n13|PENDING|\n\n");
  ASSERT_EQ(listed.size(), 2u);
  EXPECT_EQ(listed["12"].state, "RUNNING");
  EXPECT_EQ(listed["12"].node, "node1");
  EXPECT_EQ(listed["13"].state, "PENDING");
}

TEST(SlurmWorkers, SubmitsAsTheQueueNeedsThemUpToTheMaximum) {
  ScriptedSlurm slurm;
  std::vector<std::string> said;
  SlurmWorkers workers(Options(slurm, &said));
  ASSERT_TRUE(workers.Tend(0).ok());
  EXPECT_TRUE(slurm.asked.empty()) << "no work, no job";

  slurm.answers = {{0, "101\n", ""}};
  ASSERT_TRUE(workers.Tend(1).ok());
  ASSERT_EQ(slurm.asked.size(), 1u);
  const auto& sbatch = slurm.asked[0];
  EXPECT_EQ(sbatch[0], "sbatch");
  EXPECT_EQ(sbatch.back(),
            "--wrap=exec '/opt/accelopt/bin/accelopt' 'worker' '--db' '/shared/accelopt.db' '--machine-class' "
            "'h100 node' '--name' 'run7-worker-1' '--idle-exit' '60'");
  EXPECT_NE(std::find(sbatch.begin(), sbatch.end(), "--output=/shared/logs/run7-worker-1.log"), sbatch.end());

  // Five jobs outstanding: one more worker (the maximum is two); the first's state is read first.
  slurm.asked.clear();
  slurm.answers = {{0, "101|PENDING|\n", ""}, {0, "102;cluster\n", ""}};
  ASSERT_TRUE(workers.Tend(5).ok());
  ASSERT_EQ(slurm.asked.size(), 2u);
  EXPECT_EQ(slurm.asked[0], (std::vector<std::string>{"squeue", "-h", "--states=all", "-j", "101", "-o", "%i|%T|%N"}));
  EXPECT_EQ(slurm.asked[1][0], "sbatch");
  ASSERT_EQ(workers.Workers().size(), 2u);
  EXPECT_EQ(workers.Workers()[1].job_id, "102");

  // The first starts, the second fails: its exit code comes from scontrol; one replaces it.
  slurm.asked.clear();
  slurm.answers = {{0, "101|RUNNING|node1\n102|FAILED|node2\n", ""},
                   {0, "JobId=102 JobState=FAILED Reason=NonZeroExitCode ExitCode=1:0 NodeList=node2", ""},
                   {0, "103\n", ""}};
  ASSERT_TRUE(workers.Tend(5).ok());
  ASSERT_EQ(slurm.asked.size(), 3u);
  EXPECT_EQ(slurm.asked[1], (std::vector<std::string>{"scontrol", "show", "job", "-o", "102"}));
  auto all = workers.Workers();
  ASSERT_EQ(all.size(), 3u);
  EXPECT_EQ(all[0].state.state, "RUNNING");
  EXPECT_EQ(all[1].state.state, "FAILED");
  EXPECT_EQ(all[1].state.exit_code, 1);
  bool said_failed = false, said_running = false;
  for (const auto& line : said) {
    said_failed |= line.find("job 102 (run7-worker-2) ended: FAILED, exit code 1") != std::string::npos &&
                   line.find("/shared/logs/run7-worker-2.log") != std::string::npos;
    said_running |= line.find("job 101 (run7-worker-1) running on node1") != std::string::npos;
  }
  EXPECT_TRUE(said_failed && said_running) << ::testing::PrintToString(said);

  // The end cancels the two live jobs at once and reads their final states.
  slurm.asked.clear();
  slurm.answers = {{0, "", ""},
                   {0, "101|CANCELLED|node1\n103|CANCELLED|\n", ""},
                   {0, "JobId=101 JobState=CANCELLED Reason=None ExitCode=0:15 NodeList=node1", ""},
                   {0, "JobId=103 JobState=CANCELLED Reason=None ExitCode=0:0 NodeList=(null)", ""}};
  ASSERT_TRUE(workers.Stop(5).ok());
  ASSERT_GE(slurm.asked.size(), 1u);
  EXPECT_EQ(slurm.asked[0], (std::vector<std::string>{"scancel", "101", "103"}));
  for (const auto& w : workers.Workers()) EXPECT_TRUE(w.state.Ended()) << w.job_id << " " << w.state.state;
  slurm.asked.clear();
  ASSERT_TRUE(workers.Stop().ok());
  EXPECT_TRUE(slurm.asked.empty()) << "stopping twice cancels nothing twice";
}

TEST(SlurmWorkers, ASbatchFailureSaysWhatSbatchSaid) {
  ScriptedSlurm slurm;
  std::vector<std::string> said;
  SlurmWorkers workers(Options(slurm, &said));
  slurm.answers = {{1, "", "sbatch: error: invalid partition specified: gpu\n"}};
  Status s = workers.Tend(1);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().message.find("sbatch failed (exit 1): sbatch: error: invalid partition specified: gpu"),
            std::string::npos)
      << s.error().message;
  EXPECT_TRUE(workers.Workers().empty());
}

// A node that cannot run the worker must not be given an endless stream of jobs.
TEST(SlurmWorkers, StopsSubmittingAfterJobsFailInARow) {
  ScriptedSlurm slurm;
  std::vector<std::string> said;
  SlurmWorkersOptions options = Options(slurm, &said);
  options.slurm.max_workers = 1;
  options.max_failures = 2;
  options.first_number = 4;
  SlurmWorkers workers(std::move(options));
  slurm.answers = {{0, "1\n", ""}};
  ASSERT_TRUE(workers.Tend(3).ok());
  EXPECT_EQ(workers.Workers()[0].name, "run7-worker-4") << "a resumed run goes on counting";
  slurm.answers = {{0, "1|FAILED|n1\n", ""}, {0, "JobId=1 JobState=FAILED ExitCode=127:0", ""}, {0, "2\n", ""}};
  ASSERT_TRUE(workers.Tend(3).ok());
  ASSERT_EQ(workers.Workers().size(), 2u) << "one failure: replaced";
  slurm.answers = {{0, "2|FAILED|n1\n", ""}, {0, "JobId=2 JobState=FAILED ExitCode=127:0", ""}};
  Status s = workers.Tend(3);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().message.find("2 worker jobs failed in a row"), std::string::npos) << s.error().message;
  EXPECT_NE(s.error().message.find("/shared/logs/run7-worker-5.log"), std::string::npos) << s.error().message;
  EXPECT_EQ(workers.Workers().size(), 2u) << "a third was submitted";
}

TEST(SlurmWorkers, AJobTheControllerForgotIsUnknownNotAnError) {
  ScriptedSlurm slurm;
  std::vector<std::string> said;
  SlurmWorkers workers(Options(slurm, &said));
  slurm.answers = {{0, "7\n", ""}};
  ASSERT_TRUE(workers.Tend(1).ok());
  slurm.answers = {{1, "", "slurm_load_jobs error: Invalid job id specified\n"},
                   {1, "", "slurm_load_jobs error: Invalid job id specified\n"}};
  ASSERT_TRUE(workers.Tend(0).ok());
  EXPECT_EQ(workers.Workers()[0].state.state, "UNKNOWN");
}

TEST(SlurmWorkers, TheSettingsAreCheckedBySbatchWithoutSubmitting) {
  ScriptedSlurm slurm;
  SlurmSettings s;
  s.partition = "gpu";
  s.account = "nobody";
  slurm.answers = {{1, "",
                    "sbatch: error: Batch job submission failed: Invalid account or account/partition "
                    "combination specified\n"}};
  Status checked = CheckSlurmSettings(s, slurm.Runner());
  ASSERT_FALSE(checked.ok());
  EXPECT_NE(checked.error().message.find("Invalid account"), std::string::npos) << checked.error().message;
  ASSERT_EQ(slurm.asked.size(), 1u);
  EXPECT_EQ(slurm.asked[0][0], "sbatch");
  EXPECT_EQ(slurm.asked[0][1], "--test-only");
  EXPECT_NE(std::find(slurm.asked[0].begin(), slurm.asked[0].end(), "--account=nobody"), slurm.asked[0].end());
  slurm.answers = {{0, "", "sbatch: Job 5 to start at 2026-01-01T00:00:00 using 1 processors on nodes n1\n"}};
  EXPECT_TRUE(CheckSlurmSettings(s, slurm.Runner()).ok());
}

TEST(SlurmWorkers, RunCommandCapturesBothStreamsAndTheExitCode) {
  auto r = RunCommand({"sh", "-c", "echo out; echo err >&2; exit 3"});
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->out, "out\n");
  EXPECT_EQ(r->err, "err\n");
  EXPECT_EQ(r->exit_code, 3);
  auto missing = RunCommand({"accelopt-no-such-program"});
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().message.find("accelopt-no-such-program"), std::string::npos);
}

}  // namespace
}  // namespace accelopt::service
