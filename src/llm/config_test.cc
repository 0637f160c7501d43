#include "llm/config.h"

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>

#include "testing/temp_dir.h"

namespace accelopt::llm {
namespace {

class ConfigFile : public ::testing::Test {
 protected:
  Result<LlmConfig> Load(const std::string& yaml) {
    std::string path = dir_.path() + "/accelopt.yaml";
    std::ofstream(path) << yaml;
    return LoadLlmConfig(path);
  }
  testing::TempDir dir_;
};

TEST_F(ConfigFile, ReadsBackendsRolesRetryBudget) {
  auto c = Load(R"(llm:
  backends:
    local: {kind: openai, base_url: "http://127.0.0.1:8000/v1", model: gpt-oss-120b, max_concurrency: 8,
            extra_body: {chat_template_kwargs: {enable_thinking: true}, top_k: 20}}
    claude: {kind: anthropic, base_url: "https://api.anthropic.com/v1", model: claude-sonnet-4, api_key_env: ANTHROPIC_API_KEY}
  roles:
    planner: {backend: claude, max_tokens: 8000, thinking_budget_tokens: 4000}
    executor: {backend: local, temperature: 0.7, reasoning_effort: high}
  retry: {max_attempts: 3, base_delay_seconds: 0.5}
  budget: {usd: 2.5, tokens: 100000}
)");
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_EQ(c->backends.at("local").max_concurrency, 8);
  EXPECT_EQ(c->backends.at("local").http.extra_body_json,
            R"({"chat_template_kwargs":{"enable_thinking":true},"top_k":20})");
  EXPECT_EQ(c->backends.at("claude").http.api_key_env, "ANTHROPIC_API_KEY");
  EXPECT_EQ(c->roles.at("planner").thinking_budget_tokens, 4000);
  EXPECT_EQ(*c->roles.at("executor").temperature, 0.7);
  EXPECT_EQ(c->roles.at("executor").reasoning_effort, "high");
  EXPECT_EQ(c->retry.max_attempts, 3);
  EXPECT_DOUBLE_EQ(*c->budget.usd, 2.5);
  EXPECT_EQ(*c->budget.tokens, 100000);
  EXPECT_FALSE(c->budget.wall_seconds.has_value());
}

TEST_F(ConfigFile, OneBackendServesEveryRole) {
  auto c = Load("llm:\n  backends:\n    only: {kind: openai, base_url: 'http://127.0.0.1:1/v1', model: m}\n");
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_EQ(c->roles.at("default").backend, "only");
}

TEST_F(ConfigFile, NoLlmSectionIsAnEmptyConfig) {
  auto c = Load("# nothing configured yet\n");
  ASSERT_TRUE(c.ok());
  EXPECT_FALSE(c->configured());
}

// A misspelt `budjet:` was ignored (the run then had no budget at all), and
// impossible numbers were taken: each is an error naming the key and its line.
TEST_F(ConfigFile, UnknownKeysAndImpossibleValuesAreErrorsNamingKeyAndLine) {
  const std::string backends = "llm:\n  backends:\n    x: {kind: openai, model: m}\n";
  auto error = [&](const std::string& yaml) {
    auto c = Load(yaml);
    EXPECT_FALSE(c.ok()) << "accepted:\n" << yaml;
    return c.ok() ? std::string() : c.error().message;
  };
  std::string e = error(backends + "  budjet: {usd: 0.40}\n");
  EXPECT_NE(e.find("accelopt.yaml: field 'llm.budjet' (line 4): unknown key (known: backends, roles, retry, budget, "
                   "prices)"),
            std::string::npos)
      << e;
  e = error(backends + "  budget: {dollars: 1}\n");
  EXPECT_NE(e.find("field 'llm.budget.dollars' (line 4): unknown key"), std::string::npos) << e;
  e = error("lm:\n  backends: {}\n");
  EXPECT_NE(e.find("field 'lm' (line 1): unknown key (known: llm)"), std::string::npos) << e;
  e = error("llm:\n  backends:\n    x: {kind: openai, modle: m}\n");
  EXPECT_NE(e.find("field 'llm.backends.x.modle' (line 3)"), std::string::npos) << e;
  e = error(backends + "  roles:\n    planner: {backend: x, temprature: 0}\n");
  EXPECT_NE(e.find("field 'llm.roles.planner.temprature' (line 5)"), std::string::npos) << e;
  for (const char* usd : {".nan", "-1", ".inf", "-.inf", "cheap", "[1]"}) {
    e = error(backends + "  budget:\n    usd: " + usd + "\n");
    EXPECT_NE(e.find("field 'llm.budget.usd' (line 5)"), std::string::npos) << usd << ": " << e;
  }
  e = error(backends + "  budget: {tokens: 0}\n");
  EXPECT_NE(e.find("field 'llm.budget.tokens' (line 4): must be above 0"), std::string::npos) << e;
  e = error(backends + "  budget: {tokens: 1.5}\n");
  EXPECT_NE(e.find("llm.budget.tokens"), std::string::npos) << e;
  e = error(backends + "  roles:\n    planner: {backend: x, temperature: -0.5}\n");
  EXPECT_NE(e.find("llm.roles.planner.temperature"), std::string::npos) << e;
  e = error(backends + "  retry: {max_attempts: 0}\n");
  EXPECT_NE(e.find("llm.retry.max_attempts"), std::string::npos) << e;
  auto fine = Load(backends + "  budget: {usd: 0, tokens: 1000, wall_seconds: 60}\n");
  ASSERT_TRUE(fine.ok()) << fine.error().message;
  EXPECT_EQ(*fine->budget.usd, 0);
}

// Found by fuzz_stored_json: a file whose top level is not a mapping aborted
// the engine (an uncaught YAML::BadSubscript).
TEST_F(ConfigFile, ATopLevelThatIsNotAMappingIsAnError) {
  for (const char* yaml : {"hello\n", "- a\n- b\n", "llm: 3\n", "llm: [a, b]\n", "llm:\n  backends: 3\n",
                           "llm:\n  backends: [x]\n", "llm:\n  roles: {planner: 3}\n"}) {
    Result<LlmConfig> c = Error{"not run"};
    ASSERT_NO_THROW(c = Load(yaml)) << yaml;
    EXPECT_FALSE(c.ok()) << yaml;
    if (!c.ok()) {
      EXPECT_NE(c.error().message.find("accelopt.yaml"), std::string::npos) << c.error().message;
    }
  }
  auto empty = Load("");
  ASSERT_TRUE(empty.ok()) << empty.error().message;
  EXPECT_FALSE(empty->configured());
}

TEST_F(ConfigFile, ErrorsNameTheField) {
  auto kind = Load("llm:\n  backends:\n    x: {kind: grpc}\n");
  ASSERT_FALSE(kind.ok());
  EXPECT_NE(kind.error().message.find("llm.backends.x.kind"), std::string::npos) << kind.error().message;
  auto role = Load("llm:\n  backends:\n    x: {kind: openai}\n  roles:\n    planner: {backend: y}\n");
  ASSERT_FALSE(role.ok());
  EXPECT_NE(role.error().message.find("names backend 'y'"), std::string::npos) << role.error().message;
  auto number = Load("llm:\n  backends:\n    x: {kind: openai, max_concurrency: many}\n");
  ASSERT_FALSE(number.ok());
  EXPECT_NE(number.error().message.find("llm.backends.x.max_concurrency"), std::string::npos) << number.error().message;
}

TEST(ModelOverride, CommandLineServerServesEveryRole) {
  LlmConfig c;
  c.backends["file"] = BackendConfig{"openai"};
  c.roles["planner"] = RoleSettings{"file"};
  ModelOverride o;
  o.base_url = "http://127.0.0.1:9/v1";
  o.model = "m";
  ASSERT_TRUE(ApplyOverride(o, c).ok());
  EXPECT_EQ(c.roles.at("planner").backend, "command-line");
  EXPECT_EQ(c.roles.at("default").backend, "command-line");
  EXPECT_EQ(c.backends.at("command-line").http.model, "m");

  ModelOverride missing_model;
  missing_model.base_url = "http://127.0.0.1:9/v1";
  EXPECT_FALSE(ApplyOverride(missing_model, c).ok());
}

}  // namespace
}  // namespace accelopt::llm

