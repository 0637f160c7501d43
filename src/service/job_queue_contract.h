#pragma once
/// The contract every JobQueue implementation passes (DESIGN.md section 7;
/// STYLE.md: one shared test suite per interface): the fixture here, its
/// tests in job_queue_contract.cc (once in the test program, whatever the
/// number of backends). An implementation's test instantiates it with a factory:
///
///   INSTANTIATE_TEST_SUITE_P(Sqlite, JobQueueContract, ::testing::Values(&OpenForTest));
///
/// where the factory opens a fresh, empty queue with the given options, and
/// opening it again with the same `place` reaches the same queue (another
/// process's connection). A factory whose backend is missing on this machine
/// (a database server not installed) calls GTEST_SKIP with the reason and
/// returns nullptr: the fixture's SetUp opens the test's fresh queue, so the
/// test is skipped before it starts.

#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <string>

#include "service/job_queue.h"

namespace accelopt::service::testing {

/// Opens the queue at `place` ("" = a new one) with `options`; returns where it is in `*opened_at`.
using QueueFactory = std::function<std::unique_ptr<JobQueue>(const std::string& place, const QueueOptions& options,
                                                             std::string* opened_at)>;

inline EvalJob ContractJob(const std::string& code, const std::string& machine_class = "class-a") {
  EvalJob job;
  job.task.name = "scale";
  job.task.shape = "test";
  job.task.files = {{"task.yaml", "name: scale\n"}};
  job.task.digest = DigestOfFiles(job.task.files);
  job.sources = {{"candidate", code, "hash-" + code, {}}};
  job.target = "toy";
  job.machine_class = machine_class;
  return job;
}

inline EvalOutcome ContractOutcome(const std::string& worker) {
  EvalOutcome out;
  Profile p;
  p.task = "scale";
  p.shape = "test";
  p.status = Verdict::kOk;
  p.message = "measured by " + worker;
  out.profiles = {p};
  out.worker = worker;
  return out;
}

class JobQueueContract : public ::testing::TestWithParam<QueueFactory> {
 protected:
  void SetUp() override {
    auto fresh = GetParam()("", QueueOptions{}, &place_);
    if (IsSkipped()) return;
    ASSERT_NE(fresh, nullptr) << "the factory did not open a fresh queue";
  }
  /// Another connection to the test's queue (made fresh by SetUp).
  std::unique_ptr<JobQueue> Open(QueueOptions options = {}) { return GetParam()(place_, options, &place_); }
  static const WorkerInfo& A() {
    static const WorkerInfo w{"worker-a", "dev0", "class-a"};
    return w;
  }
  static const WorkerInfo& B() {
    static const WorkerInfo w{"worker-b", "dev1", "class-a"};
    return w;
  }
  std::string place_;
};

}  // namespace accelopt::service::testing
