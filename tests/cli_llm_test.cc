// `accelopt llm ping` as a user runs it, against the loopback test server.

#include <gtest/gtest.h>
#include <stdio.h>
#include <stdlib.h>

#include <string>

#include "core/json_io.h"
#include "testing/fake_llm_server.h"
#include "testing/run_command.h"
#include "testing/temp_dir.h"

namespace accelopt {
namespace {

using testing::Accelopt;
using testing::CommandRun;

TEST(CliLlmPing, ReportsModelLatencyTokensAndCost) {
  testing::FakeLlmServer server;
  server.Enqueue({.behavior = testing::Behavior::kServerError});
  server.Enqueue({.text = "pong", .input_tokens = 20, .output_tokens = 3});
  setenv("ACCELOPT_CLI_TEST_KEY", "sk-cli-test-PRIVATE", 1);
  CommandRun run = Accelopt("llm ping --role planner --json --base-url " + server.base_url() +
                            " --model gpt-4o --api-key-env ACCELOPT_CLI_TEST_KEY");
  ASSERT_EQ(run.exit_code, 0) << run.out;
  Json record = Json::parse(run.out);
  EXPECT_EQ(record["model"], "gpt-4o");
  EXPECT_EQ(record["response"], "pong");
  EXPECT_EQ(record["usage"]["input_tokens"], 20);
  EXPECT_NEAR(record["cost_usd"].get<double>(), (20 * 2.5 + 3 * 10.0) / 1e6, 1e-12);
  EXPECT_EQ(record["attempts"].size(), 2u);
  EXPECT_GT(record["latency_seconds"].get<double>(), 0);
  EXPECT_EQ(run.out.find("PRIVATE"), std::string::npos);
}

TEST(CliLlmPing, InlineThinkingIsReportedAsReasoning) {
  testing::FakeLlmServer server;
  server.Enqueue({.text = "<think>\nThe user wants one word.\n</think>\n\npong"});
  CommandRun run = Accelopt("llm ping --json --base-url " + server.base_url() + " --model qwen3-local");
  ASSERT_EQ(run.exit_code, 0) << run.out;
  Json record = Json::parse(run.out);
  EXPECT_EQ(record["response"], "pong");
  EXPECT_EQ(record["reasoning"], "The user wants one word.");
  EXPECT_GT(record["usage"]["reasoning_tokens"].get<long>(), 0);
  EXPECT_EQ(record["usage"]["reasoning_estimated"], true);
}

TEST(CliLlmPing, UnknownPriceIsSaidToBeUnknown) {
  testing::FakeLlmServer server;
  CommandRun run = Accelopt("llm ping --base-url " + server.base_url() + " --model qwen3-coder-local");
  ASSERT_EQ(run.exit_code, 0) << run.out;
  EXPECT_NE(run.out.find("cost         unknown (model 'qwen3-coder-local' is not in the price table)"),
            std::string::npos)
      << run.out;
  EXPECT_NE(run.out.find("tokens       11 in, 7 out"), std::string::npos) << run.out;
}

TEST(CliLlmPing, WithoutAModelSaysHowToConfigureOne) {
  testing::TempDir dir;  // no accelopt.yaml here
  CommandRun run = Accelopt("llm ping --config " + dir.path() + "/missing.yaml");
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_NE(run.out.find("cannot read the configuration file"), std::string::npos) << run.out;
  CommandRun bare = Accelopt("llm ping --model x");
  EXPECT_EQ(bare.exit_code, 1);
  EXPECT_NE(bare.out.find("No language model is configured"), std::string::npos) << bare.out;
}

}  // namespace
}  // namespace accelopt
