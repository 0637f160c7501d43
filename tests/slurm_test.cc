// Workers on a real one-node Slurm cluster (testing/slurm_cluster.h), as a
// user runs them: `optimize --slurm` finishes with every job done once and
// leaves no job behind; a worker's Slurm job killed mid-evaluation loses
// nothing and repeats nothing.

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <iostream>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <mutex>
#include <sstream>
#include <thread>

#include "core/json_io.h"
#include "service/job_queue.h"
#include "service/slurm_workers.h"
#include "suite/task.h"
#include "targets/registry.h"
#include "store/postgres_connection.h"
#include "testing/postgres_server.h"
#include "testing/run_command.h"
#include "testing/slow_jobs.h"
#include "testing/slurm_cluster.h"
#include "testing/temp_dir.h"

namespace accelopt {
namespace {

using testing::CommandRun;
using Clock = std::chrono::steady_clock;


#define NEED_SLURM(cluster)                                               \
  std::string why_not;                                                    \
  testing::SlurmCluster* cluster = testing::SharedSlurmCluster(&why_not); \
  if (!cluster) GTEST_SKIP() << why_not

size_t Count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

std::string ReadLog(const std::string& path) {
  auto text = ReadFile(path);
  return text ? *text : "";
}

// The cluster's jobs named `prefix`* that are not over, as "id|state|name" lines.
std::string LiveJobs(testing::SlurmCluster& cluster, const std::string& prefix) {
  auto listed = cluster.Client({"squeue", "-h", "-o", "%i|%T|%j"});
  if (!listed) return "squeue: " + listed.error().message;
  std::string out;
  std::istringstream lines(listed->out);
  std::string line;
  while (std::getline(lines, line))
    if (line.find("|" + prefix) != std::string::npos) out += line + "\n";
  return out;
}

TEST(SlurmCluster, RunsABatchJobAndTellsItsExitCode) {
  NEED_SLURM(cluster);
  testing::TempDir dir;
  auto submitted = cluster->Client({"sbatch", "--parsable", "--partition=" + cluster->partition(),
                                    "--output=" + dir.path() + "/job.log", "--wrap=echo hello; exit 3"});
  ASSERT_TRUE(submitted.ok()) << submitted.error().message;
  ASSERT_EQ(submitted->exit_code, 0) << submitted->err << cluster->Logs();
  const std::string id = submitted->out.substr(0, submitted->out.find_first_of(";\n"));
  service::SlurmJobState state;
  const auto deadline = Clock::now() + std::chrono::seconds(60);
  while (!state.Ended() || state.state == "SUBMITTED") {
    ASSERT_LT(Clock::now(), deadline) << "job " << id << " did not end: " << state.state << "\n" << cluster->Logs();
    auto shown = cluster->Client({"scontrol", "show", "job", "-o", id});
    ASSERT_TRUE(shown.ok()) << shown.error().message;
    auto parsed = service::ParseScontrolJob(shown->out);
    ASSERT_TRUE(parsed.ok()) << parsed.error().message;
    state = *parsed;
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  EXPECT_EQ(state.state, "FAILED");
  EXPECT_EQ(state.exit_code, 3);
  EXPECT_EQ(ReadLog(dir.path() + "/job.log"), "hello\n");
}

// The demo (its first task) through workers the run submits to Slurm: every evaluation a job
// of the queue, done once; the run's end cancels its jobs and says how each
// ended; `accelopt show` lists them afterwards.
TEST(Slurm, TheDemoRunsThroughSlurmWorkersAndLeavesNoJobBehind) {
  NEED_SLURM(cluster);
  testing::TempDir dir;
  const std::string db = dir.path() + "/accelopt.db";
  CommandRun run =
      testing::RunShell(cluster->Env() + " " + testing::AccelBinary() + " optimize --demo silu --shape test --slurm " +
                        cluster->partition() + " --slurm-workers 2 --slurm-time 10:00 --suite " +
                        std::string(ACCELOPT_SOURCE_DIR) + "/suite --db " + db);
  ASSERT_EQ(run.exit_code, 0) << run.out << cluster->Logs();
  if (getenv("SLURM_TEST_DEBUG")) fprintf(stderr, "%s\n", run.out.c_str());
  const size_t submitted = Count(run.out, "slurm: submitted job");
  EXPECT_GE(submitted, 1u) << run.out;
  EXPECT_LE(submitted, 2u) << "more than --slurm-workers at once:\n" << run.out;
  EXPECT_NE(run.out.find("% peak after"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("kept in " + dir.path() + "/slurm-logs/run1-slurm.json"), std::string::npos) << run.out;
  EXPECT_EQ(LiveJobs(*cluster, "run1-slurm"), "") << "the run's end left jobs in squeue";

  auto queue = service::OpenJobQueue(db);
  ASSERT_TRUE(queue.ok()) << queue.error().message;
  auto counts = (*queue)->Counts(3600);
  ASSERT_TRUE(counts.ok()) << counts.error().message;
  EXPECT_GE(counts->done, 3) << "the baseline and the candidates were measured by the Slurm workers";
  EXPECT_EQ(counts->queued + counts->running + counts->failed, 0);
  std::vector<int64_t> ids;
  for (int64_t id = 1; id <= counts->done; ++id) ids.push_back(id);
  auto statuses = (*queue)->Poll(ids);
  ASSERT_TRUE(statuses.ok()) << statuses.error().message;
  for (const auto& s : *statuses) {
    EXPECT_EQ(s.state, service::JobState::kDone) << s.id;
    EXPECT_EQ(s.attempts, 1) << "job " << s.id << " was run more than once";
    EXPECT_EQ(s.worker.rfind("run1-slurm-", 0), 0u) << "job " << s.id << " done by " << s.worker;
  }

  CommandRun show = testing::Accelopt("show 1 --no-code --db " + db);
  ASSERT_EQ(show.exit_code, 0) << show.out;
  EXPECT_NE(show.out.find("Slurm worker jobs"), std::string::npos) << show.out;
  EXPECT_EQ(Count(show.out, "(run1-slurm-"), submitted) << show.out;
  EXPECT_EQ(show.out.find("RUNNING"), std::string::npos) << "a job was left running:\n" << show.out;
  CommandRun show_json = testing::Accelopt("show 1 --json --no-code --db " + db);
  ASSERT_EQ(show_json.exit_code, 0) << show_json.out;
  const Json shown = Json::parse(show_json.out);
  ASSERT_TRUE(shown.contains("slurm_jobs")) << show_json.out;
  ASSERT_EQ(shown["slurm_jobs"].size(), submitted);
  for (const Json& job : shown["slurm_jobs"]) {
    EXPECT_TRUE(job["state"] == "CANCELLED" || job["state"] == "COMPLETED") << job.dump();  // or idle, it left
    EXPECT_TRUE(std::filesystem::exists(job["log"].get<std::string>())) << job.dump();
  }
}

// Workers on this machine and on Slurm drain one queue together (the issue's
// "two local, one through Slurm"): every job done once, whoever took it.
TEST(Slurm, LocalAndSlurmWorkersServeOneRun) {
  NEED_SLURM(cluster);
  testing::TempDir dir;
  const std::string db = dir.path() + "/accelopt.db";
  CommandRun run = testing::RunShell(
      cluster->Env() + " " + testing::AccelBinary() + " optimize --demo silu --shape test --workers 2 --slurm " +
      cluster->partition() + " --slurm-workers 1 --suite " + std::string(ACCELOPT_SOURCE_DIR) + "/suite --db " + db);
  ASSERT_EQ(run.exit_code, 0) << run.out << cluster->Logs();
  EXPECT_NE(run.out.find("2 worker(s) started here"), std::string::npos) << run.out;
  EXPECT_EQ(Count(run.out, "slurm: submitted job"), 1u) << run.out;
  EXPECT_EQ(LiveJobs(*cluster, "run1-slurm"), "") << "the run's end left its job in squeue";
  auto queue = service::OpenJobQueue(db);
  ASSERT_TRUE(queue.ok()) << queue.error().message;
  auto counts = (*queue)->Counts(3600);
  ASSERT_TRUE(counts.ok()) << counts.error().message;
  EXPECT_GE(counts->done, 3);
  EXPECT_EQ(counts->queued + counts->running + counts->failed, 0);
  std::vector<int64_t> ids;
  for (int64_t id = 1; id <= counts->done; ++id) ids.push_back(id);
  auto statuses = (*queue)->Poll(ids);
  ASSERT_TRUE(statuses.ok()) << statuses.error().message;
  for (const auto& s : *statuses) EXPECT_EQ(s.attempts, 1) << "job " << s.id << " was run more than once";
}

// The team's setting in full: two engines at once on one PostgreSQL store
// (one memory, one queue), drained by three workers: two started by hand on
// this machine, one submitted to Slurm by the first engine. Every job is done
// once, and the Slurm worker is gone when its engine ends.
TEST(Slurm, TwoEnginesOnOnePostgresStoreAndThreeWorkersTwoLocalOneOnSlurm) {
  NEED_SLURM(cluster);
  std::string pg_why_not;
  testing::PostgresServer* server = testing::SharedPostgresServer(&pg_why_not);
  if (!server) GTEST_SKIP() << pg_why_not;
  auto uri = server->CreateDatabase("slurm_team_" + std::to_string(getpid()));
  ASSERT_TRUE(uri.ok()) << uri.error().message;
  const std::string shown = service::RedactUri(*uri);
  ASSERT_EQ(setenv("PGPASSWORD", server->password().c_str(), 1), 0);
  testing::TempDir dir;
  const std::string suite = std::string(ACCELOPT_SOURCE_DIR) + "/suite";
  const std::string machine_class = "team-slurm-" + std::to_string(getpid());
  std::vector<std::unique_ptr<testing::BackgroundAccelopt>> locals;
  for (int i = 1; i <= 2; ++i)
    locals.push_back(std::make_unique<testing::BackgroundAccelopt>(
        "worker --db '" + shown + "' --machine-class " + machine_class + " --name local-" + std::to_string(i) +
            " --suite " + suite,
        dir.path() + "/local-" + std::to_string(i) + ".log"));
  // The engines run in `dir`: the Slurm workers' logs go to its slurm-logs/.
  const std::string engine = "cd " + dir.path() + " && " + cluster->Env() + " " + testing::AccelBinary() +
                             " optimize --demo --shape test --queue --machine-class " + machine_class +
                             " --suite " + suite + " --db '" + shown + "'";
  CommandRun first_run, second_run;
  std::thread first([&] {
    first_run = testing::RunShell(engine + " silu --slurm " + cluster->partition() + " --slurm-workers 1");
  });
  std::thread second([&] { second_run = testing::RunShell(engine + " matmul"); });
  first.join();
  second.join();
  for (auto& local : locals) {
    kill(local->pid(), SIGTERM);
    local->Wait();
  }
  unsetenv("PGPASSWORD");
  ASSERT_EQ(first_run.exit_code, 0) << first_run.out << cluster->Logs();
  ASSERT_EQ(second_run.exit_code, 0) << second_run.out;
  EXPECT_EQ(Count(first_run.out, "slurm: submitted job"), 1u) << first_run.out;
  for (const CommandRun* run : {&first_run, &second_run})
    EXPECT_EQ(run->out.find(server->password()), std::string::npos) << "the password was shown";
  EXPECT_EQ(LiveJobs(*cluster, "run"), "") << "a Slurm worker outlived its engine";

  auto queue = service::OpenJobQueue(*uri);
  ASSERT_TRUE(queue.ok()) << queue.error().message;
  auto counts = (*queue)->Counts(3600);
  ASSERT_TRUE(counts.ok()) << counts.error().message;
  EXPECT_GE(counts->done, 2);
  EXPECT_EQ(counts->queued + counts->running + counts->failed, 0);
  auto conn = store::PgConnection::Open(*uri);
  ASSERT_TRUE(conn.ok()) << conn.error().message;
  auto attempts = (*conn)->Exec("attempts", "SELECT id, attempts FROM jobs");
  ASSERT_TRUE(attempts.ok()) << attempts.error().message;
  ASSERT_EQ(attempts->size(), counts->done);
  for (int row = 0; row < attempts->size(); ++row)
    EXPECT_EQ(attempts->Int(row, 1), 1) << "job " << attempts->Int(row, 0) << " was run more than once";
  // The three workers served this queue (a worker is recorded when it asks for a job).
  int local = 0, on_slurm = 0;
  for (const auto& w : counts->live_workers) {
    local += w.name.rfind("local-", 0) == 0;
    on_slurm += w.name.find("-slurm-") != std::string::npos;
  }
  EXPECT_EQ(local, 2);
  EXPECT_EQ(on_slurm, 1) << first_run.out;
  // Both runs are in the one store.
  CommandRun runs = testing::Accelopt("runs --json --db '" + *uri + "'");
  ASSERT_EQ(runs.exit_code, 0) << runs.out;
  auto listed = Json::parse(runs.out, nullptr, false);
  ASSERT_TRUE(listed.is_array() && listed.size() == 2u) << runs.out;
}

// One worker per device: with --gres gpu:1 on a node that has one GPU, the
// second worker's job waits for the first one's device.
TEST(Slurm, AWorkerPerDeviceTheSecondWaitsForTheGpu) {
  NEED_SLURM(cluster);
  testing::TempDir dir;
  setenv("SLURM_CONF", cluster->conf().c_str(), 1);
  service::SlurmWorkersOptions options;
  options.slurm.partition = cluster->partition();
  options.slurm.gres = "gpu:1";
  options.slurm.max_workers = 2;
  options.program = "/bin/sh";  // stands for a worker: holds its device a minute
  options.arguments = {"-c", "sleep 60", "sh"};
  options.name_prefix = "grestest" + std::to_string(getpid());
  options.log_dir = dir.path();
  options.idle_exit_seconds = 0;
  service::SlurmWorkers workers(options);
  ASSERT_TRUE(workers.Tend(2).ok());
  ASSERT_EQ(workers.Workers().size(), 2u);
  const auto deadline = Clock::now() + std::chrono::seconds(60);
  for (;;) {
    ASSERT_TRUE(workers.Tend(2).ok());
    const auto all = workers.Workers();
    if (all[0].state.state == "RUNNING" && all[1].state.state == "PENDING") break;
    ASSERT_LT(Clock::now(), deadline) << all[0].state.state << " " << all[1].state.state << "\n" << cluster->Logs();
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  auto reason = cluster->Client({"squeue", "-h", "-j", workers.Workers()[1].job_id, "-o", "%r"});
  ASSERT_TRUE(reason.ok()) << reason.error().message;
  EXPECT_NE(reason->out.find("Resources"), std::string::npos) << reason->out;
  ASSERT_TRUE(workers.Stop(30).ok());
  EXPECT_EQ(LiveJobs(*cluster, options.name_prefix), "");
  for (const auto& w : workers.Workers()) EXPECT_EQ(w.state.state, "CANCELLED") << w.job_id;
}

// Workers Slurm would refuse stop the run before it is created, in sbatch's words.
TEST(Slurm, ANonexistentPartitionIsRefusedBeforeTheRunIsCreated) {
  NEED_SLURM(cluster);
  testing::TempDir dir;
  const std::string db = dir.path() + "/accelopt.db";
  CommandRun run = testing::RunShell(cluster->Env() + " " + testing::AccelBinary() +
                                     " optimize --demo --shape test --slurm nosuch --suite " +
                                     std::string(ACCELOPT_SOURCE_DIR) + "/suite --db " + db);
  EXPECT_EQ(run.exit_code, 1) << run.out;
  EXPECT_NE(run.out.find("Slurm partition nosuch"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("invalid partition"), std::string::npos) << "sbatch's words are missing:\n" << run.out;
  EXPECT_EQ(run.out.find("run 1"), std::string::npos) << "a run was created:\n" << run.out;
  CommandRun usage = testing::Accelopt("optimize --demo --slurm-gres gpu:1 --db " + db);
  EXPECT_EQ(usage.exit_code, 2) << usage.out;
  EXPECT_NE(usage.out.find("--slurm"), std::string::npos) << usage.out;
}

// A run stopped by SIGTERM while its Slurm worker works cancels the job and
// says how it ended; resumed, it submits workers again. With PostgreSQL installed, the queue is there: the worker
// reached it with the password from its environment, which is in no output,
// log or job description.
TEST(Slurm, AnInterruptedRunCancelsItsJobsAndResumesOnSlurmWithThePasswordOutOfSight) {
  NEED_SLURM(cluster);
  std::string no_postgres;
  testing::PostgresServer* server = testing::SharedPostgresServer(&no_postgres);
  std::string queue_uri;
  if (server) {
    auto uri = server->CreateDatabase("slurm_queue_" + std::to_string(getpid()));
    ASSERT_TRUE(uri.ok()) << uri.error().message;
    queue_uri = *uri;
  }
  testing::TempDir dir;
  const std::string db = dir.path() + "/accelopt.db";
  setenv("SLURM_CONF", cluster->conf().c_str(), 1);  // the engine's sbatch finds the cluster
  testing::BackgroundAccelopt engine("optimize --demo silu --shape test --slurm " + cluster->partition() +
                                         " --slurm-workers 1 --suite " + std::string(ACCELOPT_SOURCE_DIR) +
                                         "/suite --db " + db + (queue_uri.empty() ? "" : " --queue-db " + queue_uri),
                                     dir.path() + "/engine.log");
  // Stop it once its worker has completed jobs.
  const auto deadline = Clock::now() + std::chrono::seconds(300);
  while (ReadLog(dir.path() + "/engine.log").find("iteration 1/2: evaluated") == std::string::npos) {
    ASSERT_LT(Clock::now(), deadline) << ReadLog(dir.path() + "/engine.log") << cluster->Logs();
    ASSERT_NE(waitpid(engine.pid(), nullptr, WNOHANG), engine.pid()) << ReadLog(dir.path() + "/engine.log");
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  ASSERT_EQ(kill(engine.pid(), SIGTERM), 0);
  CommandRun stopped = engine.Wait();
  EXPECT_EQ(stopped.exit_code, 128 + SIGTERM) << stopped.out;
  EXPECT_NE(stopped.out.find("slurm: job "), std::string::npos) << stopped.out;
  EXPECT_NE(stopped.out.find("(run1-slurm-1): CANCELLED"), std::string::npos) << stopped.out;
  EXPECT_EQ(LiveJobs(*cluster, "run1-slurm"), "") << "the interrupted run left its job in squeue";
  const std::string record = ReadLog(dir.path() + "/slurm-logs/run1-slurm.json");
  EXPECT_NE(record.find("CANCELLED"), std::string::npos) << record;

  // Resumed, it submits workers again, numbered on, and the record keeps both sessions' jobs.
  if (server) setenv("PGPASSWORD", server->password().c_str(), 1);  // the recorded URI has none
  CommandRun resumed = testing::RunShell(cluster->Env() + " " + testing::AccelBinary() + " resume 1 --db " + db);
  if (server) unsetenv("PGPASSWORD");
  ASSERT_EQ(resumed.exit_code, 0) << resumed.out;
  EXPECT_NE(resumed.out.find("(run1-slurm-2)"), std::string::npos) << resumed.out;
  EXPECT_EQ(LiveJobs(*cluster, "run1-slurm"), "") << "the resumed run left its job in squeue";
  const Json kept = Json::parse(ReadLog(dir.path() + "/slurm-logs/run1-slurm.json"))["slurm_jobs"];
  ASSERT_GE(kept.size(), 2u) << kept.dump();
  EXPECT_EQ(kept[0]["name"], "run1-slurm-1");
  EXPECT_EQ(kept[0]["state"], "CANCELLED");
  EXPECT_EQ(kept[1]["name"], "run1-slurm-2");

  if (!server) {
    std::cerr << "the PostgreSQL part skipped: " << no_postgres << "\n";
    return;
  }
  const std::string password = server->password();
  const std::string worker_log = ReadLog(dir.path() + "/slurm-logs/run1-slurm-1.log");
  EXPECT_NE(worker_log.find(": done"), std::string::npos) << "the worker did no job through PostgreSQL:\n"
                                                          << worker_log;
  EXPECT_EQ(stopped.out.find(password), std::string::npos) << "the password was shown";
  EXPECT_EQ(worker_log.find(password), std::string::npos) << "the password is in the worker's log";
  EXPECT_EQ(record.find(password), std::string::npos);
  const Json jobs = Json::parse(record)["slurm_jobs"];
  ASSERT_EQ(jobs.size(), 1u) << record;
  EXPECT_EQ(resumed.out.find(password), std::string::npos) << "the password was shown by resume";
  const std::string job_id = jobs[0]["job_id"];
  auto described = cluster->Client({"scontrol", "show", "job", job_id});
  ASSERT_TRUE(described.ok()) << described.error().message;
  EXPECT_NE(described->out.find("JobId=" + job_id), std::string::npos) << described->out << described->err;
  EXPECT_EQ(described->out.find(password), std::string::npos) << "the password is in the job's description";
}

// Four slow jobs, two workers on Slurm; the Slurm job of the first worker seen
// measuring is killed (SIGKILL to all its processes). Its job runs again once
// its lease lapses; every job is done, each outcome recorded once.
TEST(Slurm, AWorkersJobKilledMidEvaluationLosesNothingAndRepeatsNothing) {
  NEED_SLURM(cluster);
  testing::TempDir dir;
  const std::string db = dir.path() + "/accelopt.db";
  service::SqliteQueueOptions queue_options;
  queue_options.path = db;
  auto opened = service::OpenSqliteJobQueue(queue_options);
  ASSERT_TRUE(opened.ok()) << opened.error().message;
  service::JobQueue& queue = **opened;
  const std::string machine_class = "slurm-test-" + std::to_string(getpid());
  constexpr int kJobs = 4;
  auto enqueued = testing::EnqueueSlowJobs(queue, machine_class, kJobs);
  ASSERT_TRUE(enqueued.ok()) << enqueued.error().message;
  const std::vector<int64_t> ids = *enqueued;

  setenv("SLURM_CONF", cluster->conf().c_str(), 1);  // for the SlurmWorkers' commands
  service::SlurmWorkersOptions options;
  options.slurm.partition = cluster->partition();
  options.slurm.max_workers = 2;
  options.program = testing::AccelBinary();
  options.arguments = {
      "worker", "--db",        db,    "--machine-class", machine_class, "--device", "slurm-test-device", "--lease",
      "2",      "--heartbeat", "0.5", "--no-calibrate"};
  options.name_prefix = "killtest" + std::to_string(getpid());
  options.log_dir = dir.path();
  options.idle_exit_seconds = 30;
  std::vector<std::string> said;
  std::mutex said_mu;
  options.say = [&](const std::string& text) {
    std::lock_guard lock(said_mu);
    said.push_back(text);
  };
  service::SlurmWorkers workers(options);
  workers.TendInBackground(queue, machine_class, 0.5);

  // Kill the first worker seen measuring, in the middle of its job.
  std::string killed;
  int64_t killed_job = 0;
  auto deadline = Clock::now() + std::chrono::seconds(120);
  while (killed.empty() && Clock::now() < deadline) {
    auto statuses = queue.Poll(ids);
    ASSERT_TRUE(statuses.ok()) << statuses.error().message;
    for (const auto& s : *statuses)
      if (s.state == service::JobState::kRunning && killed.empty()) {
        std::this_thread::sleep_for(std::chrono::milliseconds(300));  // into its measurement
        for (const auto& w : workers.Workers())
          if (w.name == s.worker) {
            auto cancelled = cluster->Client({"scancel", "--full", "--signal=KILL", w.job_id});
            ASSERT_TRUE(cancelled.ok() && cancelled->exit_code == 0)
                << (cancelled.ok() ? cancelled->err : cancelled.error().message);
            killed = s.worker;
            killed_job = s.id;
          }
        ASSERT_FALSE(killed.empty()) << "job " << s.id << " is run by " << s.worker << ", not a Slurm worker";
      }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ASSERT_FALSE(killed.empty()) << "no Slurm worker claimed a job\n" << cluster->Logs();

  deadline = Clock::now() + std::chrono::seconds(180);
  std::vector<service::JobStatus> final_states;
  for (;;) {
    auto statuses = queue.Poll(ids);
    ASSERT_TRUE(statuses.ok()) << statuses.error().message;
    final_states = *statuses;
    if (std::all_of(final_states.begin(), final_states.end(), [](const auto& s) {
          return s.state == service::JobState::kDone || s.state == service::JobState::kFailed;
        }))
      break;
    ASSERT_LT(Clock::now(), deadline) << "the jobs did not finish\n" << cluster->Logs();
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  ASSERT_TRUE(workers.Stop(30).ok());
  EXPECT_EQ(LiveJobs(*cluster, options.name_prefix), "") << "Stop left jobs in squeue";

  std::string logs;
  for (const auto& w : workers.Workers()) logs += "--- " + w.name + " (" + w.state.state + "):\n" + ReadLog(w.log);
  for (const auto& s : final_states) {
    ASSERT_EQ(s.state, service::JobState::kDone) << "job " << s.id << " was lost: " << s.error << "\n" << logs;
    auto outcome = service::EvalOutcome::FromJson(s.outcome);
    ASSERT_TRUE(outcome.ok()) << outcome.error().message;
    EXPECT_EQ(outcome->device, "slurm-test-device");
    if (s.id == killed_job) {
      EXPECT_EQ(s.attempts, 2) << "the killed worker's job was not run again\n" << logs;
      EXPECT_NE(outcome->worker, killed);
    }
  }
  EXPECT_EQ(static_cast<int>(Count(logs, ": done\n")), kJobs) << "a job was recorded twice or not at all\n" << logs;
  EXPECT_EQ(Count(logs, "not recorded"), 0u) << logs;
  bool killed_seen_ended = false;
  for (const auto& w : workers.Workers()) {
    EXPECT_TRUE(w.state.Ended()) << w.job_id << " " << w.state.state;
    if (w.name == killed) killed_seen_ended = w.state.state != "COMPLETED";
  }
  EXPECT_TRUE(killed_seen_ended) << ::testing::PrintToString(said);
}

}  // namespace
}  // namespace accelopt