namespace accelopt::llm {
namespace {

// --budget replaces the file's money budget; an impossible one is refused by name.
TEST(ModelOverride, BudgetReplacesTheFilesAndMustBeFinite) {
  LlmConfig c;
  c.budget.usd = 10;
  ModelOverride o;
  o.budget_usd = 0.4;
  ASSERT_TRUE(ApplyOverride(o, c).ok());
  EXPECT_EQ(*c.budget.usd, 0.4);
  for (double bad : {-1.0, std::nan(""), HUGE_VAL}) {
    o.budget_usd = bad;
    auto s = ApplyOverride(o, c);
    ASSERT_FALSE(s.ok()) << bad;
    EXPECT_NE(s.error().message.find("--budget"), std::string::npos) << s.error().message;
  }
}

TEST(ModelOverride, SamplingAppliesToEveryRole) {
  LlmConfig c;
  c.backends["file"] = BackendConfig{"openai"};
  c.roles["planner"] = RoleSettings{"file", 1.0, 100};
  c.roles["executor"] = RoleSettings{"file"};
  ModelOverride o;
  o.temperature = 0.2;
  o.reasoning_effort = "low";
  ASSERT_TRUE(ApplyOverride(o, c).ok());
  EXPECT_EQ(*c.roles.at("planner").temperature, 0.2);
  EXPECT_EQ(*c.roles.at("planner").max_tokens, 100);  // kept
  EXPECT_EQ(c.roles.at("executor").reasoning_effort, "low");
  EXPECT_EQ(c.roles.at("executor").backend, "file");  // no new backend
}

}  // namespace
}  // namespace accelopt::llm
