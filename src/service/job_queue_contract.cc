// The tests of the JobQueue contract (job_queue_contract.h), run against each
// backend that instantiates JobQueueContract.

#include "service/job_queue_contract.h"

#include <atomic>
#include <chrono>
#include <mutex>
#include <set>
#include <thread>

namespace accelopt::service::testing {

TEST_P(JobQueueContract, AJobIsClaimedOnceAndItsOutcomeReadBack) {
  auto q = Open();
  auto id = q->Enqueue(ContractJob("k1"));
  ASSERT_TRUE(id.ok()) << id.error().message;
  auto claimed = q->Claim(A());
  ASSERT_TRUE(claimed.ok()) << claimed.error().message;
  ASSERT_TRUE(claimed->has_value());
  EXPECT_EQ((*claimed)->id, *id);
  EXPECT_EQ((*claimed)->attempt, 1);
  EXPECT_EQ((*claimed)->job.Key(), ContractJob("k1").Key());
  auto none = q->Claim(B());
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->has_value()) << "a running job with a live lease went to a second worker";
  ASSERT_TRUE(q->Complete(**claimed, A(), ContractOutcome("worker-a")).ok());
  const int64_t ids[] = {*id};
  auto polled = q->Poll(ids);
  ASSERT_TRUE(polled.ok()) << polled.error().message;
  EXPECT_EQ((*polled)[0].state, JobState::kDone);
  auto outcome = EvalOutcome::FromJson((*polled)[0].outcome);
  ASSERT_TRUE(outcome.ok()) << outcome.error().message;
  EXPECT_EQ(outcome->profiles.at(0).message, "measured by worker-a");
}

TEST_P(JobQueueContract, TheSameKeyIsOneJob) {
  auto q = Open();
  auto first = q->Enqueue(ContractJob("same"));
  auto second = q->Enqueue(ContractJob("same"));
  ASSERT_TRUE(first.ok() && second.ok());
  EXPECT_EQ(*first, *second);
  auto other = q->Enqueue(ContractJob("other"));
  ASSERT_TRUE(other.ok());
  EXPECT_NE(*other, *first);
  // Done, it stays done: asking again measures nothing.
  auto claimed = q->Claim(A());
  ASSERT_TRUE(claimed.ok() && claimed->has_value());
  ASSERT_TRUE(q->Complete(**claimed, A(), ContractOutcome("worker-a")).ok());
  EXPECT_EQ(*q->Enqueue(ContractJob("same")), *first);
  auto next = q->Claim(A());
  ASSERT_TRUE(next.ok() && next->has_value());
  EXPECT_EQ((*next)->id, *other) << "a done job was claimed again";
}

TEST_P(JobQueueContract, JobsGoOnlyToWorkersOfTheirMachineClass) {
  auto q = Open();
  ASSERT_TRUE(q->Enqueue(ContractJob("gpu-job", "h100")).ok());
  auto wrong = q->Claim(A());
  ASSERT_TRUE(wrong.ok());
  EXPECT_FALSE(wrong->has_value());
  auto right = q->Claim({"gpu-worker", "cuda:0", "h100"});
  ASSERT_TRUE(right.ok());
  EXPECT_TRUE(right->has_value());
}

TEST_P(JobQueueContract, JobsAreClaimedOldestFirst) {
  auto q = Open();
  std::vector<int64_t> ids;
  for (const char* code : {"first", "second", "third"}) ids.push_back(*q->Enqueue(ContractJob(code)));
  for (int64_t id : ids) {
    auto claimed = q->Claim(A());
    ASSERT_TRUE(claimed.ok() && claimed->has_value());
    EXPECT_EQ((*claimed)->id, id);
  }
}

