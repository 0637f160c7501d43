// Reading model answers: code blocks, plans and lessons.

#include "agents/parse.h"

#include <gtest/gtest.h>

namespace accelopt::agents {
namespace {

TEST(ExtractCode, TakesTheLastCppBlock) {
  auto code = ExtractCode("Plan:\n```text\nnotes\n```\n```cpp\nint a;\n```\nthen\n```c++\nint b;\n```\n");
  ASSERT_TRUE(code);
  EXPECT_EQ(*code, "int b;\n");
}

TEST(ExtractCode, TheTargetsTagsChooseTheBlock) {
  const std::string answer =
      "```cpp\nhost();\n```\n```cuda\n__global__ void k() {}\n```\n```text\nnotes, longer than the rest\n```\n";
  EXPECT_EQ(*ExtractCode(answer), "host();\n");
  EXPECT_EQ(*ExtractCode(answer, {"CUDA", "cu"}), "__global__ void k() {}\n");
}

// A kernel, then an example of its use (or the other way round): the block
// that defines the entry point is the kernel, whichever comes last.
const char* kKernelBlock =
    "```cpp\nextern \"C\" void kernel(const float* x, float* out) {\n  out[0] = 2 * x[0];\n}\n```\n";
const char* kUsageBlock =
    "```cpp\nextern \"C\" void kernel(const float* x, float* out);\nint main() {\n  float x[1] = {1}, out[1];\n"
    "  kernel(x, out);\n  return 0;\n}\n```\n";

TEST(ExtractKernel, TheBlockThatDefinesTheEntryPointInEitherOrder) {
  for (const std::string& answer : {std::string("The kernel:\n") + kKernelBlock + "Use it so:\n" + kUsageBlock,
                                    std::string("Usage first:\n") + kUsageBlock + "Then the kernel:\n" + kKernelBlock}) {
    auto code = ExtractKernel(answer, CppFenceTags(), "kernel");
    ASSERT_TRUE(code) << answer;
    EXPECT_NE(code->code.find("out[0] = 2 * x[0];"), std::string::npos) << code->code;
    EXPECT_NE(code->note.find("of 2 (the one that defines `kernel`)"), std::string::npos) << code->note;
    EXPECT_EQ(*ExtractCode(answer), code->code);
  }
}

TEST(ExtractKernel, ABlockThatIsNotCodeIsPassedOver) {
  // Untagged kernel, then a longer tagged shell session and its output: neither defines `kernel`.
  const std::string answer =
      "```\nvoid kernel(const float* x, float* out) { out[0] = x[0]; }\n```\n"
      "```bash\n$ g++ -O3 -shared kernel.cpp -o kernel.so && ./bench --all-the-options --repeat 1000\n```\n"
      "```text\nkernel: 0.25 ms per call, 3.2x faster than the baseline, measured over 1000 calls\n```\n";
  auto code = ExtractKernel(answer, CppFenceTags(), "kernel");
  ASSERT_TRUE(code);
  EXPECT_EQ(code->code, "void kernel(const float* x, float* out) { out[0] = x[0]; }\n");
  EXPECT_NE(code->note.find("block 1 of 3"), std::string::npos) << code->note;
  // A Python kernel beside a usage example.
  auto python = ExtractKernel("```python\nkernel(x, out)\nprint(out)\n```\n```python\n@jit\ndef kernel(x, out):\n"
                              "    out[:] = x\n```\n```python\nkernel(y, out)\n```\n",
                              {"python", "py"}, "kernel");
  ASSERT_TRUE(python);
  EXPECT_EQ(python->code, "@jit\ndef kernel(x, out):\n    out[:] = x\n");
  // One block: nothing to say.
  EXPECT_EQ(ExtractKernel(kKernelBlock, CppFenceTags(), "kernel")->note, "");
}

TEST(ExtractKernel, WithoutADefinitionTheLastTaggedBlockAndSaysSo) {
  auto code = ExtractKernel("```cpp\nint a;\n```\n```cpp\nint b;\n```\n", CppFenceTags(), "kernel");
  ASSERT_TRUE(code);
  EXPECT_EQ(code->code, "int b;\n");
  EXPECT_NE(code->note.find("none defines `kernel`: the last one tagged cpp"), std::string::npos) << code->note;
}

TEST(ExtractCode, AnUnfinishedBlockIsNoCode) { EXPECT_FALSE(ExtractCode("```cpp\nint a;\n")); }

TEST(ExtractCode, FenceFollowedByAClosingTagEndsTheBlock) {
  // Reasoning left inline: its block closes on the line that also closes the thinking.
  std::string answer =
      "<think>\nFirst try:\n```cpp\nint draft;\n```</think>\n\nThe kernel:\n```cpp\nint final_version;\n```\n";
  auto code = ExtractCode(answer);
  ASSERT_TRUE(code);
  EXPECT_EQ(*code, "int final_version;\n");
}

TEST(ExtractCode, FenceFollowedByPunctuationOpensNothing) {
  auto code = ExtractCode("Note the fence ```</think>\n```</think>\nprose\n```cpp\nint k;\n```\n");
  ASSERT_TRUE(code);
  EXPECT_EQ(*code, "int k;\n");
}

TEST(ExtractCode, TagWithAttributesIsATag) {
  auto code = ExtractCode("```cpp title=kernel.cpp\nint k;\n```\n```text\nlonger notes than the code\n```\n");
  ASSERT_TRUE(code);
  EXPECT_EQ(*code, "int k;\n");
}

TEST(ParsePlans, EachPlanLineStartsOne) {
  auto plans = ParsePlans(
      "Three distinct ideas.\n\n1. **PLAN:** Tile for L2\nUse 256x256 tiles.\n\n- PLAN: Vectorize the inner loop\n"
      "AVX-512 FMAs.\n### PLAN: Thread the rows\nOne row block per core.\n");
  ASSERT_EQ(plans.size(), 3u);
  EXPECT_EQ(plans[0].title, "Tile for L2");
  EXPECT_EQ(plans[0].details, "Use 256x256 tiles.");
  EXPECT_EQ(plans[1].title, "Vectorize the inner loop");
  EXPECT_EQ(plans[2].title, "Thread the rows");
  EXPECT_EQ(plans[2].details, "One row block per core.");
}

TEST(ParsePlans, WithoutPlanLinesTheAnswerIsOnePlanAndEmptyIsNone) {
  auto plans = ParsePlans("Unroll by four\nIt helps.");
  ASSERT_EQ(plans.size(), 1u);
  EXPECT_EQ(plans[0].title, "Unroll by four");
  EXPECT_TRUE(ParsePlans(" \n").empty());
  // The word inside a sentence opens nothing.
  EXPECT_EQ(ParsePlans("PLAN: A\nsee the PLAN: above\n").size(), 1u);
}

TEST(ParsePlan, TitleFromPlanLineWithoutEmphasis) {
  auto plan = ParsePlan("Some thoughts.\nPLAN: **Tile for L2**\nUse 256x256 tiles.");
  ASSERT_TRUE(plan);
  EXPECT_EQ(plan->title, "Tile for L2");
  EXPECT_EQ(plan->details, "Use 256x256 tiles.");
  EXPECT_FALSE(ParsePlan("  \n "));
}

TEST(ParseLesson, StrategyLineBecomesTagsAndLeavesTheText) {
  auto lesson = ParseLesson("**Block for L2**\nKeep tiles resident.\nSTRATEGY: Tiling, loop order\n");
  ASSERT_TRUE(lesson);
  EXPECT_EQ(lesson->text, "**Block for L2**\nKeep tiles resident.");
  EXPECT_EQ(lesson->tags.strategies, (std::vector<std::string>{"tiling", "loop order"}));
  auto untagged = ParseLesson("**Something**\nText.");
  ASSERT_TRUE(untagged);
  EXPECT_EQ(untagged->tags.strategies, std::vector<std::string>{"other"});
}

TEST(ParseLesson, NeedsABoldTitle) {
  auto lesson = ParseLesson("**Fuse the loops** because one pass reads memory once.");
  ASSERT_TRUE(lesson);
  EXPECT_EQ(lesson->title, "Fuse the loops");
  EXPECT_FALSE(ParseLesson("No optimization found."));
  EXPECT_FALSE(ParseLesson("plain text"));
}

}  // namespace
}  // namespace accelopt::agents

