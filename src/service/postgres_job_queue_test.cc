// The job queue contract on PostgreSQL: one server for the test program
// (testing/postgres_server.h), a database of its own for each test; "another
// connection" is the same URI opened again, as a worker on another machine
// does. Skipped, saying why, where PostgreSQL is not installed.

#include <libpq-fe.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <set>
#include <thread>

#include "service/job_queue_contract.h"
#include "store/postgres_connection.h"
#include "testing/postgres_server.h"

namespace accelopt::service::testing {
namespace {

using accelopt::testing::PostgresServer;
using accelopt::testing::SharedPostgresServer;


std::unique_ptr<JobQueue> OpenPostgres(const std::string& place, const QueueOptions& options,
                                       std::string* opened_at) {
  std::string uri = place.empty() ? accelopt::testing::NewTestDatabase("queue") : place;
  if (uri.empty()) return nullptr;
  *opened_at = uri;
  PostgresQueueOptions o;
  o.uri = uri;
  o.queue = options;
  auto queue = OpenPostgresJobQueue(o);
  EXPECT_TRUE(queue.ok()) << queue.error().message;
  return queue.ok() ? std::move(*queue) : nullptr;
}

INSTANTIATE_TEST_SUITE_P(Postgres, JobQueueContract, ::testing::Values(QueueFactory(&OpenPostgres)));

using accelopt::testing::Execute;

class PostgresJobQueueTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string why_not;
    server_ = SharedPostgresServer(&why_not);
    if (!server_) {
      if (!HasFailure()) GTEST_SKIP() << why_not;
      return;
    }
    static std::atomic<int> next{0};
    auto uri = server_->CreateDatabase("test_" + std::to_string(getpid()) + "_" + std::to_string(next++));
    ASSERT_TRUE(uri.ok()) << uri.error().message;
    uri_ = *uri;
  }
  std::unique_ptr<JobQueue> Open(const std::string& uri, QueueOptions options = {}) {
    PostgresQueueOptions o;
    o.uri = uri;
    o.queue = options;
    auto queue = OpenPostgresJobQueue(o);
    EXPECT_TRUE(queue.ok()) << queue.error().message;
    return queue.ok() ? std::move(*queue) : nullptr;
  }
  PostgresServer* server_ = nullptr;
  std::string uri_;
};

TEST(PostgresJobQueue, AServerThatIsDownIsAClearError) {
  // Port 1: nothing listens there.
  PostgresQueueOptions o;
  o.uri = "postgresql://someone:secret-pw@127.0.0.1:1/jobs";
  auto queue = OpenPostgresJobQueue(o);
  ASSERT_FALSE(queue.ok());
  const std::string& message = queue.error().message;
  RecordProperty("message", message);
  EXPECT_NE(message.find("cannot connect to postgresql://someone@127.0.0.1:1/jobs"), std::string::npos) << message;
  EXPECT_NE(message.find("refused"), std::string::npos) << message;
  EXPECT_EQ(message.find("secret-pw"), std::string::npos) << message;
}

TEST_F(PostgresJobQueueTest, AWrongPasswordIsAClearErrorThatDoesNotShowThePassword) {
  const std::string wrong = "not-the-password-42";
  const std::string uri = "postgresql://" + server_->user() + ":" + wrong + "@127.0.0.1:" +
                          std::to_string(server_->port()) + "/postgres";
  PostgresQueueOptions o;
  o.uri = uri;
  auto queue = OpenPostgresJobQueue(o);
  ASSERT_FALSE(queue.ok());
  const std::string& message = queue.error().message;
  RecordProperty("message", message);
  EXPECT_NE(message.find("cannot connect to postgresql://" + server_->user() + "@127.0.0.1:" +
                         std::to_string(server_->port()) + "/postgres"),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("password authentication failed"), std::string::npos) << message;
  EXPECT_EQ(message.find(wrong), std::string::npos) << message;
  EXPECT_EQ(message.find(server_->password()), std::string::npos) << message;
}

TEST_F(PostgresJobQueueTest, ASchemaNewerThanTheProgramIsRefusedNamingBothVersions) {
  ASSERT_NE(Open(uri_), nullptr);  // creates the schema at the version this program knows
  ASSERT_EQ(Execute(uri_, "INSERT INTO schema_version (version) VALUES (999)"), "");
  PostgresQueueOptions o;
  o.uri = uri_;
  auto queue = OpenPostgresJobQueue(o);
  ASSERT_FALSE(queue.ok());
  const std::string& message = queue.error().message;
  RecordProperty("message", message);
  EXPECT_NE(message.find("schema version 999 is newer than this program knows (" +
                         std::to_string(store::PgConnection::SchemaVersion()) + ")"),
            std::string::npos)
      << message;
  EXPECT_EQ(message.find(server_->password()), std::string::npos) << message;
}