TEST_P(JobQueueContract, ALapsedLeaseGivesTheJobToAnotherWorkerAndTheOldAttemptRecordsNothing) {
  QueueOptions options;
  options.lease_seconds = 0.2;
  auto q = Open(options);
  auto id = q->Enqueue(ContractJob("slow"));
  ASSERT_TRUE(id.ok());
  auto a = q->Claim(A());
  ASSERT_TRUE(a.ok() && a->has_value());
  std::this_thread::sleep_for(std::chrono::milliseconds(400));
  auto b = q->Claim(B());
  ASSERT_TRUE(b.ok() && b->has_value()) << "the lapsed job was not claimed again";
  EXPECT_EQ((*b)->id, *id);
  EXPECT_EQ((*b)->attempt, 2);
  EXPECT_FALSE(q->Heartbeat(**a, A()).ok()) << "the lapsed attempt renewed a lease it lost";
  EXPECT_FALSE(q->Complete(**a, A(), ContractOutcome("worker-a")).ok()) << "the lapsed attempt recorded a result";
  ASSERT_TRUE(q->Complete(**b, B(), ContractOutcome("worker-b")).ok());
  EXPECT_FALSE(q->Complete(**b, B(), ContractOutcome("worker-b")).ok()) << "a job was completed twice";
  const int64_t ids[] = {*id};
  auto polled = q->Poll(ids);
  ASSERT_TRUE(polled.ok());
  EXPECT_EQ((*polled)[0].attempts, 2);
  EXPECT_EQ(EvalOutcome::FromJson((*polled)[0].outcome)->worker, "worker-b");
}

TEST_P(JobQueueContract, HeartbeatsKeepTheLease) {
  QueueOptions options;
  options.lease_seconds = 0.3;
  auto q = Open(options);
  ASSERT_TRUE(q->Enqueue(ContractJob("long")).ok());
  auto a = q->Claim(A());
  ASSERT_TRUE(a.ok() && a->has_value());
  for (int i = 0; i < 6; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    ASSERT_TRUE(q->Heartbeat(**a, A()).ok());
  }
  auto b = q->Claim(B());
  ASSERT_TRUE(b.ok());
  EXPECT_FALSE(b->has_value()) << "a renewed lease was taken";
  EXPECT_TRUE(q->Complete(**a, A(), ContractOutcome("worker-a")).ok());
}

TEST_P(JobQueueContract, RetryableFailuresQueueTheJobAgainUntilMaxAttemptsPermanentOnesFailIt) {
  QueueOptions options;
  options.max_attempts = 2;
  auto q = Open(options);
  auto retried = *q->Enqueue(ContractJob("flaky"));
  auto first = q->Claim(A());
  ASSERT_TRUE(first.ok() && first->has_value());
  ASSERT_TRUE(q->Fail(**first, A(), {"device busy", true}).ok());
  auto second = q->Claim(B());
  ASSERT_TRUE(second.ok() && second->has_value());
  EXPECT_EQ((*second)->attempt, 2);
  ASSERT_TRUE(q->Fail(**second, B(), {"device busy again", true}).ok());
  const int64_t ids[] = {retried};
  EXPECT_EQ((*q->Poll(ids))[0].state, JobState::kFailed) << "retried past max_attempts";
  EXPECT_EQ((*q->Poll(ids))[0].error, "device busy again");

  auto permanent = *q->Enqueue(ContractJob("bad-task"));
  auto claimed = q->Claim(A());
  ASSERT_TRUE(claimed.ok() && claimed->has_value());
  ASSERT_TRUE(q->Fail(**claimed, A(), {"the task does not load", false}).ok());
  const int64_t pid[] = {permanent};
  EXPECT_EQ((*q->Poll(pid))[0].state, JobState::kFailed);
  // Asked for again, a failed job is queued again (the engine's failure may be gone).
  EXPECT_EQ(*q->Enqueue(ContractJob("bad-task")), permanent);
  EXPECT_EQ((*q->Poll(pid))[0].state, JobState::kQueued);
}

TEST_P(JobQueueContract, AJobWhoseWorkersKeepDyingFailsAfterMaxAttempts) {
  QueueOptions options;
  options.lease_seconds = 0.1;
  options.max_attempts = 2;
  auto q = Open(options);
  auto id = *q->Enqueue(ContractJob("kills-its-worker"));
  for (int i = 0; i < 2; ++i) {
    auto claimed = q->Claim(A());
    ASSERT_TRUE(claimed.ok() && claimed->has_value());
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  auto none = q->Claim(A());
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->has_value());
  const int64_t ids[] = {id};
  auto polled = q->Poll(ids);
  EXPECT_EQ((*polled)[0].state, JobState::kFailed);
  EXPECT_NE((*polled)[0].error.find("lost"), std::string::npos) << (*polled)[0].error;
}

