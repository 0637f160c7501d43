#pragma once
/// core: the candidate, one type for the search that proposes and decides, the
/// run that records it and the store that keeps it (store::StoredCandidate
/// adds the run and task it belongs to).

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/json_io.h"
#include "core/profile.h"
#include "core/result.h"

namespace accelopt {

/// A candidate the search has seen: a kernel (or a code task's files), where it
/// came from and how it measured.
struct Candidate {
  int64_t id = 0;  ///< set by the listener (e.g. the store's id)
  int iteration = 0;
  int64_t parent_id = 0;
  std::string parent_hash;
  std::string plan;  ///< the plan's text ("" for the baseline)
  std::string code, hash;
  Profile profile;
  /// Its speedup over its parent, timed side by side (interleaved), when the
  /// search compared them: what decided whether it entered the beam and
  /// whether the pair became a lesson.
  std::optional<PairedSpeedup> vs_parent;
  bool ok() const { return profile.status == Verdict::kOk && profile.latency.has_value(); }
  double latency() const { return ok() ? profile.latency->median_s : 0; }
};

/// A candidate's speedup over its task's baseline as the side-by-side
/// evidence gives it: the product, step by step along its lineage, of each
/// step's speedup over its parent (vs_parent), with the product of the
/// intervals' ends (a conservative interval).
struct Evidence {
  double estimate = 1, low = 1, high = 1;
  int steps = 0;         ///< plans from the baseline
  bool medians = false;  ///< some step is a ratio of two medians (its target cannot time two kernels side by side)
};

/// Whether the step from a candidate's parent to it is proven faster: it was
/// compared (vs_parent), not disturbed, and the low end of its interval lies
/// above 1 + `margin`.
bool ProvenStep(const Candidate& c, double margin = 0);

/// The evidence for `c` when every step from the baseline (the candidate
/// without a parent) to it is proven; nothing otherwise. Lineage follows
/// parent_hash through `by_hash`.
std::optional<Evidence> EvidenceFor(const Candidate& c, const std::map<std::string, const Candidate*>& by_hash,
                                    double margin = 0);

/// The best of one task's candidates: the largest proven speedup over the
/// baseline (ties by median latency), so a kernel found slower than its
/// parent side by side, or never compared, is never the best, whatever its
/// own median. No candidate when there is no ok baseline among them. Lineage follows
/// parent_hash, or parent_id where that is empty (as read from a store). How
/// the run, `show` and the exports choose alike.
struct BestCandidate {
  const Candidate* candidate = nullptr;
  Evidence evidence;
};
BestCandidate BestByEvidence(const std::vector<const Candidate*>& candidates, double margin = 0);
/// Every candidate with proven evidence, best first by the same rule (the
/// baseline among them): what BestByEvidence takes the first of, and what
/// the run's final check goes down.
std::vector<BestCandidate> RankByEvidence(const std::vector<const Candidate*>& candidates, double margin = 0);

Json ToJson(const Candidate& c);
/// Reads what ToJson wrote; an Error names what is missing.
Result<Candidate> CandidateFromJson(const Json& j);

}  // namespace accelopt
