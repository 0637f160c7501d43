#pragma once
/// core: the candidate, one type for the search that proposes and decides, the
/// run that records it and the store that keeps it (store::StoredCandidate
/// adds the run and task it belongs to).

#include <cstdint>
#include <optional>
#include <string>

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

/// Whether `c` is ok and faster than `best` (null: than nothing): how a
/// run's best kernel for a task is chosen, by `show` and by exports alike.
inline bool BeatsBest(const Candidate& c, const Candidate* best) {
  return c.ok() && (!best || c.latency() < best->latency());
}

Json ToJson(const Candidate& c);
/// Reads what ToJson wrote; an Error names what is missing.
Result<Candidate> CandidateFromJson(const Json& j);

}  // namespace accelopt
