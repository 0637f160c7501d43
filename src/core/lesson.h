#pragma once
/// The lesson: what the summarizer learnt from a slow/fast pair, with its tags
/// and verified effect. One type for the agents that write it, the memory that
/// curates it and the store that keeps it (store::StoredLesson adds where it is
/// kept and where it came from).

#include <cstdint>
#include <string>
#include <vector>

#include "core/json_io.h"
#include "core/result.h"

namespace accelopt {

/// What a lesson is about, and what a planner's kernel is: the keys a query
/// matches on. An empty field is unknown.
struct LessonTags {
  std::string task, family, bound, target, language;
  std::vector<std::string> strategies;  ///< kinds of transformation (agents::Strategies())
  /// The machine class it was verified on (a worker's class, or the
  /// machine's fingerprint): a lesson from another class may not hold here.
  std::string machine;
  bool operator==(const LessonTags&) const = default;
  /// The tag named `key` ("strategy" matches any of the strategies).
  bool Has(const std::string& key, const std::string& value) const;
  /// Sets the tag named `key` ("strategy" adds one); false for a name not in LessonTagNames().
  bool Set(const std::string& key, const std::string& value);
};
/// The tag names a query may require: task, family, bound, target, language, strategy, machine.
const std::vector<std::string>& LessonTagNames();

struct Lesson {
  int64_t id = 0;  ///< the store's id, 0 until stored
  LessonTags tags;
  double speedup = 0;  ///< fast/slow, the estimate; below 1 for a negative lesson
  /// Its interval as verified (timed side by side); equal to the estimate
  /// when only two medians were known.
  double low = 0, high = 0;
  double coverage = 0;  ///< of that interval (PairedSpeedup::coverage); 0: unknown
  std::string title;  ///< the bold title
  std::string text;   ///< the whole lesson (title, description, before/after snippet)
  /// How large an effect the measurement proves: the log of the interval's
  /// end nearest 1 (positive for a speedup, negative for a slowdown), 0 when
  /// the interval reaches 1.
  double VerifiedEffect() const;
};

Json ToJson(const Lesson& lesson);
/// Reads what ToJson wrote; a lesson without an interval has its estimate as both ends.
Result<Lesson> LessonFromJson(const Json& j);

/// Whether a lesson from outside (`memory import`) is one a search could
/// have verified: a finite, positive speedup within [1e-4, 1e4] inside its
/// interval, a coverage in [0, 1], a title, and text within 64 KiB. The
/// Error says which field is wrong and its value.
Status CheckImportedLesson(const Lesson& lesson);

}  // namespace accelopt