namespace accelopt::agents {
namespace {

TEST(CodeHash, CommentsAndSpaceFoldOnlyWhereTheyCannotMatter) {
  // C++: comments and blank space are folded...
  EXPECT_EQ(CodeHash("int  x; // one\n", "c++"), CodeHash("int x;\n/* two */", "C++"));
  // ...but not inside string and character literals.
  EXPECT_NE(CodeHash("auto u = \"a//b\";", "c++"), CodeHash("auto u = \"a//c\";", "c++"));
  EXPECT_NE(CodeHash("auto s = \"a  b\";", "c++"), CodeHash("auto s = \"a b\";", "c++"));
  EXPECT_NE(CodeHash("char c = ' ';", "c++"), CodeHash("char c = '  ';", "c++"));
  EXPECT_EQ(NormalizeCode("long n = 1'000; // x", "c++"), "long n = 1'000;");
  // Python: indentation is meaning, and '//' is division.
  EXPECT_NE(CodeHash("if a:\n    b()\nc()\n", "python"), CodeHash("if a:\n    b()\n    c()\n", "python"));
  EXPECT_NE(CodeHash("x = a // b\n", "python"), CodeHash("x = a // c\n", "python"));
  EXPECT_EQ(CodeHash("x = 1\r\n", "python"), CodeHash("x = 1\n", "python"));
}

}  // namespace
}  // namespace accelopt::agents
