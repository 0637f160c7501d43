#include "memory/memory.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

#include "core/profile.h"
#include "core/text.h"

namespace accelopt::memory {
namespace {

bool Compatible(const std::string& lesson, const std::string& kernel) {
  return lesson.empty() || kernel.empty() || lesson == kernel;
}

bool Same(const std::string& lesson, const std::string& kernel) { return !lesson.empty() && lesson == kernel; }

bool HasWords(const Lesson& l, const std::string& text) {
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

// What a lesson changed: a kernel, or (from a code task) code.
std::string What(const Lesson& l) { return l.tags.target == "code" ? "code" : "a kernel"; }

}  // namespace

std::vector<RankedLesson> SelectLessons(const std::vector<Lesson>& lessons, const LessonQuery& q,
                                        const SelectionLimits& limits) {
  std::vector<RankedLesson> candidates;
  for (const auto& l : lessons) {
    if (!Compatible(l.tags.target, q.kernel.target) || !Compatible(l.tags.language, q.kernel.language)) continue;
    bool wanted = std::all_of(q.required.begin(), q.required.end(),
                              [&](const auto& tag) { return l.tags.Has(tag.first, tag.second); });
    if (!wanted || !HasWords(l, q.text)) continue;
    int relevance = Same(l.tags.bound, q.kernel.bound) + Same(l.tags.family, q.kernel.family);
    int home = (l.tags.machine.empty() || q.kernel.machine.empty()) ? 1 : (l.tags.machine == q.kernel.machine ? 2 : 0);
    candidates.push_back({l, relevance, home});
  }
  // Stable: among equals, the newest (the input's order) first.
  std::stable_sort(candidates.begin(), candidates.end(), [](const RankedLesson& a, const RankedLesson& b) {
    if (a.home != b.home) return a.home > b.home;
    if (a.relevance != b.relevance) return a.relevance > b.relevance;
    return std::fabs(a.lesson.VerifiedEffect()) > std::fabs(b.lesson.VerifiedEffect());
  });
  std::vector<RankedLesson> chosen;
  size_t bytes = 0;
  for (const auto& c : candidates) {
    if (chosen.size() >= limits.max_lessons) break;
    size_t size = RenderLesson(c.lesson, static_cast<int>(chosen.size()) + 1, q.kernel.machine).size();
    if (bytes + size > limits.max_bytes) continue;  // a smaller one further down may still fit
    bytes += size;
    chosen.push_back(c);
  }
  return chosen;
}

std::string RenderLesson(const Lesson& l, int n, const std::string& here) {
  char effect[160];
  if (l.low != l.high)
    std::snprintf(effect, sizeof effect, "%.2fx (%s %.2f to %.2f)", l.speedup, IntervalName(l.coverage).c_str(), l.low,
                  l.high);
  else
    std::snprintf(effect, sizeof effect, "%.2fx", l.speedup);
  std::string about = Join({l.tags.task, l.tags.family, l.tags.bound.empty() ? "" : l.tags.bound + "-bound"}, ", ");
  std::string kinds = Join(l.tags.strategies, ", ");
  const std::string where =
      (!l.tags.machine.empty() && l.tags.machine != here) ? "; verified on another machine: " + l.tags.machine : "";
  return "Lesson " + std::to_string(n) + " (from " + about + (kinds.empty() ? "" : "; " + kinds) + where + "; " +
         (l.speedup >= 1 ? "made " + What(l) + " faster, " : "made " + What(l) + " slower, avoid: ") +
         effect + "):\n" + l.text + "\n\n";
}

std::string RenderLessons(const std::vector<RankedLesson>& lessons, const std::string& here) {
  std::string out;
  int n = 0;
  for (const auto& r : lessons) out += RenderLesson(r.lesson, ++n, here);
  return out;
}

OptimizationMemory::OptimizationMemory(std::vector<Lesson> initial, SelectionLimits limits)
    : limits_(limits), lessons_(std::move(initial)) {}

void OptimizationMemory::Update(const std::vector<Lesson>& newest) {
  lessons_.insert(lessons_.begin(), newest.begin(), newest.end());
}

std::string OptimizationMemory::RenderFor(const LessonTags& kernel) const {
  return RenderLessons(SelectLessons(lessons_, {kernel, {}, ""}, limits_), kernel.machine);
}

}  // namespace accelopt::memory
