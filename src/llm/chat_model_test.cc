// Reasoning written inline in an answer is split off.

#include "llm/chat_model.h"

#include <gtest/gtest.h>

namespace accelopt::llm {
namespace {

ChatResponse Answer(std::string text, long output_tokens = 100) {
  ChatResponse r;
  r.text = std::move(text);
  r.usage.output_tokens = output_tokens;
  return r;
}

TEST(SplitInlineReasoning, LeadingThinkBlockBecomesReasoning) {
  ChatResponse r = Answer("\n<think>\nWhich loop is hot?\n</think>\n\nPLAN: vectorize the inner loop");
  EXPECT_TRUE(SplitInlineReasoning(r));
  EXPECT_EQ(r.text, "PLAN: vectorize the inner loop");
  EXPECT_EQ(r.reasoning, "Which loop is hot?");
  EXPECT_EQ(r.usage.reasoning_tokens, EstimateTokens("Which loop is hot?"));
  EXPECT_TRUE(r.usage.reasoning_estimated);
  EXPECT_EQ(r.usage.output_tokens, 100);
}

TEST(SplitInlineReasoning, ThinkingTagAndCountsFromTheServerAreKept) {
  ChatResponse r = Answer("<thinking>hmm</thinking>answer");
  r.usage.reasoning_tokens = 7;
  EXPECT_TRUE(SplitInlineReasoning(r));
  EXPECT_EQ(r.text, "answer");
  EXPECT_EQ(r.reasoning, "hmm");
  EXPECT_EQ(r.usage.reasoning_tokens, 7);
  EXPECT_FALSE(r.usage.reasoning_estimated);
}

TEST(SplitInlineReasoning, LoneClosingTagEndsReasoningTheTemplateOpened) {
  ChatResponse r = Answer("The loop carries a dependency.\n</think>\n**Lesson** text");
  EXPECT_TRUE(SplitInlineReasoning(r));
  EXPECT_EQ(r.text, "**Lesson** text");
  EXPECT_EQ(r.reasoning, "The loop carries a dependency.");
}

TEST(SplitInlineReasoning, UnclosedBlockIsAllReasoning) {
  ChatResponse r = Answer("<think>still thinking when the tokens ran o");
  EXPECT_TRUE(SplitInlineReasoning(r));
  EXPECT_EQ(r.text, "");
  EXPECT_EQ(r.reasoning, "still thinking when the tokens ran o");
}

TEST(SplitInlineReasoning, ReasoningFromTheServerComesFirst) {
  ChatResponse r = Answer("<think>b</think>c");
  r.reasoning = "a";
  SplitInlineReasoning(r);
  EXPECT_EQ(r.reasoning, "a\nb");
  EXPECT_EQ(r.text, "c");
}

TEST(SplitInlineReasoning, AnswerWithoutThinkingIsUntouched) {
  ChatResponse r = Answer("The tag <think> is mentioned mid-answer, not leading.");
  EXPECT_FALSE(SplitInlineReasoning(r));
  EXPECT_EQ(r.text, "The tag <think> is mentioned mid-answer, not leading.");
  EXPECT_EQ(r.reasoning, "");
}

}  // namespace
}  // namespace accelopt::llm
