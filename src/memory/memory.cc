#include "memory/memory.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

#include "core/text.h"

namespace accelopt::memory {
namespace {

bool Compatible(const std::string& lesson, const std::string& kernel) {
  return lesson.empty() || kernel.empty() || lesson == kernel;
}

bool Same(const std::string& lesson, const std::string& kernel) { return !lesson.empty() && lesson == kernel; }

bool HasWords(const MemoryLesson& l, const std::string& text) {
  const std::string haystack = Lower(l.title + "\n" + l.text);
  std::istringstream words(Lower(text));
  for (std::string word; words >> word;)
    if (haystack.find(word) == std::string::npos) return false;
  return true;
}

std::string Join(const std::vector<std::string>& parts, const char* separator) {
  std::string out;
  for (const auto& p : parts)
    if (!p.empty()) out += (out.empty() ? "" : separator) + p;
  return out;
}

}  // namespace

bool LessonTags::Has(const std::string& key, const std::string& value) const {
  if (key == "task") return task == value;
  if (key == "family") return family == value;
  if (key == "bound") return bound == value;
  if (key == "target") return target == value;
  if (key == "language") return language == value;
  if (key == "strategy") return std::find(strategies.begin(), strategies.end(), value) != strategies.end();
  return false;
}

bool LessonTags::Set(const std::string& key, const std::string& value) {
  if (key == "task")
    task = value;
  else if (key == "family")
    family = value;
  else if (key == "bound")
    bound = value;
  else if (key == "target")
    target = value;
  else if (key == "language")
    language = value;
  else if (key == "strategy")
    strategies.push_back(value);
  else
    return false;
  return true;
}

const std::vector<std::string>& TagNames() {
  static const std::vector<std::string> names = {"task", "family", "bound", "target", "language", "strategy"};
  return names;
}

double MemoryLesson::VerifiedEffect() const {
  if (low > 1) return std::log(low);
  if (high > 0 && high < 1) return std::log(high);
  return 0;
}

Json ToJson(const MemoryLesson& l) {
  return {{"id", l.id},
          {"task", l.tags.task},
          {"family", l.tags.family},
          {"bound", l.tags.bound},
          {"target", l.tags.target},
          {"language", l.tags.language},
          {"strategies", l.tags.strategies},
          {"speedup", l.speedup},
          {"speedup_low", l.low},
          {"speedup_high", l.high},
          {"title", l.title},
          {"text", l.text}};
}

Result<MemoryLesson> MemoryLessonFromJson(const Json& j) {
  try {
    MemoryLesson l;
    l.id = j.at("id");
    l.tags.task = j.at("task");
    l.tags.family = j.value("family", "");
    l.tags.bound = j.value("bound", "");
    l.tags.target = j.value("target", "");
    l.tags.language = j.value("language", "");
    l.tags.strategies = j.value("strategies", std::vector<std::string>{});
    l.speedup = j.at("speedup");
    // Lessons recorded before intervals were kept: the estimate is all there is.
    l.low = j.value("speedup_low", l.speedup);
    l.high = j.value("speedup_high", l.speedup);
    l.title = j.at("title");
    l.text = j.at("text");
    return l;
  } catch (const Json::exception& e) {
    return Error{std::string("lesson: ") + e.what()};
  }
}

std::vector<RankedLesson> SelectLessons(const std::vector<MemoryLesson>& lessons, const LessonQuery& q,
                                        const SelectionLimits& limits) {
  std::vector<RankedLesson> candidates;
  for (const auto& l : lessons) {
    if (!Compatible(l.tags.target, q.kernel.target) || !Compatible(l.tags.language, q.kernel.language)) continue;
    bool wanted = std::all_of(q.required.begin(), q.required.end(),
                              [&](const auto& tag) { return l.tags.Has(tag.first, tag.second); });
    if (!wanted || !HasWords(l, q.text)) continue;
    int relevance = Same(l.tags.bound, q.kernel.bound) + Same(l.tags.family, q.kernel.family);
    candidates.push_back({l, relevance});
  }
  // Stable: among equals, the newest (the input's order) first.
  std::stable_sort(candidates.begin(), candidates.end(), [](const RankedLesson& a, const RankedLesson& b) {
    if (a.relevance != b.relevance) return a.relevance > b.relevance;
    return std::fabs(a.lesson.VerifiedEffect()) > std::fabs(b.lesson.VerifiedEffect());
  });
  std::vector<RankedLesson> chosen;
  size_t bytes = 0;
  for (const auto& c : candidates) {
    if (chosen.size() >= limits.max_lessons) break;
    size_t size = RenderLesson(c.lesson, static_cast<int>(chosen.size()) + 1).size();
    if (bytes + size > limits.max_bytes) continue;  // a smaller one further down may still fit
    bytes += size;
    chosen.push_back(c);
  }
  return chosen;
}

std::string RenderLesson(const MemoryLesson& l, int n) {
  char effect[160];
  if (l.low != l.high)
    std::snprintf(effect, sizeof effect, "%.2fx (95%% interval %.2f to %.2f)", l.speedup, l.low, l.high);
  else
    std::snprintf(effect, sizeof effect, "%.2fx", l.speedup);
  std::string about = Join({l.tags.task, l.tags.family, l.tags.bound.empty() ? "" : l.tags.bound + "-bound"}, ", ");
  std::string kinds = Join(l.tags.strategies, ", ");
  return "Lesson " + std::to_string(n) + " (from " + about + (kinds.empty() ? "" : "; " + kinds) + "; " +
         (l.speedup >= 1 ? std::string("made a kernel faster, ") : std::string("made a kernel slower, avoid: ")) +
         effect + "):\n" + l.text + "\n\n";
}

std::string RenderLessons(const std::vector<RankedLesson>& lessons) {
  std::string out;
  int n = 0;
  for (const auto& r : lessons) out += RenderLesson(r.lesson, ++n);
  return out;
}

OptimizationMemory::OptimizationMemory(std::vector<MemoryLesson> initial, SelectionLimits limits)
    : limits_(limits), lessons_(std::move(initial)) {}

void OptimizationMemory::Update(const std::vector<MemoryLesson>& newest) {
  lessons_.insert(lessons_.begin(), newest.begin(), newest.end());
}

std::string OptimizationMemory::RenderFor(const LessonTags& kernel) const {
  return RenderLessons(SelectLessons(lessons_, {kernel, {}, ""}, limits_));
}

}  // namespace accelopt::memory
