#include "core/candidate.h"

#include <algorithm>
#include <set>

namespace accelopt {

Json ToJson(const Candidate& c) {
  Json j = {{"id", c.id},     {"iteration", c.iteration}, {"parent_id", c.parent_id}, {"parent_hash", c.parent_hash},
            {"plan", c.plan}, {"code", c.code},           {"hash", c.hash},           {"profile", c.profile.ToJson()}};
  if (c.vs_parent) j["vs_parent"] = ToJson(*c.vs_parent);
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
      auto vs = PairedSpeedupFromJson(j.at("vs_parent"));
      if (!vs) return Error{"candidate: " + vs.error().message};
      c.vs_parent = *vs;
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

bool ProvenStep(const Candidate& c, double margin) {
  return c.ok() && c.vs_parent && !c.vs_parent->disturbed && c.vs_parent->ci_low > 1.0 + margin;
}

std::optional<Evidence> EvidenceFor(const Candidate& c, const std::map<std::string, const Candidate*>& by_hash,
                                    double margin) {
  Evidence e;
  std::set<std::string> visited;  // a corrupt record must not loop
  for (const Candidate* at = &c;; ++e.steps) {
    if (!at->ok() || !visited.insert(at->hash).second) return std::nullopt;
    if (at->parent_hash.empty()) return at->plan.empty() ? std::optional<Evidence>(e) : std::nullopt;
    if (!ProvenStep(*at, margin)) return std::nullopt;
    const PairedSpeedup& s = *at->vs_parent;
    e.estimate *= s.speedup;
    e.low *= s.ci_low;
    e.high *= s.ci_high;
    e.medians = e.medians || s.pairs == 0;
    auto parent = by_hash.find(at->parent_hash);
    if (parent == by_hash.end()) return std::nullopt;
    at = parent->second;
  }
}

std::vector<BestCandidate> RankByEvidence(const std::vector<const Candidate*>& candidates, double margin) {
  // Candidates read back from a store name their parent by id: linked by hash on copies.
  std::vector<Candidate> linked;
  for (const Candidate* c : candidates) {
    linked.push_back(*c);
    if (linked.back().hash.empty()) linked.back().hash = "#" + std::to_string(c->id);  // identity by id alone
  }
  std::map<int64_t, std::string> hash_of;
  for (const Candidate& c : linked) hash_of[c.id] = c.hash;
  std::map<std::string, const Candidate*> by_hash;
  for (Candidate& c : linked) {
    if (c.parent_hash.empty() && c.parent_id != 0 && hash_of.count(c.parent_id)) c.parent_hash = hash_of[c.parent_id];
    by_hash.emplace(c.hash, &c);
  }
  std::vector<BestCandidate> ranked;
  for (size_t i = 0; i < linked.size(); ++i)
    if (const auto e = EvidenceFor(linked[i], by_hash, margin)) ranked.push_back({candidates[i], *e});
  std::stable_sort(ranked.begin(), ranked.end(), [](const BestCandidate& a, const BestCandidate& b) {
    if (a.evidence.estimate != b.evidence.estimate) return a.evidence.estimate > b.evidence.estimate;
    return a.candidate->latency() < b.candidate->latency();
  });
  return ranked;
}

BestCandidate BestByEvidence(const std::vector<const Candidate*>& candidates, double margin) {
  std::vector<BestCandidate> ranked = RankByEvidence(candidates, margin);
  return ranked.empty() ? BestCandidate{} : ranked.front();
}

}  // namespace accelopt
