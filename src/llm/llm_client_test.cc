// LlmClient over the real HTTP backends against a real loopback server.

#include "llm/llm_client.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <chrono>
#include <future>
#include <thread>

#include "core/json_io.h"
#include "testing/fake_llm_server.h"

namespace accelopt::llm {
namespace {

using testing::Behavior;
using testing::FakeLlmServer;

constexpr const char* kKeyVar = "ACCELOPT_TEST_KEY";
constexpr const char* kKey = "sk-test-3f9a1c77e0d24b5aSECRET";

class Client : public ::testing::Test {
 protected:
  void SetUp() override { setenv(kKeyVar, kKey, 1); }

  std::unique_ptr<LlmClient> Make(const std::string& kind = "openai", RetryOptions retry = Fast(), Budget budget = {},
                                  int concurrency = 4, double timeout = 5, size_t max_bytes = 1 << 20) {
    HttpBackendOptions http;
    http.base_url = server_.base_url();
    http.model = "test-model";
    http.api_key_env = kKeyVar;
    http.timeout_seconds = timeout;
    http.max_response_bytes = max_bytes;
    auto model = kind == "openai" ? OpenOpenAiChatModel(http) : OpenAnthropicChatModel(http);
    EXPECT_TRUE(model.ok()) << model.error().message;
    std::map<std::string, LlmClient::Backend> backends;
    backends["b"] = LlmClient::Backend{std::move(*model), concurrency};
    PriceTable prices;
    prices.Set("test-model", {2.0, 8.0});
    RoleSettings planner{"b", 0.5, 256, "high", 0};
    RoleSettings summarizer{"b", std::nullopt, 1000, "", 2048};
    return std::make_unique<LlmClient>(
        std::move(backends), std::map<std::string, RoleSettings>{{"planner", planner}, {"summarizer", summarizer}},
        retry, budget, prices);
  }
  static RetryOptions Fast() { return RetryOptions{4, 0.01, 0.05, 0.5}; }

  // Every record, as it would be stored, must be free of the key.
  void ExpectNoKeyAnywhere(const LlmClient& client) {
    for (const auto& r : client.records()) {
      EXPECT_EQ(r.ToJson().dump().find("SECRET"), std::string::npos) << r.ToJson().dump();
    }
  }

