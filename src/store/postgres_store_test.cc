// The store contract on PostgreSQL: one server for the test program
// (testing/postgres_server.h), a database of its own for each test; "another
// connection" is the same URI opened again, as an engine on another machine
// does. And what only a server has: it may be down, refuse a password, or hold
// a schema from another version of this program. Skipped, saying why, where
// PostgreSQL is not installed.

#include <libpq-fe.h>
#include <unistd.h>

#include <atomic>
#include <memory>

#include "service/job_queue.h"
#include "store/postgres_connection.h"
#include "store/postgres_migrations.h"
#include "store/store_contract.h"
#include "testing/postgres_server.h"

namespace accelopt::store::testing {
namespace {

using accelopt::testing::PostgresServer;
using accelopt::testing::SharedPostgresServer;


std::unique_ptr<Store> OpenPostgresForTest(const std::string& place, std::string* opened_at, std::string* shown_as) {
  std::string uri = place.empty() ? accelopt::testing::NewTestDatabase("store") : place;
  if (uri.empty()) return nullptr;
  *opened_at = uri;
  *shown_as = RedactUri(uri);
  auto store = OpenPostgresStore(uri);
  EXPECT_TRUE(store.ok()) << store.error().message;
  return store.ok() ? std::move(*store) : nullptr;
}

INSTANTIATE_TEST_SUITE_P(Postgres, StoreContract, ::testing::Values(StoreFactory(&OpenPostgresForTest)));

using accelopt::testing::Execute;

bool Contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

class PostgresStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    uri_ = accelopt::testing::NewTestDatabase("store");
    if (IsSkipped() || HasFailure()) return;
    std::string why_not;
    server_ = SharedPostgresServer(&why_not);
  }
  PostgresServer* server_ = nullptr;
  std::string uri_;
};

TEST(PostgresStore, AServerThatIsDownIsAClearErrorWithoutThePassword) {
  auto store = OpenStore("postgresql://someone:secret-pw@127.0.0.1:1/team");  // nothing listens on port 1
  ASSERT_FALSE(store.ok());
  const std::string& message = store.error().message;
  RecordProperty("message", message);
  EXPECT_TRUE(Contains(message, "cannot connect to postgresql://someone@127.0.0.1:1/team")) << message;
  EXPECT_TRUE(Contains(message, "refused")) << message;
  EXPECT_FALSE(Contains(message, "secret-pw")) << message;
}

TEST_F(PostgresStoreTest, AWrongPasswordIsAClearErrorThatDoesNotShowIt) {
  const std::string wrong = "not-the-password-17";
  auto store = OpenStore("postgresql://" + server_->user() + ":" + wrong + "@127.0.0.1:" +
                         std::to_string(server_->port()) + "/postgres");
  ASSERT_FALSE(store.ok());
  const std::string& message = store.error().message;
  EXPECT_TRUE(Contains(message, "password authentication failed")) << message;
  EXPECT_FALSE(Contains(message, wrong)) << message;
  EXPECT_FALSE(Contains(message, server_->password())) << message;
}

TEST_F(PostgresStoreTest, ASchemaNewerThanTheProgramIsRefusedNamingBothVersions) {
  ASSERT_TRUE(OpenStore(uri_).ok());
  ASSERT_EQ(Execute(uri_, "INSERT INTO schema_version (version) VALUES (998)"), "");
  auto store = OpenStore(uri_);
  ASSERT_FALSE(store.ok());
  const std::string& message = store.error().message;
  EXPECT_TRUE(Contains(message, RedactUri(uri_))) << message;
  EXPECT_TRUE(Contains(message, "schema version 998 is newer than this program knows (" +
                                    std::to_string(PgConnection::SchemaVersion()) + ")"))
      << message;
  EXPECT_FALSE(Contains(message, server_->password())) << message;
}

TEST_F(PostgresStoreTest, AnOlderSchemaIsMigratedKeepingWhatItHolds) {
  // A database as the first version left it: the queue's tables, with a job.
  ASSERT_EQ(Execute(uri_, std::string("CREATE TABLE schema_version (version integer PRIMARY KEY, applied_at "
                                      "timestamptz NOT NULL DEFAULT now());") +
                              kPostgresMigrations[0] + "; INSERT INTO schema_version (version) VALUES (1);" +
                              "INSERT INTO jobs (key, machine_class, job, state) VALUES ('k', 'c', '{}', 'queued')"),
            "");
  auto store = OpenStore(uri_);
  ASSERT_TRUE(store.ok()) << store.error().message;
  EXPECT_TRUE((*store)->CreateRun(Json::object()).ok());
  EXPECT_EQ(Execute(uri_, "DO $$ BEGIN IF (SELECT count(*) FROM jobs) <> 1 OR (SELECT max(version) FROM "
                          "schema_version) <> " +
                              std::to_string(PgConnection::SchemaVersion()) +
                              " THEN RAISE EXCEPTION 'not migrated'; END IF; END $$"),
            "");
}

TEST_F(PostgresStoreTest, TheStoreAndTheJobQueueShareOneDatabase) {
  auto queue = service::OpenJobQueue(uri_);
  ASSERT_TRUE(queue.ok()) << queue.error().message;
  auto store = OpenStore(uri_);
  ASSERT_TRUE(store.ok()) << store.error().message;
  int64_t run = *(*store)->CreateRun(Json{{"tasks", {"silu"}}});
  ASSERT_TRUE((*store)->PutHardware("cpu", "class-a", Json{{"peak_gflops", 100}}).ok());
  auto counts = (*queue)->Counts();
  ASSERT_TRUE(counts.ok()) << counts.error().message;
  EXPECT_EQ(counts->queued, 0);
  // A second engine's connection sees the first one's run and profile.
  auto other = OpenStore(uri_);
  ASSERT_TRUE(other.ok()) << other.error().message;
  EXPECT_TRUE((*(*other)->GetRun(run)).has_value());
  EXPECT_EQ((**(*other)->GetHardware("cpu", "class-a"))["peak_gflops"], 100);
}

}  // namespace
}  // namespace accelopt::store::testing
