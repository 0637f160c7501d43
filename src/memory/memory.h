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
#include "core/lesson.h"
#include "core/result.h"

namespace accelopt::memory {

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
  Lesson lesson;
  int relevance = 0;  ///< 2: same bound and family, 1: one of them, 0: neither
  /// 2: verified on the kernel's machine class, 1: on a class not recorded,
  /// 0: on another class (its effect may not hold here).
  int home = 1;
};

/// The lessons a planner gets, most relevant first: only those of the
/// kernel's target and language (where both are known) that have the
/// required tags and words; those verified on the kernel's machine class
/// first, then those whose class is not recorded, then other classes'; within
/// each, ranked by relevance (same bound and family first), then by the size
/// of their verified effect (negative lessons scoped and ranked alike), then
/// newest; as many as fit the limits.
std::vector<RankedLesson> SelectLessons(const std::vector<Lesson>& lessons, const LessonQuery& query,
                                        const SelectionLimits& limits);

/// One lesson as the planner reads it, numbered `n`; where it was verified
/// when that is not `here` (the planner's machine class).
std::string RenderLesson(const Lesson& lesson, int n, const std::string& here = "");
/// The block of lessons as the planner reads it; "" when empty.
std::string RenderLessons(const std::vector<RankedLesson>& lessons, const std::string& here = "");

/// The lessons a search draws on: those it started with (from the store)
/// and those it learns, newest first.
class OptimizationMemory {
 public:
  /// `initial` newest first.
  explicit OptimizationMemory(std::vector<Lesson> initial, SelectionLimits limits = {});

  /// Adds lessons learnt, best first, ahead of the older ones.
  void Update(const std::vector<Lesson>& newest);

  const std::vector<Lesson>& lessons() const { return lessons_; }

  /// The lessons block for a planner whose kernel is `kernel`; "" when none applies.
  std::string RenderFor(const LessonTags& kernel) const;

 private:
  SelectionLimits limits_;
  std::vector<Lesson> lessons_;
};

}  // namespace accelopt::memory
