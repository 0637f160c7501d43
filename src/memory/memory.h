#pragma once
/// memory: the optimization memory (DESIGN.md section 2). Lessons carry tags,
/// and a planner is given the lessons most relevant to its kernel, within a
/// size bound, rather than the newest. Persistence is the store's job; this
/// is the curation policy.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/json_io.h"
#include "core/result.h"

namespace accelopt::memory {

/// What a lesson is about, and what a planner's kernel is: the keys a query
/// matches on. An empty field is unknown.
struct LessonTags {
  std::string task, family, bound, target, language;
  std::vector<std::string> strategies;  ///< kinds of transformation (agents::Strategies())
  bool operator==(const LessonTags&) const = default;
  /// The tag named `key` ("strategy" matches any of the strategies).
  bool Has(const std::string& key, const std::string& value) const;
  /// Sets the tag named `key` ("strategy" adds one); false for a name not in TagNames().
  bool Set(const std::string& key, const std::string& value);
};
/// The tag names a query may require: task, family, bound, target, language, strategy.
const std::vector<std::string>& TagNames();

struct MemoryLesson {
  int64_t id = 0;  ///< the store's id, 0 until stored
  LessonTags tags;
  double speedup = 0;  ///< fast/slow, the estimate; below 1 for a negative lesson
  /// Its 95% interval as verified (timed side by side); equal to the estimate
  /// when only two medians were known.
  double low = 0, high = 0;
  std::string title;
  std::string text;
  /// How large an effect the measurement proves: the log of the interval's
  /// end nearest 1 (positive for a speedup, negative for a slowdown), 0 when
  /// the interval reaches 1.
  double VerifiedEffect() const;
};

Json ToJson(const MemoryLesson& lesson);
Result<MemoryLesson> MemoryLessonFromJson(const Json& j);

/// What a planner's kernel is, and what it wants from the memory.
struct LessonQuery {
  LessonTags kernel;  ///< task, family, bound, target, language of the kernel
  /// Tags a lesson must have (`memory search --tag key=value`).
  std::vector<std::pair<std::string, std::string>> required;
  std::string text;  ///< words that must all appear in the lesson (any case); "" for any
};

struct SelectionLimits {
  size_t max_lessons = 16;
  size_t max_bytes = 12 * 1024;  ///< of the rendered block
};

/// A lesson ranked for a query, with why.
struct RankedLesson {
  MemoryLesson lesson;
  int relevance = 0;  ///< 2: same bound and family, 1: one of them, 0: neither
};

/// The lessons a planner gets, most relevant first: only those of the
/// kernel's target and language (where both are known) that have the
/// required tags and words; ranked by relevance (same bound and family
/// first), then by the size of their verified effect (negative lessons
/// scoped and ranked alike), then newest; as many as fit the limits.
std::vector<RankedLesson> SelectLessons(const std::vector<MemoryLesson>& lessons, const LessonQuery& query,
                                        const SelectionLimits& limits);

/// One lesson as the planner reads it, numbered `n`.
std::string RenderLesson(const MemoryLesson& lesson, int n);
/// The block of lessons as the planner reads it; "" when empty.
std::string RenderLessons(const std::vector<RankedLesson>& lessons);

/// The lessons a search draws on: those it started with (from the store)
/// and those it learns, newest first.
class OptimizationMemory {
 public:
  /// `initial` newest first.
  explicit OptimizationMemory(std::vector<MemoryLesson> initial, SelectionLimits limits = {});

  /// Adds lessons learnt, best first, ahead of the older ones.
  void Update(const std::vector<MemoryLesson>& newest);

  const std::vector<MemoryLesson>& lessons() const { return lessons_; }

  /// The lessons block for a planner whose kernel is `kernel`; "" when none applies.
  std::string RenderFor(const LessonTags& kernel) const;

 private:
  SelectionLimits limits_;
  std::vector<MemoryLesson> lessons_;
};

}  // namespace accelopt::memory
