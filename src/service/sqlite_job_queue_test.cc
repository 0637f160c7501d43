// The job queue contract on SQLite: each test's queue in a file of its own;
// "another connection" is the same file opened again, as a worker process does.

#include <memory>

#include "service/job_queue_contract.h"
#include "testing/temp_dir.h"

namespace accelopt::service::testing {
namespace {

std::unique_ptr<JobQueue> OpenSqlite(const std::string& place, const QueueOptions& options, std::string* opened_at) {
  static std::vector<std::unique_ptr<accelopt::testing::TempDir>> dirs;  // live until the test program ends
  std::string path = place;
  if (path.empty()) {
    dirs.push_back(std::make_unique<accelopt::testing::TempDir>());
    path = dirs.back()->path() + "/queue.db";
  }
  *opened_at = path;
  SqliteQueueOptions o;
  o.path = path;
  o.queue = options;
  auto queue = OpenSqliteJobQueue(o);
  EXPECT_TRUE(queue.ok()) << queue.error().message;
  return queue.ok() ? std::move(*queue) : nullptr;
}

INSTANTIATE_TEST_SUITE_P(Sqlite, JobQueueContract, ::testing::Values(QueueFactory(&OpenSqlite)));

TEST(SqliteJobQueue, AFolderIsNotAQueue) {
  accelopt::testing::TempDir dir;
  SqliteQueueOptions o;
  o.path = dir.path();
  auto queue = OpenSqliteJobQueue(o);
  ASSERT_FALSE(queue.ok());
  EXPECT_NE(queue.error().message.find(dir.path()), std::string::npos) << queue.error().message;
}

}  // namespace
}  // namespace accelopt::service::testing