TEST_P(JobQueueContract, UnknownJobsAreAnError) {
  auto q = Open();
  const int64_t ids[] = {4242};
  EXPECT_FALSE(q->Poll(ids).ok());
}

TEST_P(JobQueueContract, CountsAndLiveWorkers) {
  auto q = Open();
  ASSERT_TRUE(q->Enqueue(ContractJob("a")).ok());
  ASSERT_TRUE(q->Enqueue(ContractJob("b")).ok());
  auto claimed = q->Claim(A());
  ASSERT_TRUE(claimed.ok() && claimed->has_value());
  auto counts = q->Counts(60);
  ASSERT_TRUE(counts.ok()) << counts.error().message;
  EXPECT_EQ(counts->queued, 1);
  EXPECT_EQ(counts->running, 1);
  ASSERT_EQ(counts->live_workers.size(), 1u);
  EXPECT_EQ(counts->live_workers[0].name, "worker-a");
  EXPECT_EQ(counts->live_workers[0].device, "dev0");
}

// A launcher of workers sizes them by the work of their machine class:
// queued and running jobs count, done ones and other classes' do not.
TEST_P(JobQueueContract, OutstandingCountsTheWorkOfOneMachineClass) {
  auto q = Open();
  auto none = q->Outstanding("class-a");
  ASSERT_TRUE(none.ok()) << none.error().message;
  EXPECT_EQ(*none, 0);
  for (const char* code : {"a", "b", "c"}) ASSERT_TRUE(q->Enqueue(ContractJob(code)).ok());
  ASSERT_TRUE(q->Enqueue(ContractJob("gpu", "h100")).ok());
  auto claimed = q->Claim(A());
  ASSERT_TRUE(claimed.ok() && claimed->has_value());
  auto done = q->Claim(A());
  ASSERT_TRUE(done.ok() && done->has_value());
  ASSERT_TRUE(q->Complete(**done, A(), ContractOutcome("worker-a")).ok());
  EXPECT_EQ(*q->Outstanding("class-a"), 2) << "one queued and one running";
  EXPECT_EQ(*q->Outstanding("h100"), 1);
  EXPECT_EQ(*q->Outstanding("nobody"), 0);
}

// Many workers, each with its own connection (as separate processes have),
// claim concurrently: every job is claimed exactly once.
TEST_P(JobQueueContract, ConcurrentWorkersNeverShareAJob) {
  auto q = Open();
  constexpr int kJobs = 40, kWorkers = 4;
  for (int i = 0; i < kJobs; ++i) ASSERT_TRUE(q->Enqueue(ContractJob("job" + std::to_string(i))).ok());
  std::mutex mu;
  std::multiset<int64_t> claimed_ids;
  std::atomic<int> errors{0};
  std::vector<std::thread> threads;
  for (int w = 0; w < kWorkers; ++w) {
    threads.emplace_back([&, w] {
      std::string place = place_;
      auto mine = GetParam()(place, QueueOptions{}, &place);
      const WorkerInfo me{"w" + std::to_string(w), "dev" + std::to_string(w), "class-a"};
      for (;;) {
        auto c = mine->Claim(me);
        if (!c) {
          ++errors;
          return;
        }
        if (!c->has_value()) return;
        if (!mine->Complete(**c, me, ContractOutcome(me.name)).ok()) ++errors;
        std::lock_guard lock(mu);
        claimed_ids.insert((*c)->id);
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(errors.load(), 0);
  EXPECT_EQ(claimed_ids.size(), static_cast<size_t>(kJobs));
  EXPECT_EQ(std::set<int64_t>(claimed_ids.begin(), claimed_ids.end()).size(), static_cast<size_t>(kJobs));
}

}  // namespace accelopt::service::testing
