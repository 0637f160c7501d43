#include "testing/fake_llm_server.h"

#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "testing/httplib.h"

namespace accelopt::testing {
namespace {

using nlohmann::json;

constexpr char kOpenAiBody[] = R"({"model":"m1","messages":[{"role":"user","content":"hi"}]})";
constexpr char kAnthropicBody[] = R"({"model":"claude-x","max_tokens":50,"messages":[{"role":"user","content":"hi"}]})";

double SecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

class FakeLlmServerTest : public ::testing::Test {
 protected:
  FakeLlmServerTest() : client_("127.0.0.1", server_.port()) { client_.set_read_timeout(10, 0); }

  httplib::Result PostOpenAi(const std::string& body = kOpenAiBody) {
    return client_.Post("/v1/chat/completions", body, "application/json");
  }
  httplib::Result PostAnthropic(const std::string& body = kAnthropicBody) {
    return client_.Post("/v1/messages", body, "application/json");
  }

  FakeLlmServer server_;
  httplib::Client client_;
};

TEST_F(FakeLlmServerTest, ListensOnLoopback) {
  EXPECT_GT(server_.port(), 0);
  EXPECT_EQ(server_.base_url(), "http://127.0.0.1:" + std::to_string(server_.port()) + "/v1");
}

TEST_F(FakeLlmServerTest, OpenAiAnswer) {
  server_.Enqueue({.text = "hello", .input_tokens = 3, .output_tokens = 5, .reasoning_tokens = 2});
  auto res = PostOpenAi();
  ASSERT_TRUE(res) << httplib::to_string(res.error());
  EXPECT_EQ(res->status, 200);
  EXPECT_EQ(res->get_header_value("Content-Type"), "application/json");
  json body = json::parse(res->body);
  EXPECT_EQ(body["object"], "chat.completion");
  EXPECT_EQ(body["model"], "m1");
  ASSERT_EQ(body["choices"].size(), 1u);
  EXPECT_EQ(body["choices"][0]["index"], 0);
  EXPECT_EQ(body["choices"][0]["message"]["role"], "assistant");
  EXPECT_EQ(body["choices"][0]["message"]["content"], "hello");
  EXPECT_FALSE(body["choices"][0]["message"].contains("reasoning_content"));
  EXPECT_EQ(body["choices"][0]["finish_reason"], "stop");
  EXPECT_EQ(body["usage"]["prompt_tokens"], 3);
  EXPECT_EQ(body["usage"]["completion_tokens"], 5);
  EXPECT_EQ(body["usage"]["total_tokens"], 8);
  EXPECT_EQ(body["usage"]["completion_tokens_details"]["reasoning_tokens"], 2);
}

TEST_F(FakeLlmServerTest, OpenAiReasoningContent) {
  server_.Enqueue({.reasoning = "because"});
  auto res = PostOpenAi();
  ASSERT_TRUE(res);
  EXPECT_EQ(json::parse(res->body)["choices"][0]["message"]["reasoning_content"], "because");
}

TEST_F(FakeLlmServerTest, AnthropicAnswer) {
  server_.Enqueue({.text = "bonjour", .input_tokens = 4, .output_tokens = 6});
  auto res = PostAnthropic();
  ASSERT_TRUE(res) << httplib::to_string(res.error());
  EXPECT_EQ(res->status, 200);
  json body = json::parse(res->body);
  EXPECT_EQ(body["type"], "message");
  EXPECT_EQ(body["role"], "assistant");
  EXPECT_EQ(body["model"], "claude-x");
  ASSERT_EQ(body["content"].size(), 1u);
  EXPECT_EQ(body["content"][0]["type"], "text");
  EXPECT_EQ(body["content"][0]["text"], "bonjour");
  EXPECT_EQ(body["stop_reason"], "end_turn");
  EXPECT_EQ(body["usage"]["input_tokens"], 4);
  EXPECT_EQ(body["usage"]["output_tokens"], 6);
}

TEST_F(FakeLlmServerTest, AnthropicThinkingOnlyWhenAsked) {
  json request = json::parse(kAnthropicBody);
  request["thinking"] = {{"type", "enabled"}, {"budget_tokens", 1024}};
  server_.Enqueue({.text = "answer", .reasoning = "pondering"});
  auto res = PostAnthropic(request.dump());
  ASSERT_TRUE(res);
  json body = json::parse(res->body);
  ASSERT_EQ(body["content"].size(), 2u);
  EXPECT_EQ(body["content"][0]["type"], "thinking");
  EXPECT_EQ(body["content"][0]["thinking"], "pondering");
  EXPECT_EQ(body["content"][1]["type"], "text");
  EXPECT_EQ(body["content"][1]["text"], "answer");
}

TEST_F(FakeLlmServerTest, NoUsage) {
  server_.Enqueue({.behavior = Behavior::kNoUsage, .text = "a"});
  server_.Enqueue({.behavior = Behavior::kNoUsage, .text = "b"});
  auto openai = PostOpenAi();
  auto anthropic = PostAnthropic();
  ASSERT_TRUE(openai);
  ASSERT_TRUE(anthropic);
  json openai_body = json::parse(openai->body);
  json anthropic_body = json::parse(anthropic->body);
  EXPECT_EQ(openai_body["choices"][0]["message"]["content"], "a");
  EXPECT_FALSE(openai_body.contains("usage"));
  EXPECT_EQ(anthropic_body["content"][0]["text"], "b");
  EXPECT_FALSE(anthropic_body.contains("usage"));
}

TEST_F(FakeLlmServerTest, RateLimitWithRetryAfter) {
  server_.Enqueue({.behavior = Behavior::kRateLimit, .retry_after_seconds = 0.2});
  server_.Enqueue({.behavior = Behavior::kRateLimit, .retry_after_seconds = 2});
  server_.Enqueue({.behavior = Behavior::kRateLimit});
  auto fractional = PostOpenAi();
  auto whole = PostAnthropic();
  auto none = PostOpenAi();
  ASSERT_TRUE(fractional);
  ASSERT_TRUE(whole);
  ASSERT_TRUE(none);
  EXPECT_EQ(fractional->status, 429);
  EXPECT_EQ(fractional->get_header_value("Retry-After"), "0.2");
  EXPECT_TRUE(json::parse(fractional->body)["error"].contains("message"));
  EXPECT_EQ(whole->status, 429);
  EXPECT_EQ(whole->get_header_value("Retry-After"), "2");
  EXPECT_EQ(json::parse(whole->body)["type"], "error");
  EXPECT_EQ(json::parse(whole->body)["error"]["type"], "rate_limit_error");
  EXPECT_EQ(none->status, 429);
  EXPECT_FALSE(none->has_header("Retry-After"));
}

TEST_F(FakeLlmServerTest, ServerErrorAndBadRequest) {
  server_.Enqueue({.behavior = Behavior::kServerError});
  server_.Enqueue({.behavior = Behavior::kBadRequest});
  auto server_error = PostOpenAi();
  auto bad_request = PostAnthropic();
  ASSERT_TRUE(server_error);
  ASSERT_TRUE(bad_request);
  EXPECT_EQ(server_error->status, 500);
  EXPECT_TRUE(json::parse(server_error->body)["error"].contains("message"));
  EXPECT_EQ(bad_request->status, 400);
  EXPECT_EQ(json::parse(bad_request->body)["error"]["type"], "invalid_request_error");
}

TEST_F(FakeLlmServerTest, MalformedJson) {
  server_.Enqueue({.behavior = Behavior::kMalformedJson});
  auto res = PostOpenAi();
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  EXPECT_EQ(res->body, R"({"choices": [)");
  EXPECT_TRUE(json::parse(res->body, nullptr, false).is_discarded());
}

TEST_F(FakeLlmServerTest, InvalidRequestBodyIsRejected) {
  auto res = PostOpenAi("not json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 400);
}

TEST_F(FakeLlmServerTest, Huge) {
  server_.Enqueue({.behavior = Behavior::kHuge});
  server_.Enqueue({.behavior = Behavior::kHuge, .huge_bytes = 1000});
  auto openai = PostOpenAi();
  auto anthropic = PostAnthropic();
  ASSERT_TRUE(openai) << httplib::to_string(openai.error());
  ASSERT_TRUE(anthropic);
  EXPECT_EQ(openai->status, 200);
  EXPECT_GT(openai->body.size(), size_t{32} << 20);
  EXPECT_EQ(json::parse(openai->body)["choices"][0]["message"]["content"].get<std::string>().size(), size_t{32} << 20);
  EXPECT_EQ(json::parse(anthropic->body)["content"][0]["text"].get<std::string>(), std::string(1000, 'x'));
}

TEST_F(FakeLlmServerTest, DropSendsNothing) {
  server_.Enqueue({.behavior = Behavior::kDrop});
  server_.Enqueue({.behavior = Behavior::kDrop});
  auto res = PostOpenAi();
  EXPECT_FALSE(res);
  EXPECT_EQ(res.error(), httplib::Error::Read) << httplib::to_string(res.error());
  auto anthropic = PostAnthropic();
  EXPECT_FALSE(anthropic);
  // The server is unharmed.
  auto after = PostOpenAi();
  ASSERT_TRUE(after);
  EXPECT_EQ(after->status, 200);
  EXPECT_EQ(server_.request_count(), 3);
}

TEST_F(FakeLlmServerTest, DropWithRawSocketSeesNoBytes) {
  server_.Enqueue({.behavior = Behavior::kDrop});
  // httplib::Client reports only "Read"; look at the bytes with the client's streaming receiver instead.
  std::string bytes;
  httplib::Request req;
  req.method = "POST";
  req.path = "/v1/chat/completions";
  req.body = kOpenAiBody;
  req.set_header("Content-Type", "application/json");
  bool got_response_line = false;
  req.response_handler = [&](const httplib::Response&) {
    got_response_line = true;
    return true;
  };
  req.content_receiver = [&](const char* data, size_t n, uint64_t, uint64_t) {
    bytes.append(data, n);
    return true;
  };
  httplib::Response res;
  httplib::Error error = httplib::Error::Success;
  EXPECT_FALSE(client_.send(req, res, error));
  EXPECT_FALSE(got_response_line);
  EXPECT_TRUE(bytes.empty());
}

TEST_F(FakeLlmServerTest, HangThenAnswer) {
  server_.Enqueue({.behavior = Behavior::kHang, .text = "late", .hang_seconds = 0.3});
  auto start = std::chrono::steady_clock::now();
  auto res = PostOpenAi();
  double elapsed = SecondsSince(start);
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  EXPECT_EQ(json::parse(res->body)["choices"][0]["message"]["content"], "late");
  EXPECT_GE(elapsed, 0.29);
  EXPECT_LT(elapsed, 3.0);
}

TEST_F(FakeLlmServerTest, ServesConcurrently) {
  constexpr int kRequests = 16;
  for (int i = 0; i < kRequests; ++i) server_.Enqueue({.behavior = Behavior::kHang, .hang_seconds = 0.5});
  auto start = std::chrono::steady_clock::now();
  std::vector<std::thread> threads;
  std::vector<int> statuses(kRequests, 0);
  for (int i = 0; i < kRequests; ++i) {
    threads.emplace_back([&, i] {
      httplib::Client client("127.0.0.1", server_.port());
      auto res = client.Post("/v1/chat/completions", kOpenAiBody, "application/json");
      statuses[i] = res ? res->status : -1;
    });
  }
  for (auto& t : threads) t.join();
  double elapsed = SecondsSince(start);
  for (int status : statuses) EXPECT_EQ(status, 200);
  EXPECT_LT(elapsed, 1.2);  // serially it would take 8 s; a connection refused by a short backlog would add 1 s
}

TEST(FakeLlmServerShutdownTest, HangIsCutShortByDestruction) {
  auto server = std::make_unique<FakeLlmServer>();
  server->Enqueue({.behavior = Behavior::kHang, .hang_seconds = 60});
  int status = 0;
  std::thread caller([&, port = server->port()] {
    httplib::Client client("127.0.0.1", port);
    client.set_read_timeout(30, 0);
    auto res = client.Post("/v1/chat/completions", kOpenAiBody, "application/json");
    status = res ? res->status : -1;
  });
  while (server->request_count() == 0) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  auto start = std::chrono::steady_clock::now();
  server.reset();
  double destruction = SecondsSince(start);
  caller.join();
  EXPECT_LT(destruction, 0.5);
  EXPECT_NE(status, 200);
}

TEST(FakeLlmServerShutdownTest, ClientGivingUpOnHangThenDestruction) {
  auto server = std::make_unique<FakeLlmServer>();
  server->Enqueue({.behavior = Behavior::kHang, .hang_seconds = 60});
  httplib::Client client("127.0.0.1", server->port());
  client.set_read_timeout(0, 200000);
  auto start = std::chrono::steady_clock::now();
  auto res = client.Post("/v1/chat/completions", kOpenAiBody, "application/json");
  EXPECT_FALSE(res);
  EXPECT_EQ(res.error(), httplib::Error::Read);
  EXPECT_LT(SecondsSince(start), 1.0);
  start = std::chrono::steady_clock::now();
  server.reset();
  EXPECT_LT(SecondsSince(start), 0.5);
}

TEST(FakeLlmServerShutdownTest, IdleKeepAliveClientDoesNotDelayDestruction) {
  auto server = std::make_unique<FakeLlmServer>();
  httplib::Client client("127.0.0.1", server->port());
  client.set_keep_alive(true);
  ASSERT_TRUE(client.Post("/v1/chat/completions", kOpenAiBody, "application/json"));
  ASSERT_TRUE(client.Post("/v1/messages", kAnthropicBody, "application/json"));
  auto start = std::chrono::steady_clock::now();
  server.reset();
  EXPECT_LT(SecondsSince(start), 0.5);
}

TEST(FakeLlmServerShutdownTest, ImmediateDestruction) {
  auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < 20; ++i) FakeLlmServer server;
  EXPECT_LT(SecondsSince(start), 2.0);
}

TEST_F(FakeLlmServerTest, QueueOrderThenDefaults) {
  server_.Enqueue({.behavior = Behavior::kServerError});
  server_.Enqueue({.text = "second"});
  EXPECT_EQ(server_.pending(), 2u);
  auto first = PostOpenAi();
  auto second = PostOpenAi();
  auto third = PostOpenAi();
  ASSERT_TRUE(first && second && third);
  EXPECT_EQ(first->status, 500);
  EXPECT_EQ(json::parse(second->body)["choices"][0]["message"]["content"], "second");
  json defaults = json::parse(third->body);
  EXPECT_EQ(defaults["choices"][0]["message"]["content"], "ok");
  EXPECT_EQ(defaults["usage"]["prompt_tokens"], 11);
  EXPECT_EQ(defaults["usage"]["completion_tokens"], 7);
  EXPECT_EQ(server_.pending(), 0u);
}

TEST_F(FakeLlmServerTest, ModelLists) {
  auto models = client_.Get("/v1/models");
  auto tags = client_.Get("/api/tags");
  ASSERT_TRUE(models);
  ASSERT_TRUE(tags);
  EXPECT_EQ(models->status, 200);
  json models_body = json::parse(models->body);
  EXPECT_EQ(models_body["object"], "list");
  ASSERT_EQ(models_body["data"].size(), 1u);
  EXPECT_EQ(models_body["data"][0]["id"], "fake-model");
  EXPECT_EQ(tags->status, 200);
  EXPECT_EQ(json::parse(tags->body)["models"][0]["name"], "fake-model");
}

TEST_F(FakeLlmServerTest, ModelListsConsumeScripts) {
  server_.Enqueue({.behavior = Behavior::kServerError});
  auto models = client_.Get("/v1/models");
  ASSERT_TRUE(models);
  EXPECT_EQ(models->status, 500);
}

TEST_F(FakeLlmServerTest, UnknownPathIs404AndConsumesNothing) {
  server_.Enqueue({.behavior = Behavior::kServerError});
  auto res = client_.Post("/v1/completions", "{}", "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 404);
  EXPECT_EQ(server_.pending(), 1u);
  EXPECT_EQ(server_.request_count(), 1);
}

TEST_F(FakeLlmServerTest, RecordsRequests) {
  server_.Enqueue({.behavior = Behavior::kRateLimit});
  httplib::Headers headers = {{"Authorization", "Bearer sk-test"}, {"X-Api-Key", "abc"}};
  ASSERT_TRUE(client_.Post("/v1/chat/completions", headers, kOpenAiBody, "application/json"));
  ASSERT_TRUE(client_.Get("/api/tags"));
  std::vector<ReceivedRequest> requests = server_.requests();
  ASSERT_EQ(requests.size(), 2u);
  EXPECT_EQ(server_.request_count(), 2);
  EXPECT_EQ(requests[0].method, "POST");
  EXPECT_EQ(requests[0].path, "/v1/chat/completions");
  EXPECT_EQ(requests[0].body, kOpenAiBody);
  EXPECT_EQ(requests[0].headers.at("authorization"), "Bearer sk-test");
  EXPECT_EQ(requests[0].headers.at("x-api-key"), "abc");
  EXPECT_EQ(requests[0].headers.at("content-type"), "application/json");
  EXPECT_EQ(requests[0].headers.count("Authorization"), 0u);
  EXPECT_EQ(requests[1].method, "GET");
  EXPECT_EQ(requests[1].path, "/api/tags");
  EXPECT_TRUE(requests[1].body.empty());
}

}  // namespace
}  // namespace accelopt::testing
