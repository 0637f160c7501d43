#include <gtest/gtest.h>

#include <cctype>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "core/json_io.h"
#include "llm/chat_model.h"
#include "testing/temp_dir.h"

namespace accelopt::llm {
namespace {
namespace fs = std::filesystem;

const std::string kPromptSuffix = ".prompt.json";

ChatRequest Request() {
  return ChatRequest{.agent_role = "planner",
                     .messages = {{"system", "You plan kernels."}, {"user", "Make the matmul faster."}},
                     .temperature = 0.7,
                     .max_tokens = 2048,
                     .reasoning_effort = "high"};
}

// Waits (up to 5 s) for a prompt to appear in `dir` and returns its id ("" if none came).
std::string WaitForPromptId(const std::string& dir) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (std::chrono::steady_clock::now() < deadline) {
    std::error_code ec;
    for (const auto& file : fs::directory_iterator(dir, ec)) {
      std::string name = file.path().filename().string();
      if (name.size() > kPromptSuffix.size() && name.ends_with(kPromptSuffix))
        return name.substr(0, name.size() - kPromptSuffix.size());
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  return "";
}

class ExchangeChatModelTest : public ::testing::Test {
 protected:
  std::unique_ptr<ChatModel> Open(double timeout_seconds) {
    auto model = OpenExchangeChatModel(
        {.dir = dir(), .timeout_seconds = timeout_seconds, .poll_seconds = 0.01, .model = "person"});
    EXPECT_TRUE(model.ok()) << (model.ok() ? "" : model.error().message);
    return model.ok() ? std::move(*model) : nullptr;
  }

  // Answers the next prompt after a short delay by writing `name_suffix` with `contents`,
  // as a plain write (not a rename), to exercise the wait for a settled file.
  std::thread AnswerLater(const std::string& name_suffix, const std::string& contents) {
    return std::thread([this, name_suffix, contents] {
      std::string id = WaitForPromptId(dir());
      std::this_thread::sleep_for(std::chrono::milliseconds(30));
      std::ofstream out(dir() + "/" + id + name_suffix, std::ios::binary);
      out << contents;
    });
  }

  std::string dir() const { return temp_.path() + "/exchange"; }

  accelopt::testing::TempDir temp_;
};

TEST_F(ExchangeChatModelTest, FactoryCreatesFolderAndNamesBackend) {
  auto model = Open(1);
  ASSERT_TRUE(model);
  EXPECT_TRUE(fs::is_directory(dir()));
  EXPECT_EQ(model->backend(), "exchange");
  EXPECT_EQ(model->model(), "person");
}

// Whoever answers sees how many answers are awaited, and where (the progress
// line said "evaluating the baseline..." meanwhile).
TEST_F(ExchangeChatModelTest, SaysHowManyAnswersItWaitsFor) {
  auto model = Open(5);
  ASSERT_TRUE(model);
  std::thread answer = AnswerLater(".answer.txt", "PLAN: tile");
  ::testing::internal::CaptureStderr();
  ChatOutcome outcome = model->Complete(Request());
  const std::string said = ::testing::internal::GetCapturedStderr();
  answer.join();
  ASSERT_TRUE(outcome.ok());
  EXPECT_NE(said.find("[exchange] waiting for 1 answer in " + dir()), std::string::npos) << said;
}

TEST_F(ExchangeChatModelTest, FactoryFailsWhenFolderCannotBeMade) {
  ASSERT_TRUE(WriteFile(temp_.path() + "/plain-file", "x").ok());
  auto model = OpenExchangeChatModel({.dir = temp_.path() + "/plain-file/sub"});
  ASSERT_FALSE(model.ok());
  EXPECT_NE(model.error().message.find("plain-file/sub"), std::string::npos) << model.error().message;
}

TEST_F(ExchangeChatModelTest, JsonAnswerArrives) {
  auto model = Open(5);
  ASSERT_TRUE(model);
  std::thread answerer =
      AnswerLater(".answer.json", R"({"text": "tile by 128", "input_tokens": 321, "output_tokens": 12})");
  ChatOutcome outcome = model->Complete(Request());
  answerer.join();
  ASSERT_TRUE(outcome.ok()) << outcome.failure->message;
  EXPECT_EQ(outcome.response->text, "tile by 128");
  EXPECT_EQ(outcome.response->model, "person");
  EXPECT_EQ(outcome.response->usage.input_tokens, 321);
  EXPECT_EQ(outcome.response->usage.output_tokens, 12);
  EXPECT_FALSE(outcome.response->usage.estimated);
}

TEST_F(ExchangeChatModelTest, TextAnswerArrivesWithEstimatedUsage) {
  auto model = Open(5);
  ASSERT_TRUE(model);
  std::thread answerer = AnswerLater(".answer.txt", "use shared memory\nand unroll");
  ChatOutcome outcome = model->Complete(Request());
  answerer.join();
  ASSERT_TRUE(outcome.ok()) << outcome.failure->message;
  EXPECT_EQ(outcome.response->text, "use shared memory\nand unroll");
  EXPECT_TRUE(outcome.response->usage.estimated);
  EXPECT_EQ(outcome.response->usage.output_tokens, EstimateTokens("use shared memory\nand unroll"));
  EXPECT_EQ(outcome.response->usage.input_tokens, EstimateTokens("You plan kernels.\nMake the matmul faster."));
}

TEST_F(ExchangeChatModelTest, NoAnswerTimesOutNamingTheFiles) {
  auto model = Open(0.1);
  ASSERT_TRUE(model);
  auto start = std::chrono::steady_clock::now();
  ChatOutcome outcome = model->Complete(Request());
  double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_FALSE(outcome.ok());
  EXPECT_EQ(outcome.failure->kind, FailureKind::kTimeout);
  EXPECT_GE(waited, 0.1);
  EXPECT_LT(waited, 1.0);
  std::string id = WaitForPromptId(dir());
  ASSERT_FALSE(id.empty());
  const std::string& m = outcome.failure->message;
  EXPECT_NE(m.find(dir() + "/" + id + ".answer.json"), std::string::npos) << m;
  EXPECT_NE(m.find(dir() + "/" + id + ".answer.txt"), std::string::npos) << m;
}

TEST_F(ExchangeChatModelTest, MalformedJsonAnswerIsReported) {
  struct Case {
    std::string contents;
    std::string problem;
  };
  std::vector<Case> cases = {
      {"{\"text\": \"unterminated", "invalid JSON"},
      {"{\"answer\": \"x\"}", "missing 'text'"},
      {"{\"text\": 42}", "'text' must be a string"},
      {"{\"text\": \"x\", \"output_tokens\": \"many\"}", "'output_tokens' must be a non-negative integer"},
  };
  for (const Case& c : cases) {
    fs::remove_all(dir());
    auto model = Open(5);
    ASSERT_TRUE(model);
    std::thread answerer = AnswerLater(".answer.json", c.contents);
    ChatOutcome outcome = model->Complete(Request());
    answerer.join();
    ASSERT_FALSE(outcome.ok()) << c.contents;
    EXPECT_EQ(outcome.failure->kind, FailureKind::kMalformed);
    EXPECT_NE(outcome.failure->message.find(".answer.json"), std::string::npos) << outcome.failure->message;
    EXPECT_NE(outcome.failure->message.find(c.problem), std::string::npos) << outcome.failure->message;
  }
}

TEST_F(ExchangeChatModelTest, PromptFilesHoldTheRequest) {
  auto model = Open(0.05);
  ASSERT_TRUE(model);
  ChatOutcome outcome = model->Complete(Request());
  EXPECT_FALSE(outcome.ok());
  std::string id = WaitForPromptId(dir());
  ASSERT_FALSE(id.empty());
  EXPECT_NE(id.find("planner"), std::string::npos) << id;
  for (char c : id) EXPECT_TRUE(std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.') << id;

  auto prompt = ReadJsonFile(dir() + "/" + id + ".prompt.json");
  ASSERT_TRUE(prompt.ok()) << prompt.error().message;
  EXPECT_EQ((*prompt)["id"], id);
  EXPECT_EQ((*prompt)["agent_role"], "planner");
  EXPECT_DOUBLE_EQ((*prompt)["temperature"].get<double>(), 0.7);
  EXPECT_EQ((*prompt)["max_tokens"], 2048);
  EXPECT_EQ((*prompt)["reasoning_effort"], "high");
  ASSERT_EQ((*prompt)["messages"].size(), 2u);
  EXPECT_EQ((*prompt)["messages"][0]["role"], "system");
  EXPECT_EQ((*prompt)["messages"][1]["content"], "Make the matmul faster.");
  EXPECT_EQ((*prompt)["answer_files"]["json"], id + ".answer.json");
  EXPECT_EQ((*prompt)["answer_files"]["text"], id + ".answer.txt");

  auto md = ReadFile(dir() + "/" + id + ".prompt.md");
  ASSERT_TRUE(md.ok());
  EXPECT_NE(md->find("Make the matmul faster."), std::string::npos) << *md;
  EXPECT_NE(md->find("You plan kernels."), std::string::npos) << *md;
  EXPECT_NE(md->find("Put the answer in " + dir() + "/" + id + ".answer.txt"), std::string::npos) << *md;
}

TEST_F(ExchangeChatModelTest, EachRequestGetsItsOwnId) {
  auto model = Open(0.02);
  ASSERT_TRUE(model);
  ChatRequest odd = Request();
  odd.agent_role = "a/b c";
  model->Complete(odd);
  model->Complete(odd);
  int prompts = 0;
  for (const auto& file : fs::directory_iterator(dir())) {
    std::string name = file.path().filename().string();
    if (!name.ends_with(kPromptSuffix)) continue;
    ++prompts;
    EXPECT_NE(name.find("a_b_c"), std::string::npos) << name;
  }
  EXPECT_EQ(prompts, 2);
}

}  // namespace
}  // namespace accelopt::llm
