#include "suite/expr.h"

#include <gtest/gtest.h>

namespace accelopt::suite {
namespace {

double Eval(const std::string& text, const Bindings& bindings = {}) {
  auto expr = Expr::Parse(text);
  EXPECT_TRUE(expr.ok()) << expr.error().message;
  auto value = expr->Evaluate(bindings);
  EXPECT_TRUE(value.ok()) << value.error().message;
  return *value;
}

std::string ParseError(const std::string& text) {
  auto expr = Expr::Parse(text);
  EXPECT_FALSE(expr.ok()) << text;
  return expr.ok() ? "" : expr.error().message;
}

TEST(Expr, Precedence) {
  EXPECT_DOUBLE_EQ(Eval("1 + 2 * 3"), 7);
  EXPECT_DOUBLE_EQ(Eval("(1 + 2) * 3"), 9);
  EXPECT_DOUBLE_EQ(Eval("10 - 4 - 3"), 3);
  EXPECT_DOUBLE_EQ(Eval("16 / 4 / 2"), 2);
  EXPECT_DOUBLE_EQ(Eval("2 ^ 3 ^ 2"), 512);  // right-associative
  EXPECT_DOUBLE_EQ(Eval("-2 ^ 2"), -4);
  EXPECT_DOUBLE_EQ(Eval("2 * -3"), -6);
  EXPECT_DOUBLE_EQ(Eval("17 % 5"), 2);
}

TEST(Expr, NamesAndFunctions) {
  Bindings b = {{"M", 64}, {"N", 1536}, {"K", 1024}};
  EXPECT_DOUBLE_EQ(Eval("2*M*N*K", b), 2.0 * 64 * 1536 * 1024);
  EXPECT_DOUBLE_EQ(Eval("4*(M*K + K*N + M*N)", b), 4.0 * (64 * 1024 + 1024 * 1536 + 64 * 1536));
  EXPECT_DOUBLE_EQ(Eval("max(M, 100) + min(N, K)", b), 100 + 1024);
  EXPECT_DOUBLE_EQ(Eval("ceil(M / 10) + floor(2.5) + sqrt(16) + log2(K)", b), 7 + 2 + 4 + 10);
  EXPECT_DOUBLE_EQ(Eval("1.5e3 + .5"), 1500.5);
}

TEST(Expr, NamesListsVariablesOnly) {
  auto expr = Expr::Parse("max(M, K) * N + 2");
  ASSERT_TRUE(expr.ok());
  EXPECT_EQ(expr->Names(), (std::set<std::string>{"K", "M", "N"}));
}

TEST(Expr, ParseErrorsNamePosition) {
  EXPECT_NE(ParseError("2 * ").find("ended"), std::string::npos);
  EXPECT_NE(ParseError("(M + 1").find("expected ')'"), std::string::npos);
  EXPECT_NE(ParseError("M $ 2").find("character 3"), std::string::npos);
  EXPECT_NE(ParseError("foo(1)").find("unknown function 'foo'"), std::string::npos);
  EXPECT_NE(ParseError("max(1)").find("takes 2"), std::string::npos);
  EXPECT_NE(ParseError("").find("ended"), std::string::npos);
}

TEST(Expr, EvaluationErrors) {
  auto unbound = Expr::Parse("M * Q");
  ASSERT_TRUE(unbound.ok());
  auto value = unbound->Evaluate({{"M", 2}});
  ASSERT_FALSE(value.ok());
  EXPECT_NE(value.error().message.find("unknown name 'Q'"), std::string::npos);

  auto div = Expr::Parse("M / (N - N)");
  ASSERT_TRUE(div.ok());
  auto zero = div->Evaluate({{"M", 1}, {"N", 3}});
  ASSERT_FALSE(zero.ok());
  EXPECT_NE(zero.error().message.find("division by zero"), std::string::npos);
}

// Found by fuzz_expression: 2,000 nested parentheses overflowed the stack.
TEST(Expr, DeepOrLongInputIsAnErrorNotACrash) {
  std::string deep = "M+ (" + std::string(5000, '(') + "1" + std::string(5000, ')') + ")";
  auto nested = Expr::Parse(deep);
  ASSERT_FALSE(nested.ok());
  EXPECT_NE(nested.error().message.find("characters long"), std::string::npos) << nested.error().message;
  auto parens = Expr::Parse(std::string(1000, '(') + "1" + std::string(1000, ')'));
  ASSERT_FALSE(parens.ok());
  EXPECT_NE(parens.error().message.find("nested more than 100 levels deep"), std::string::npos)
      << parens.error().message;
  auto signs = Expr::Parse(std::string(3000, '-') + "M");
  ASSERT_FALSE(signs.ok());
  EXPECT_NE(signs.error().message.find("nested more than"), std::string::npos) << signs.error().message;
  auto fine = Expr::Parse(std::string(50, '(') + "M" + std::string(50, ')'));
  EXPECT_TRUE(fine.ok());
}

}  // namespace
}  // namespace accelopt::suite
