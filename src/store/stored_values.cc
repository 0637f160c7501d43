#include "store/stored_values.h"

namespace accelopt::store {

Json LessonTagsToJson(const LessonTags& tags) {
  Json j = {{"family", tags.family},
            {"bound", tags.bound},
            {"language", tags.language},
            {"strategies", tags.strategies}};
  if (!tags.machine.empty()) j["machine"] = tags.machine;
  return j;
}

Status LessonTagsFromJson(const Json& json, LessonTags& tags) {
  try {
    tags.family = json.value("family", "");
    tags.bound = json.value("bound", "");
    tags.language = json.value("language", "");
    tags.strategies = json.value("strategies", std::vector<std::string>{});
    tags.machine = json.value("machine", "");
  } catch (const Json::exception& e) {
    return Error{std::string("tags: ") + e.what()};
  }
  return Ok{};
}

Status ReadCandidateValues(const Json& profile, const std::optional<Json>& vs_parent, Candidate& candidate) {
  const std::string who = "candidate " + std::to_string(candidate.id) + ": ";
  auto read = ProfileFromJson(profile);
  if (!read) return Error{who + read.error().message};
  candidate.profile = std::move(*read);
  if (vs_parent) {
    auto speedup = PairedSpeedupFromJson(*vs_parent);
    if (!speedup) return Error{who + speedup.error().message};
    candidate.vs_parent = *speedup;
  }
  return Ok{};
}

}  // namespace accelopt::store
