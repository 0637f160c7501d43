#include "llm/pricing.h"

#include <gtest/gtest.h>

#include <fstream>

#include "testing/temp_dir.h"

namespace accelopt::llm {
namespace {

TEST(PriceTable, ExactNamesBeforePatterns) {
  PriceTable t;
  t.Set("claude-*", {3, 15});
  t.Set("claude-opus-4", {15, 75});
  EXPECT_DOUBLE_EQ(t.Find("claude-opus-4")->input_per_million, 15);
  EXPECT_DOUBLE_EQ(t.Find("claude-sonnet-4-5")->input_per_million, 3);
  EXPECT_FALSE(t.Find("gpt-oss-120b").has_value());
}

TEST(PriceTable, CostIsUnknownNotZeroForUnlistedModels) {
  PriceTable t;
  t.Set("gpt-4o", {2.5, 10});
  Usage u{1000, 500, 100, false};
  ASSERT_TRUE(t.Cost("gpt-4o", u).has_value());
  EXPECT_DOUBLE_EQ(*t.Cost("gpt-4o", u), (1000 * 2.5 + 500 * 10) / 1e6);
  EXPECT_FALSE(t.Cost("qwen3-coder", u).has_value());
}

TEST(PriceTable, LoadsTheShippedTable) {
  auto t = PriceTable::Load(std::string(ACCELOPT_SOURCE_DIR) + "/prices/prices.yaml");
  ASSERT_TRUE(t.ok()) << t.error().message;
  EXPECT_TRUE(t->Find("gpt-4o").has_value());
  EXPECT_TRUE(t->Find("claude-sonnet-4-20250514").has_value());
}

TEST(PriceTable, LoadErrorsNameTheModelAndField) {
  testing::TempDir dir;
  std::string path = dir.path() + "/prices.yaml";
  std::ofstream(path) << "models:\n  m1: {input: 1}\n";
  auto missing = PriceTable::Load(path);
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().message.find("model 'm1' (line 2): missing 'output'"), std::string::npos)
      << missing.error().message;
  std::ofstream(path) << "models:\n  m1: {input: cheap, output: 1}\n";
  auto typed = PriceTable::Load(path);
  ASSERT_FALSE(typed.ok());
  EXPECT_NE(typed.error().message.find("'input' must be a number"), std::string::npos) << typed.error().message;
}

// A price that is NaN, infinite or negative made every cost meaningless (and a
// money budget with it): an error naming the model, the key and its line.
TEST(PriceTable, ImpossiblePricesAndUnknownKeysAreErrors) {
  testing::TempDir dir;
  std::string path = dir.path() + "/prices.yaml";
  for (const char* value : {".nan", ".inf", "-0.5"}) {
    std::ofstream(path) << "models:\n  m1: {input: 1, output: 1}\n  m2:\n    input: " << value << "\n    output: 1\n";
    auto table = PriceTable::Load(path);
    ASSERT_FALSE(table.ok()) << value;
    EXPECT_NE(table.error().message.find("model 'm2' (line 4): 'input' must be a finite number"), std::string::npos)
        << table.error().message;
  }
  std::ofstream(path) << "models:\n  m1: {input: 1, ouput: 1}\n";
  auto misspelt = PriceTable::Load(path);
  ASSERT_FALSE(misspelt.ok());
  EXPECT_NE(misspelt.error().message.find("model 'm1' (line 2): unknown key 'ouput'"), std::string::npos)
      << misspelt.error().message;
}

}  // namespace
}  // namespace accelopt::llm
