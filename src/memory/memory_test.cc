#include "memory/memory.h"

#include <gtest/gtest.h>

namespace accelopt::memory {
namespace {

MemoryLesson L(const std::string& title) { return MemoryLesson{0, "t", 1.5, title, "**" + title + "**"}; }

std::vector<std::string> Titles(const OptimizationMemory& m) {
  std::vector<std::string> out;
  for (const auto& l : m.lessons()) out.push_back(l.title);
  return out;
}

TEST(Memory, InitialIsCappedNewestFirst) {
  OptimizationMemory m(2, {L("a"), L("b"), L("c")});
  EXPECT_EQ(Titles(m), (std::vector<std::string>{"a", "b"}));
}

TEST(Memory, NewestFirstRefilledFromPreviousAndCapped) {
  OptimizationMemory m(4, {L("old1"), L("old2"), L("old3")});
  m.Update({L("new1"), L("new2")});
  EXPECT_EQ(Titles(m), (std::vector<std::string>{"new1", "new2", "old1", "old2"}));
  m.Update({L("a"), L("b"), L("c"), L("d"), L("e")});
  EXPECT_EQ(Titles(m), (std::vector<std::string>{"a", "b", "c", "d"}));
  m.Update({});
  EXPECT_EQ(Titles(m), (std::vector<std::string>{"a", "b", "c", "d"}));
}

TEST(Memory, RenderMarksNegativeLessons) {
  OptimizationMemory m(4, {MemoryLesson{0, "silu", 0.5, "slow", "**Do not**"}, L("fast")});
  std::string text = m.Render();
  EXPECT_NE(text.find("made a kernel slower: avoid"), std::string::npos);
  EXPECT_NE(text.find("**Do not**"), std::string::npos);
  EXPECT_EQ(OptimizationMemory(3, {}).Render(), "");
}

}  // namespace
}  // namespace accelopt::memory
