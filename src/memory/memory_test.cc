#include "memory/memory.h"

#include <gtest/gtest.h>

#include <cmath>

namespace accelopt::memory {
namespace {

// The target the lessons and queries are for, and another one.
const std::string kTarget = "host";
const std::string kOtherTarget = "gpu";

Lesson L(const std::string& title, const std::string& family, const std::string& bound, double low, double high) {
  Lesson l;
  l.tags = {"t-" + title, family, bound, kTarget, "c++", {"tiling"}};
  l.speedup = (low + high) / 2;
  l.low = low;
  l.high = high;
  l.title = title;
  l.text = "**" + title + "**\nSome text about " + title + ".";
  return l;
}

std::vector<std::string> Titles(const std::vector<RankedLesson>& lessons) {
  std::vector<std::string> out;
  for (const auto& r : lessons) out.push_back(r.lesson.title);
  return out;
}

LessonQuery For(const std::string& family, const std::string& bound) {
  return {{"t", family, bound, kTarget, "c++", {}}, {}, ""};
}

TEST(SelectLessons, SameBoundAndFamilyFirstThenTheLargestVerifiedEffect) {
  std::vector<Lesson> lessons = {
      L("newest-other", "matmul", "mm", 1.05, 1.10),      // neither matches
      L("family-small", "elementwise", "mm", 1.10, 1.2),  // family only
      L("both-small", "elementwise", "memory", 1.05, 1.1),   L("both-large", "elementwise", "memory", 2.0, 2.2),
      L("both-negative", "elementwise", "memory", 0.3, 0.4),  // |log 0.4| = 0.92 > log 2.0 = 0.69
      L("bound-huge", "attention", "memory", 5.0, 6.0),
  };
  auto chosen = SelectLessons(lessons, For("elementwise", "memory"), {});
  EXPECT_EQ(Titles(chosen), (std::vector<std::string>{"both-negative", "both-large", "both-small", "bound-huge",
                                                      "family-small", "newest-other"}));
  EXPECT_EQ(chosen[0].relevance, 2);
  EXPECT_EQ(chosen[3].relevance, 1);
  EXPECT_EQ(chosen[5].relevance, 0);
}

TEST(SelectLessons, AnIntervalReachingOneProvesNothingAndOtherTargetsAreLeftOut) {
  Lesson other = L("other", "elementwise", "memory", 3, 4);
  other.tags.target = kOtherTarget;
  std::vector<Lesson> lessons = {L("unproven", "elementwise", "memory", 0.9, 3.0),
                                 L("proven", "elementwise", "memory", 1.2, 1.3), other};
  EXPECT_EQ(Titles(SelectLessons(lessons, For("elementwise", "memory"), {})),
            (std::vector<std::string>{"proven", "unproven"}));
}

TEST(SelectLessons, TheKernelsMachineClassFirstAndThePlannerSeesWhereOthersCameFrom) {
  Lesson mine = L("mine", "matmul", "mm", 1.1, 1.2);  // least relevant, smallest effect
  mine.tags.machine = "epyc-avx2";
  Lesson theirs = L("theirs", "elementwise", "memory", 3.0, 4.0);  // most relevant, largest effect
  theirs.tags.machine = "xeon-avx512";
  Lesson unknown = L("unknown", "elementwise", "memory", 2.0, 2.5);  // recorded before machines were kept
  LessonQuery query = For("elementwise", "memory");
  query.kernel.machine = "epyc-avx2";
  auto chosen = SelectLessons({theirs, unknown, mine}, query, {});
  EXPECT_EQ(Titles(chosen), (std::vector<std::string>{"mine", "unknown", "theirs"}));
  EXPECT_EQ(chosen[0].home, 2);
  EXPECT_EQ(chosen[1].home, 1);
  EXPECT_EQ(chosen[2].home, 0);
  const std::string block = RenderLessons(chosen, "epyc-avx2");
  EXPECT_EQ(block.find("verified on another machine: epyc-avx2"), std::string::npos) << block;
  EXPECT_NE(block.find("Lesson 3 (from t-theirs, elementwise, memory-bound; tiling; verified on another machine: "
                       "xeon-avx512;"),
            std::string::npos)
      << block;
  // A kernel whose class is not known ranks every lesson alike.
  EXPECT_EQ(Titles(SelectLessons({theirs, unknown, mine}, For("elementwise", "memory"), {})),
            (std::vector<std::string>{"theirs", "unknown", "mine"}));
}

TEST(CheckImportedLesson, RefusesWhatNoMeasurementGivesAndNamesTheField) {
  Lesson good = L("good", "matmul", "mm", 1.5, 1.7);
  EXPECT_TRUE(CheckImportedLesson(good).ok());
  auto refused = [&](auto change, const std::string& says) {
    Lesson l = good;
    change(l);
    Status s = CheckImportedLesson(l);
    ASSERT_FALSE(s.ok()) << says;
    EXPECT_NE(s.error().message.find(says), std::string::npos) << s.error().message;
  };
  refused([](Lesson& l) { l.speedup = l.low = l.high = 1e300; }, "speedup 1e+300 is not a speedup");
  refused([](Lesson& l) { l.speedup = -5; }, "speedup -5 is not a speedup");
  refused([](Lesson& l) { l.speedup = std::nan(""); }, "speedup nan");
  refused([](Lesson& l) { l.speedup = 2.5; }, "outside its interval [1.5, 1.7]");
  refused([](Lesson& l) { l.high = 1e9; }, "speedup_high 1e+09");
  refused([](Lesson& l) { l.coverage = 7; }, "speedup_coverage 7 is not a probability");
  refused([](Lesson& l) { l.title.clear(); }, "no title");
  refused([](Lesson& l) { l.text = std::string(70000, 'x'); }, "text of 70000 bytes");
}

TEST(SelectLessons, TheBlockStaysWithinItsSizeAndCount) {
  std::vector<Lesson> lessons;
  for (int i = 0; i < 40; ++i) {
    Lesson l = L("lesson" + std::to_string(i), "elementwise", "memory", 1.1 + i * 0.01, 1.2 + i * 0.01);
    l.text += std::string(800, 'x');
    lessons.push_back(l);
  }
  auto chosen = SelectLessons(lessons, For("elementwise", "memory"), {});
  EXPECT_LE(RenderLessons(chosen).size(), 12u * 1024);
  EXPECT_GE(RenderLessons(chosen).size(), 10u * 1024);
  EXPECT_EQ(chosen.front().lesson.title, "lesson39");  // the largest effect first
  EXPECT_EQ(SelectLessons(lessons, For("elementwise", "memory"), {3, 1 << 20}).size(), 3u);
}

TEST(SelectLessons, RequiredTagsAndWordsFilter) {
  Lesson threaded = L("threads", "matmul", "mm", 1.5, 1.6);
  threaded.tags.strategies = {"threading", "tiling"};
  std::vector<Lesson> lessons = {threaded, L("tiles", "matmul", "mm", 1.5, 1.6)};
  LessonQuery q = For("", "");
  q.required = {{"strategy", "threading"}};
  EXPECT_EQ(Titles(SelectLessons(lessons, q, {})), std::vector<std::string>{"threads"});
  q.required = {{"family", "matmul"}};
  q.text = "ABOUT TILES";
  EXPECT_EQ(Titles(SelectLessons(lessons, q, {})), std::vector<std::string>{"tiles"});
}

TEST(Memory, NewLessonsComeFirstAndRenderSaysWhatTheyDid) {
  OptimizationMemory m({L("old", "elementwise", "memory", 1.1, 1.2)});
  Lesson slower = L("slower", "elementwise", "memory", 0.5, 0.6);
  slower.coverage = 0.96875;  // six pairs
  m.Update({slower});
  ASSERT_EQ(m.lessons().size(), 2u);
  EXPECT_EQ(m.lessons().front().title, "slower");
  std::string text = m.RenderFor({"t", "elementwise", "memory", kTarget, "c++", {}});
  EXPECT_NE(text.find("Lesson 1 (from t-slower, elementwise, memory-bound; tiling; made a kernel slower, avoid: "
                      "0.55x (96.88% interval 0.50 to 0.60)):\n**slower**"),
            std::string::npos)
      << text;
  // A lesson recorded before coverages were kept claims none.
  EXPECT_NE(text.find("(from t-old, elementwise, memory-bound; tiling; made a kernel faster, 1.15x (interval 1.10 to "
                      "1.20))"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("Lesson 2 (from t-old"), std::string::npos) << text;
  EXPECT_EQ(OptimizationMemory({}).RenderFor({}), "");
}

TEST(LessonTags, SetAndHaveTheSameNames) {
  LessonTags tags;
  for (const auto& name : LessonTagNames()) {
    EXPECT_TRUE(tags.Set(name, "x")) << name;
    EXPECT_TRUE(tags.Has(name, "x")) << name;
  }
  EXPECT_FALSE(tags.Set("colour", "red"));
}

TEST(Memory, LessonsRoundTripThroughJson) {
  Lesson l = L("x", "matmul", "mm", 1.5, 1.7);
  l.id = 7;
  auto back = LessonFromJson(ToJson(l));
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(back->tags, l.tags);
  EXPECT_EQ(back->low, 1.5);
  EXPECT_EQ(back->text, l.text);
  EXPECT_FALSE(LessonFromJson(Json{{"id", 1}}).ok());
}

}  // namespace
}  // namespace accelopt::memory
