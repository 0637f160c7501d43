#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "core/json_io.h"
#include "llm/chat_model.h"
#include "testing/temp_dir.h"

namespace accelopt::llm {
namespace {

class ScriptedChatModelTest : public ::testing::Test {
 protected:
  // Writes `recording` and opens it; fails the test if the factory refuses it.
  std::unique_ptr<ChatModel> Open(const std::string& recording) {
    auto model = TryOpen(recording);
    EXPECT_TRUE(model.ok()) << (model.ok() ? "" : model.error().message);
    return model.ok() ? std::move(*model) : nullptr;
  }

  Result<std::unique_ptr<ChatModel>> TryOpen(const std::string& recording) {
    EXPECT_TRUE(WriteFile(path(), recording).ok());
    return OpenScriptedChatModel({.path = path(), .model = "replay-1"});
  }

  std::string path() const { return dir_.path() + "/recording.jsonl"; }

  accelopt::testing::TempDir dir_;
};

ChatRequest Request(const std::string& role, const std::string& user, const std::string& system = "You help.") {
  return ChatRequest{.agent_role = role, .messages = {{"system", system}, {"user", user}}};
}

std::string AnswerOf(ChatModel& model, const ChatRequest& request) {
  ChatOutcome outcome = model.Complete(request);
  if (!outcome.ok()) return "FAILED: " + outcome.failure->message;
  return outcome.response->text;
}

TEST_F(ScriptedChatModelTest, NamesBackendAndModel) {
  auto model = Open("# recorded\n");
  ASSERT_TRUE(model);
  EXPECT_EQ(model->backend(), "scripted");
  EXPECT_EQ(model->model(), "replay-1");
}

TEST_F(ScriptedChatModelTest, MatchesByRoleAndSubstring) {
  auto model = Open(
      R"({"role": "executor", "match": "tile", "response": "executor tile"}
{"role": "planner", "match": "shared memory", "response": "planner shared"}
{"role": "planner", "match": "tile", "response": "planner tile"}
)");
  ASSERT_TRUE(model);
  EXPECT_EQ(AnswerOf(*model, Request("planner", "try a bigger tile")), "planner tile");
  EXPECT_EQ(AnswerOf(*model, Request("planner", "use shared memory")), "planner shared");
  EXPECT_EQ(AnswerOf(*model, Request("executor", "the tile size")), "executor tile");
}

TEST_F(ScriptedChatModelTest, MatchSearchesEveryMessage) {
  auto model = Open(R"({"match": "SYSTEM-MARK", "response": "found in system"})");
  ASSERT_TRUE(model);
  EXPECT_EQ(AnswerOf(*model, Request("planner", "anything", "prefix SYSTEM-MARK suffix")), "found in system");
}

TEST_F(ScriptedChatModelTest, EntryWithoutRoleOrMatchTakesAnything) {
  auto model = Open(R"({"response": "generic"})");
  ASSERT_TRUE(model);
  EXPECT_EQ(AnswerOf(*model, Request("fixer", "whatever")), "generic");
}

TEST_F(ScriptedChatModelTest, EntriesAreUsedUpInFileOrder) {
  auto model = Open(
      R"({"role": "planner", "match": "plan", "response": "first"}
{"role": "planner", "match": "plan", "response": "second"}
)");
  ASSERT_TRUE(model);
  EXPECT_EQ(AnswerOf(*model, Request("planner", "plan it")), "first");
  EXPECT_EQ(AnswerOf(*model, Request("planner", "plan it")), "second");
  ChatOutcome third = model->Complete(Request("planner", "plan it"));
  ASSERT_FALSE(third.ok());
  EXPECT_EQ(third.failure->kind, FailureKind::kNoMatch);
  EXPECT_NE(third.failure->message.find("used up"), std::string::npos) << third.failure->message;
}

TEST_F(ScriptedChatModelTest, RepeatEntryIsNeverUsedUp) {
  auto model = Open(
      R"({"role": "ping", "response": "pong", "repeat": true}
{"role": "ping", "response": "never reached"}
)");
  ASSERT_TRUE(model);
  for (int i = 0; i < 5; ++i) EXPECT_EQ(AnswerOf(*model, Request("ping", "ping")), "pong");
}

TEST_F(ScriptedChatModelTest, TokenCountsGivenAreReported) {
  auto model = Open(R"({"response": "answer", "reasoning": "because", "input_tokens": 120, "output_tokens": 80})");
  ASSERT_TRUE(model);
  ChatOutcome outcome = model->Complete(Request("planner", "hello"));
  ASSERT_TRUE(outcome.ok());
  EXPECT_EQ(outcome.response->reasoning, "because");
  EXPECT_EQ(outcome.response->model, "replay-1");
  EXPECT_EQ(outcome.response->usage.input_tokens, 120);
  EXPECT_EQ(outcome.response->usage.output_tokens, 80);
  EXPECT_FALSE(outcome.response->usage.estimated);
}

TEST_F(ScriptedChatModelTest, TokenCountsAbsentAreEstimated) {
  auto model = Open(R"({"response": "twelve chars"})");
  ASSERT_TRUE(model);
  ChatRequest request = Request("planner", "0123456789abcdef", "sys");  // joined: "sys\n0123456789abcdef" = 20 chars
  ChatOutcome outcome = model->Complete(request);
  ASSERT_TRUE(outcome.ok());
  EXPECT_TRUE(outcome.response->usage.estimated);
  EXPECT_EQ(outcome.response->usage.input_tokens, 5);
  EXPECT_EQ(outcome.response->usage.output_tokens, 3);
}

TEST_F(ScriptedChatModelTest, OneTokenCountGivenStillMarksEstimated) {
  auto model = Open(R"({"response": "abcd", "input_tokens": 7})");
  ASSERT_TRUE(model);
  ChatOutcome outcome = model->Complete(Request("planner", "x"));
  ASSERT_TRUE(outcome.ok());
  EXPECT_EQ(outcome.response->usage.input_tokens, 7);
  EXPECT_EQ(outcome.response->usage.output_tokens, 1);
  EXPECT_TRUE(outcome.response->usage.estimated);
}

TEST_F(ScriptedChatModelTest, CommentsAndBlankLinesAreSkipped) {
  auto model = Open(
      "# This file is recorded: answers were captured from a real run, not produced live.\n"
      "\n"
      "   \n"
      "  # indented comment {not json\n"
      "{\"response\": \"only entry\"}\r\n");
  ASSERT_TRUE(model);
  EXPECT_EQ(AnswerOf(*model, Request("planner", "x")), "only entry");
}

TEST_F(ScriptedChatModelTest, NoMatchNamesRoleExcerptAndClosestEntries) {
  auto model = Open(
      R"(# recorded
{"role": "planner", "match": "vectorize the inner loop", "response": "a"}
{"role": "executor", "match": "vectorize the inner loop", "response": "b"}
{"role": "planner", "match": "unrelated words", "response": "c"}
{"role": "planner", "match": "use tensor cores", "response": "d"}
{"role": "planner", "match": "zzz", "response": "e"}
{"role": "planner", "match": "qqq", "response": "f"}
)");
  ASSERT_TRUE(model);
  ChatOutcome outcome = model->Complete(Request("planner", "Please vectorize the outer loop with tensor cores"));
  ASSERT_FALSE(outcome.ok());
  EXPECT_EQ(outcome.failure->kind, FailureKind::kNoMatch);
  const std::string& m = outcome.failure->message;
  EXPECT_NE(m.find("'planner'"), std::string::npos) << m;
  EXPECT_NE(m.find("vectorize the outer loop"), std::string::npos) << m;  // the prompt excerpt
  EXPECT_NE(m.find(path()), std::string::npos) << m;
  // The two most similar planner entries come first, at most three are listed, executor entries never.
  size_t line2 = m.find("line 2 ");
  size_t line5 = m.find("line 5 ");
  ASSERT_NE(line2, std::string::npos) << m;
  ASSERT_NE(line5, std::string::npos) << m;
  EXPECT_LT(line2, line5) << m;
  EXPECT_NE(m.find("use tensor cores"), std::string::npos) << m;
  EXPECT_EQ(m.find("line 3 "), std::string::npos) << m;
  int listed = 0;
  for (size_t at = m.find("(unused)"); at != std::string::npos; at = m.find("(unused)", at + 1)) ++listed;
  EXPECT_EQ(listed, 3) << m;
}

TEST_F(ScriptedChatModelTest, NoMatchListsUnusedEntriesBeforeUsedOnes) {
  auto model = Open(
      R"({"role": "planner", "match": "exact prompt", "response": "a"}
{"role": "planner", "match": "other", "response": "b"}
)");
  ASSERT_TRUE(model);
  EXPECT_EQ(AnswerOf(*model, Request("planner", "exact prompt")), "a");
  ChatOutcome outcome = model->Complete(Request("planner", "exact prompt"));
  ASSERT_FALSE(outcome.ok());
  const std::string& m = outcome.failure->message;
  size_t unused = m.find("line 2 (unused)");
  size_t used = m.find("line 1 (used up)");
  ASSERT_NE(unused, std::string::npos) << m;
  ASSERT_NE(used, std::string::npos) << m;
  EXPECT_LT(unused, used) << m;
}

TEST_F(ScriptedChatModelTest, NoEntryForRoleListsTheRolesThereAre) {
  auto model = Open(
      R"({"role": "planner", "response": "a"}
{"role": "executor", "response": "b"}
)");
  ASSERT_TRUE(model);
  ChatOutcome outcome = model->Complete(Request("summarizer", "sum it up"));
  ASSERT_FALSE(outcome.ok());
  EXPECT_EQ(outcome.failure->kind, FailureKind::kNoMatch);
  const std::string& m = outcome.failure->message;
  EXPECT_NE(m.find("no entry for role 'summarizer'"), std::string::npos) << m;
  EXPECT_NE(m.find("executor, planner"), std::string::npos) << m;
}

TEST_F(ScriptedChatModelTest, MalformedLinesNameFileLineAndProblem) {
  struct Case {
    std::string line;
    std::string problem;
  };
  std::vector<Case> cases = {
      {"{\"response\": \"a\"", "invalid JSON"},
      {"{\"match\": \"a\"}", "missing 'response'"},
      {"{\"response\": 3}", "'response' must be a string"},
      {"{\"response\": \"a\", \"role\": [\"planner\"]}", "'role' must be a string"},
      {"{\"response\": \"a\", \"input_tokens\": -1}", "'input_tokens' must be a non-negative integer"},
      {"{\"response\": \"a\", \"output_tokens\": 1.5}", "'output_tokens' must be a non-negative integer"},
      {"{\"response\": \"a\", \"repeat\": \"yes\"}", "'repeat' must be true or false"},
      {"{\"response\": \"a\", \"mach\": \"x\"}", "unknown key 'mach'"},
      {"[\"response\"]", "expected a JSON object"},
  };
  for (const Case& c : cases) {
    auto model = TryOpen("# recorded\n{\"response\": \"fine\"}\n\n" + c.line + "\n{\"response\": \"fine\"}\n");
    ASSERT_FALSE(model.ok()) << c.line;
    const std::string& m = model.error().message;
    EXPECT_NE(m.find(path() + ":4:"), std::string::npos) << m;
    EXPECT_NE(m.find(c.problem), std::string::npos) << m;
  }
}

TEST_F(ScriptedChatModelTest, MissingFileIsAnError) {
  auto model = OpenScriptedChatModel({.path = dir_.path() + "/absent.jsonl"});
  ASSERT_FALSE(model.ok());
  EXPECT_NE(model.error().message.find("absent.jsonl"), std::string::npos);
}

TEST_F(ScriptedChatModelTest, ConcurrentCallsUseEachEntryOnce) {
  std::string recording;
  for (int i = 0; i < 64; ++i) recording += "{\"response\": \"" + std::to_string(i) + "\"}\n";
  auto model = Open(recording);
  ASSERT_TRUE(model);
  std::vector<std::string> answers(64);
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < 8; ++i) answers[t * 8 + i] = AnswerOf(*model, Request("planner", "x"));
    });
  for (auto& thread : threads) thread.join();
  std::sort(answers.begin(), answers.end());
  EXPECT_EQ(std::unique(answers.begin(), answers.end()), answers.end());
  EXPECT_EQ(answers.front().rfind("FAILED", 0), std::string::npos);
}