TEST_F(PostgresJobQueueTest, OpenedAgainTheQueueKeepsItsJobsAndItsSchemaVersion) {
  auto q = Open(uri_);
  ASSERT_NE(q, nullptr);
  auto id = q->Enqueue(ContractJob("kept"));
  ASSERT_TRUE(id.ok()) << id.error().message;
  q.reset();
  auto again = Open(uri_);
  ASSERT_NE(again, nullptr);
  const int64_t ids[] = {*id};
  auto polled = again->Poll(ids);
  ASSERT_TRUE(polled.ok()) << polled.error().message;
  EXPECT_EQ((*polled)[0].state, JobState::kQueued);
  // Each version applied once: a second version row would fail the primary key.
  const std::string versions = std::to_string(store::PgConnection::SchemaVersion());
  EXPECT_EQ(Execute(uri_, "DO $$ BEGIN IF (SELECT count(*) FROM schema_version) <> " + versions + " THEN "
                          "RAISE EXCEPTION 'schema_version has % rows', (SELECT count(*) FROM schema_version); "
                          "END IF; END $$"),
            "");
}

TEST_F(PostgresJobQueueTest, ManyOpenersOfANewDatabaseMigrateItOnce) {
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int i = 0; i < 4; ++i)
    threads.emplace_back([&] {
      PostgresQueueOptions o;
      o.uri = uri_;
      if (!OpenPostgresJobQueue(o).ok()) ++failures;
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(failures.load(), 0);
}

// Four machines, each with its own connection, claim 200 jobs at once: every
// job is claimed exactly once, by one attempt.
TEST_F(PostgresJobQueueTest, ConcurrentClaimsFromManyConnectionsNeverShareAnAttempt) {
  auto q = Open(uri_);
  ASSERT_NE(q, nullptr);
  constexpr int kJobs = 200, kWorkers = 4;
  for (int i = 0; i < kJobs; ++i) ASSERT_TRUE(q->Enqueue(ContractJob("job" + std::to_string(i))).ok());
  std::mutex mu;
  std::multiset<int64_t> claimed;
  std::atomic<int> errors{0};
  std::vector<std::thread> threads;
  const auto start = std::chrono::steady_clock::now();
  for (int w = 0; w < kWorkers; ++w) {
    threads.emplace_back([&, w] {
      auto mine = Open(uri_);
      if (!mine) {
        ++errors;
        return;
      }
      const WorkerInfo me{"machine" + std::to_string(w), "dev0", "class-a"};
      for (;;) {
        auto c = mine->Claim(me);
        if (!c) {
          ADD_FAILURE() << c.error().message;
          ++errors;
          return;
        }
        if (!c->has_value()) return;
        EXPECT_EQ((*c)->attempt, 1);
        {
          std::lock_guard lock(mu);
          claimed.insert((*c)->id);
        }
        if (Status s = mine->Complete(**c, me, ContractOutcome(me.name)); !s) {
          ADD_FAILURE() << s.error().message;
          ++errors;
        }
      }
    });
  }
  for (auto& t : threads) t.join();
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(errors.load(), 0);
  EXPECT_EQ(claimed.size(), static_cast<size_t>(kJobs));
  EXPECT_EQ(std::set<int64_t>(claimed.begin(), claimed.end()).size(), static_cast<size_t>(kJobs));
  auto counts = q->Counts(60);
  ASSERT_TRUE(counts.ok()) << counts.error().message;
  EXPECT_EQ(counts->done, kJobs);
  EXPECT_EQ(counts->live_workers.size(), static_cast<size_t>(kWorkers));
  RecordProperty("claim_seconds", std::to_string(seconds));
}

TEST_F(PostgresJobQueueTest, AConnectionBrokenByTheServerIsResetOnTheNextCall) {
  auto q = Open(uri_);
  ASSERT_NE(q, nullptr);
  ASSERT_TRUE(q->Enqueue(ContractJob("before")).ok());
  // The server ends every other session on this database (as a restart would).
  const std::string admin = server_->Uri("postgres");
  const std::string db = uri_.substr(uri_.rfind('/') + 1);
  ASSERT_EQ(Execute(admin, "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '" + db + "'"),
            "");
  auto first = q->Enqueue(ContractJob("after"));  // may fail: the connection was found broken
  auto second = q->Enqueue(ContractJob("after"));
  ASSERT_TRUE(second.ok()) << second.error().message;
  if (!first.ok()) {
    EXPECT_EQ(first.error().message.find(server_->password()), std::string::npos);
  }
}

}  // namespace
}  // namespace accelopt::service::testing
