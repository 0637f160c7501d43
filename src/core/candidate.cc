#include "core/candidate.h"

namespace accelopt {

Json ToJson(const Candidate& c) {
  Json j = {{"id", c.id},     {"iteration", c.iteration}, {"parent_id", c.parent_id}, {"parent_hash", c.parent_hash},
            {"plan", c.plan}, {"code", c.code},           {"hash", c.hash},           {"profile", c.profile.ToJson()}};
  if (c.vs_parent)
    j["vs_parent"] = ToJson(*c.vs_parent);
  return j;
}

Result<Candidate> CandidateFromJson(const Json& j) {
  Candidate c;
  try {
    c.id = j.at("id");
    c.iteration = j.at("iteration");
    c.parent_id = j.at("parent_id");
    c.parent_hash = j.value("parent_hash", "");
    c.plan = j.at("plan");
    c.code = j.at("code");
    c.hash = j.at("hash");
    if (j.contains("vs_parent")) {
      c.vs_parent = PairedSpeedupFromJson(j.at("vs_parent"));
    }
    if (!j.contains("profile")) return Error{"candidate: no profile"};
  } catch (const Json::exception& e) {
    return Error{std::string("candidate: ") + e.what()};
  }
  auto profile = ProfileFromJson(j.at("profile"));
  if (!profile) return profile.error();
  c.profile = *profile;
  return c;
}

}  // namespace accelopt