TEST(ChatModel, EstimateTokens) {
  EXPECT_EQ(EstimateTokens(""), 0);
  EXPECT_EQ(EstimateTokens("a"), 1);
  EXPECT_EQ(EstimateTokens("abcd"), 1);
  EXPECT_EQ(EstimateTokens("abcde"), 2);
  EXPECT_EQ(EstimateTokens(std::string(400, 'x')), 100);
}

TEST(ChatModel, FailureKindNames) {
  EXPECT_STREQ(FailureKindName(FailureKind::kTimeout), "timeout");
  EXPECT_STREQ(FailureKindName(FailureKind::kConnection), "connection");
  EXPECT_STREQ(FailureKindName(FailureKind::kRateLimited), "rate_limited");
  EXPECT_STREQ(FailureKindName(FailureKind::kServerError), "server_error");
  EXPECT_STREQ(FailureKindName(FailureKind::kClientError), "client_error");
  EXPECT_STREQ(FailureKindName(FailureKind::kMalformed), "malformed");
  EXPECT_STREQ(FailureKindName(FailureKind::kNoMatch), "no_match");
  EXPECT_STREQ(FailureKindName(FailureKind::kBudget), "budget");
}

}  // namespace
}  // namespace accelopt::llm

namespace accelopt::llm {
namespace {

TEST(ScriptedMatchList, EveryListedSubstringMustOccur) {
  testing::TempDir dir;
  std::string path = dir.path() + "/r.jsonl";
  std::ofstream(path) << R"({"role": "planner", "match": ["Task: silu", "proposal 2 of 2"], "response": "second"})"
                         "\n"
                      << R"({"role": "planner", "match": ["Task: silu", "proposal 1 of 2"], "response": "first"})"
                         "\n";
  auto model = OpenScriptedChatModel({path});
  ASSERT_TRUE(model.ok()) << model.error().message;
  ChatRequest request;
  request.agent_role = "planner";
  request.messages = {{"user", "Task: silu\nThis is proposal 1 of 2."}};
  auto outcome = (*model)->Complete(request);
  ASSERT_TRUE(outcome.ok());
  EXPECT_EQ(outcome.response->text, "first");
  request.messages = {{"user", "Task: silu\nThis is proposal 2 of 2."}};
  EXPECT_EQ((*model)->Complete(request).response->text, "second");
  EXPECT_FALSE((*model)->Complete(request).ok());
}

}  // namespace
}  // namespace accelopt::llm