  FakeLlmServer server_;
};

TEST_F(Client, OpenAiAnswerUsageCostAndRequestShape) {
  server_.Enqueue({.text = "pong", .input_tokens = 1000, .output_tokens = 500, .reasoning_tokens = 120});
  auto client = Make();
  auto answer = client->Chat("planner", {{"system", "You plan."}, {"user", "ping"}});
  ASSERT_TRUE(answer.ok()) << answer.error().message;
  EXPECT_EQ(answer->text, "pong");
  EXPECT_EQ(answer->usage.input_tokens, 1000);
  EXPECT_EQ(answer->usage.output_tokens, 500);
  EXPECT_EQ(answer->usage.reasoning_tokens, 120);
  EXPECT_FALSE(answer->usage.estimated);

  auto records = client->records();
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(records[0].attempts.size(), 1u);
  ASSERT_TRUE(records[0].cost_usd.has_value());
  EXPECT_DOUBLE_EQ(*records[0].cost_usd, (1000 * 2.0 + 500 * 8.0) / 1e6);
  EXPECT_EQ(records[0].backend, "openai");
  EXPECT_EQ(records[0].model, "test-model");

  auto sent = server_.requests().at(0);
  EXPECT_EQ(sent.path, "/v1/chat/completions");
  EXPECT_EQ(sent.headers.at("authorization"), std::string("Bearer ") + kKey);
  Json body = Json::parse(sent.body);
  EXPECT_EQ(body["model"], "test-model");
  EXPECT_EQ(body["messages"].size(), 2u);
  EXPECT_EQ(body["temperature"], 0.5);
  EXPECT_EQ(body["max_tokens"], 256);
  EXPECT_EQ(body["reasoning_effort"], "high");
  ExpectNoKeyAnywhere(*client);
}

TEST_F(Client, RateLimitHonoursRetryAfter) {
  server_.Enqueue({.behavior = Behavior::kRateLimit, .retry_after_seconds = 0.3});
  auto client = Make();
  auto start = std::chrono::steady_clock::now();
  auto answer = client->Chat("planner", {{"user", "x"}});
  double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_TRUE(answer.ok()) << answer.error().message;
  auto r = client->records().at(0);
  ASSERT_EQ(r.attempts.size(), 2u);
  EXPECT_EQ(r.attempts[0].outcome, "rate_limited");
  EXPECT_EQ(r.attempts[0].http_status, 429);
  EXPECT_DOUBLE_EQ(r.attempts[1].waited_seconds, 0.3);
  EXPECT_GE(elapsed, 0.3);
  EXPECT_EQ(server_.request_count(), 2);
}

TEST_F(Client, ServerErrorThenSuccess) {
  server_.Enqueue({.behavior = Behavior::kServerError});
  auto client = Make();
  ASSERT_TRUE(client->Chat("planner", {{"user", "x"}}).ok());
  auto r = client->records().at(0);
  ASSERT_EQ(r.attempts.size(), 2u);
  EXPECT_EQ(r.attempts[0].outcome, "server_error");
  EXPECT_GT(r.attempts[1].waited_seconds, 0);
  EXPECT_EQ(client->totals().attempts, 2);
}

TEST_F(Client, PersistentServerErrorGivesUpAfterMaxAttempts) {
  for (int i = 0; i < 4; ++i) server_.Enqueue({.behavior = Behavior::kServerError});
  auto client = Make();
  auto answer = client->Chat("planner", {{"user", "x"}});
  ASSERT_FALSE(answer.ok());
  EXPECT_NE(answer.error().message.find("gave up after 4 attempts"), std::string::npos) << answer.error().message;
  EXPECT_EQ(server_.request_count(), 4);
  EXPECT_EQ(client->records().at(0).error_kind, "server_error");
  EXPECT_EQ(client->totals().failed_calls, 1);
}

TEST_F(Client, ClientErrorIsNotRetried) {
  server_.Enqueue({.behavior = Behavior::kBadRequest});
  auto client = Make();
  auto answer = client->Chat("planner", {{"user", "x"}});
  ASSERT_FALSE(answer.ok());
  EXPECT_EQ(server_.request_count(), 1);
  EXPECT_EQ(client->records().at(0).error_kind, "client_error");
  EXPECT_NE(answer.error().message.find("HTTP 400"), std::string::npos);
}

TEST_F(Client, MalformedJsonIsRecordedNotRetried) {
  server_.Enqueue({.behavior = Behavior::kMalformedJson});
  auto client = Make();
  ASSERT_FALSE(client->Chat("planner", {{"user", "x"}}).ok());
  EXPECT_EQ(server_.request_count(), 1);
  auto r = client->records().at(0);
  EXPECT_EQ(r.error_kind, "malformed");
  EXPECT_EQ(r.response, R"({"choices": [)");  // what the server sent, kept for inspection
}

TEST_F(Client, HangPastTimeoutIsATimeoutAndRetried) {
  server_.Enqueue({.behavior = Behavior::kHang, .hang_seconds = 3});
  auto client = Make("openai", Fast(), {}, 4, /*timeout=*/0.4);
  auto start = std::chrono::steady_clock::now();
  auto answer = client->Chat("planner", {{"user", "x"}});
  double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_TRUE(answer.ok()) << answer.error().message;
  auto r = client->records().at(0);
  ASSERT_EQ(r.attempts.size(), 2u);
  EXPECT_EQ(r.attempts[0].outcome, "timeout");
  EXPECT_LT(elapsed, 2.0);
}

TEST_F(Client, HugeResponseIsRefusedNotLoaded) {
  server_.Enqueue({.behavior = Behavior::kHuge, .huge_bytes = 4 << 20});
  auto client = Make("openai", Fast(), {}, 4, 5, /*max_bytes=*/1 << 20);
  auto answer = client->Chat("planner", {{"user", "x"}});
  ASSERT_FALSE(answer.ok());
  EXPECT_NE(answer.error().message.find("larger than"), std::string::npos) << answer.error().message;
  EXPECT_EQ(client->records().at(0).error_kind, "malformed");
}

TEST_F(Client, DroppedConnectionIsRetried) {
  server_.Enqueue({.behavior = Behavior::kDrop});
  auto client = Make();
  ASSERT_TRUE(client->Chat("planner", {{"user", "x"}}).ok());
  auto r = client->records().at(0);
  ASSERT_EQ(r.attempts.size(), 2u);
  EXPECT_EQ(r.attempts[0].outcome, "connection");
}

TEST_F(Client, MissingUsageIsEstimatedAndMarked) {
  server_.Enqueue({.behavior = Behavior::kNoUsage, .text = "a forty character answer, more or less.."});
  auto client = Make();
  auto answer = client->Chat("planner", {{"user", "x"}});
  ASSERT_TRUE(answer.ok());
  EXPECT_TRUE(answer->usage.estimated);
  EXPECT_EQ(answer->usage.output_tokens, 10);
  EXPECT_TRUE(client->totals().estimated_tokens);
}

TEST_F(Client, KeyEchoedByServerIsRedacted) {
  server_.Enqueue({.behavior = Behavior::kEchoKey});
  auto client = Make();
  auto answer = client->Chat("planner", {{"user", "x"}});
  ASSERT_FALSE(answer.ok());
  EXPECT_EQ(answer.error().message.find("SECRET"), std::string::npos) << answer.error().message;
  EXPECT_NE(answer.error().message.find("[redacted]"), std::string::npos) << answer.error().message;
  ExpectNoKeyAnywhere(*client);
}

TEST_F(Client, AnthropicMessagesWithThinking) {
  server_.Enqueue({.text = "lesson", .input_tokens = 300, .output_tokens = 90, .reasoning = "Let me compare."});
  auto client = Make("anthropic");
  auto answer = client->Chat("summarizer", {{"system", "Be brief."}, {"user", "slow vs fast"}});
  ASSERT_TRUE(answer.ok()) << answer.error().message;
  EXPECT_EQ(answer->text, "lesson");
  EXPECT_EQ(answer->reasoning, "Let me compare.");
  EXPECT_EQ(answer->usage.input_tokens, 300);
  auto sent = server_.requests().at(0);
  EXPECT_EQ(sent.path, "/v1/messages");
  EXPECT_EQ(sent.headers.at("x-api-key"), kKey);
  EXPECT_EQ(sent.headers.at("anthropic-version"), "2023-06-01");
  Json body = Json::parse(sent.body);
  EXPECT_EQ(body["system"], "Be brief.");
  EXPECT_EQ(body["messages"].size(), 1u);
  EXPECT_EQ(body["thinking"]["budget_tokens"], 2048);
  EXPECT_GT(body["max_tokens"].get<int>(), 2048);
  EXPECT_FALSE(body.contains("temperature"));
  EXPECT_GT(answer->usage.reasoning_tokens, 0);
  EXPECT_TRUE(answer->usage.reasoning_estimated);  // Anthropic gives no count of its own
  EXPECT_FALSE(answer->usage.estimated);
  ExpectNoKeyAnywhere(*client);
}

TEST_F(Client, InlineThinkingIsSplitOffForEveryRoleAndRecorded) {
  auto client = Make();
  for (std::string role : {"planner", "summarizer"}) {
    server_.Enqueue({.text = "<think>\nweighing " + role + " options\n```cpp\nint draft;\n```</think>\n\nanswer"});
    auto answer = client->Chat(role, {{"user", "x"}});
    ASSERT_TRUE(answer.ok()) << answer.error().message;
    EXPECT_EQ(answer->text, "answer");
    EXPECT_EQ(answer->reasoning, "weighing " + role + " options\n```cpp\nint draft;\n```");
    EXPECT_EQ(client->records().back().response, "answer");
    EXPECT_EQ(client->records().back().reasoning, answer->reasoning);
  }
}

TEST_F(Client, TokenBudgetStopsNewCalls) {
  auto client = Make("openai", Fast(), Budget{std::nullopt, 30, std::nullopt});
  EXPECT_TRUE(client->Chat("planner", {{"user", "x"}}).ok());  // 18 tokens
  EXPECT_TRUE(client->Chat("planner", {{"user", "x"}}).ok());  // 36
  auto refused = client->Chat("planner", {{"user", "x"}});
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.error().message.find("token budget"), std::string::npos);
  EXPECT_EQ(server_.request_count(), 2);
  EXPECT_EQ(client->records().back().error_kind, "budget");
}

TEST_F(Client, MoneyBudgetNeedsAKnownPriceAndStops) {
  auto client = Make("openai", Fast(), Budget{1e-6, std::nullopt, std::nullopt});
  EXPECT_TRUE(client->Chat("planner", {{"user", "x"}}).ok());  // 11*2 + 7*8 = 78 micro-dollars > budget
  auto refused = client->Chat("planner", {{"user", "x"}});
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.error().message.find("money budget"), std::string::npos);
  EXPECT_EQ(server_.request_count(), 1);
}

