#pragma once
/// store: how every store implementation writes and reads the values it keeps
/// as JSON beside its columns, so that SQLite and PostgreSQL agree. Internal
/// to store implementations.

#include <optional>
#include <string>

#include "core/candidate.h"
#include "core/json_io.h"
#include "core/lesson.h"
#include "core/result.h"

namespace accelopt::store {

/// A lesson's tags beyond its task and target (their own columns): family,
/// bound, language, strategies, machine.
Json LessonTagsToJson(const LessonTags& tags);
/// Reads them back into `tags` (task and target untouched); a missing key is an empty tag.
Status LessonTagsFromJson(const Json& json, LessonTags& tags);

/// Fills a candidate read back from its stored profile and its side-by-side
/// comparison with its parent (nullopt: not compared). Errors name the candidate.
Status ReadCandidateValues(const Json& profile, const std::optional<Json>& vs_parent, Candidate& candidate);

}  // namespace accelopt::store