// With $0.40 set, one kill and one resume once spent $0.825: each session
// began at zero. What a run's earlier sessions spent counts against its budget.
TEST_F(Client, SpendingBeforeThisClientCountsAgainstTheBudget) {
  Budget money{0.40, std::nullopt, std::nullopt};
  money.spent_usd = 0.40;
  auto client = Make("openai", Fast(), money);
  auto refused = client->Chat("planner", {{"user", "x"}});
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.error().message.find("money budget of $0.4000 is spent ($0.4000, $0.4000 of it before this "
                                         "session)"),
            std::string::npos)
      << refused.error().message;
  EXPECT_EQ(client->BudgetSpent().value_or(""), "money budget spent");
  Budget tokens{std::nullopt, 30, std::nullopt};
  tokens.spent_tokens = 20;
  auto second = Make("openai", Fast(), tokens);
  EXPECT_TRUE(second->Chat("planner", {{"user", "x"}}).ok());  // 20 + 18 tokens
  EXPECT_FALSE(second->Chat("planner", {{"user", "x"}}).ok());
  EXPECT_EQ(server_.request_count(), 1);
}

TEST_F(Client, WallTimeBudget) {
  auto client = Make("openai", Fast(), Budget{std::nullopt, std::nullopt, 0.0});
  auto refused = client->Chat("planner", {{"user", "x"}});
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.error().message.find("wall-time budget"), std::string::npos);
  EXPECT_EQ(server_.request_count(), 0);
}

TEST_F(Client, UnknownRoleNamesTheConfiguredOnes) {
  auto client = Make();
  auto answer = client->Chat("fixer", {{"user", "x"}});
  ASSERT_FALSE(answer.ok());
  EXPECT_NE(answer.error().message.find("no model configured for role 'fixer' (configured: planner, summarizer"),
            std::string::npos)
      << answer.error().message;
}

TEST_F(Client, ConcurrencyIsLimitedPerBackend) {
  for (int i = 0; i < 6; ++i) server_.Enqueue({.behavior = Behavior::kHang, .hang_seconds = 0.3});
  auto client = Make("openai", Fast(), {}, /*concurrency=*/2);
  auto start = std::chrono::steady_clock::now();
  std::vector<std::future<bool>> calls;
  for (int i = 0; i < 6; ++i)
    calls.push_back(std::async(std::launch::async, [&] { return client->Chat("planner", {{"user", "x"}}).ok(); }));
  for (auto& c : calls) EXPECT_TRUE(c.get());
  double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_GE(elapsed, 0.85);  // three waves of two
  EXPECT_EQ(client->totals().calls, 6);
}

TEST_F(Client, ListenersSeeEveryCall) {
  auto client = Make();
  std::vector<std::string> seen;
  client->AddListener(
      [&](const CallRecord& r) { seen.push_back(r.agent_role + ":" + (r.error.empty() ? "ok" : "err")); });
  client->Chat("planner", {{"user", "x"}});
  client->Chat("nobody", {{"user", "x"}});
  EXPECT_EQ(seen, (std::vector<std::string>{"planner:ok", "nobody:err"}));
}

}  // namespace
}  // namespace accelopt::llm
