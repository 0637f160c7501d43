#include "core/candidate.h"

#include <gtest/gtest.h>

#include "run/optimize.h"

namespace accelopt {
namespace {

Candidate Made(int64_t id, int64_t parent_id, const std::string& hash, double latency_s,
               std::optional<PairedSpeedup> vs_parent = std::nullopt) {
  Candidate c;
  c.id = id;
  c.parent_id = parent_id;
  c.hash = hash;
  c.plan = parent_id == 0 ? "" : "plan " + hash;
  c.profile.latency = LatencyStats{latency_s, latency_s, latency_s, latency_s, 0, 10, 1};
  c.vs_parent = vs_parent;
  return c;
}

PairedSpeedup Paired(double estimate, double low, double high, bool disturbed = false) {
  PairedSpeedup s{estimate, low, high, 40};
  s.disturbed = disturbed;
  return s;
}

// The reported cases: a child found 1.76x faster than its parent side by side
// was passed over for one with a lower median, and a kernel the comparison
// had found slower than its parent was exported as the best.
struct Lineage {
  std::vector<Candidate> all;
  Lineage() {
    all.push_back(Made(1, 0, "base", 10e-3));
    all.push_back(Made(2, 1, "tiled", 4e-3, Paired(2.4, 2.3, 2.5)));
    all.push_back(Made(3, 2, "fast_alone", 2.0e-3, Paired(0.92, 0.90, 0.95)));  // slower side by side
    all.push_back(Made(4, 2, "proven", 2.3e-3, Paired(1.76, 1.70, 1.81)));
    all.push_back(Made(5, 2, "never_compared", 1.0e-3));
    all.push_back(Made(6, 2, "under_load", 1.5e-3, Paired(3.0, 2.9, 3.1, /*disturbed=*/true)));
  }
  // Linked by hash, as the search holds them.
  void Link() {
    for (auto& c : all)
      for (const auto& p : all)
        if (c.parent_id == p.id) c.parent_hash = p.hash;
  }
  std::vector<const Candidate*> view() const {
    std::vector<const Candidate*> out;
    for (const auto& c : all) out.push_back(&c);
    return out;
  }
};

TEST(BestByEvidence, FollowsTheSideBySideEvidenceNotTheMedians) {
  Lineage l;  // linked by id only, as read from a store
  const BestCandidate best = BestByEvidence(l.view());
  ASSERT_NE(best.candidate, nullptr);
  EXPECT_EQ(best.candidate->hash, "proven");
  EXPECT_NEAR(best.evidence.estimate, 2.4 * 1.76, 1e-12);
  l.Link();
  EXPECT_EQ(BestByEvidence(l.view()).candidate->hash, "proven");
}

TEST(EvidenceFor, MultipliesTheStepsAndTheirIntervals) {
  Lineage l;
  l.Link();
  std::map<std::string, const Candidate*> by_hash;
  for (const auto& c : l.all) by_hash[c.hash] = &c;
  auto e = EvidenceFor(l.all[3], by_hash);
  ASSERT_TRUE(e);
  EXPECT_NEAR(e->estimate, 2.4 * 1.76, 1e-12);
  EXPECT_NEAR(e->low, 2.3 * 1.70, 1e-12);
  EXPECT_NEAR(e->high, 2.5 * 1.81, 1e-12);
  EXPECT_EQ(e->steps, 2);
  EXPECT_FALSE(e->medians);
  auto base = EvidenceFor(l.all[0], by_hash);
  ASSERT_TRUE(base);
  EXPECT_EQ(base->estimate, 1);
  // Slower side by side, never compared, measured disturbed: no evidence.
  EXPECT_FALSE(EvidenceFor(l.all[2], by_hash));
  EXPECT_FALSE(EvidenceFor(l.all[4], by_hash));
  EXPECT_FALSE(EvidenceFor(l.all[5], by_hash));
  // A margin the step's low end does not clear.
  EXPECT_FALSE(EvidenceFor(l.all[3], by_hash, 0.75));
}

TEST(BestByEvidence, TheBaselineWhenNothingIsProvenAndNothingWithoutOne) {
  Lineage l;
  l.all[1].vs_parent = Paired(1.02, 0.98, 1.05);  // the first step is not proven: nothing below it is
  EXPECT_EQ(BestByEvidence(l.view()).candidate->hash, "base");
  EXPECT_EQ(BestByEvidence(l.view()).evidence.estimate, 1);
  std::vector<const Candidate*> orphans{&l.all[3]};
  EXPECT_EQ(BestByEvidence(orphans).candidate, nullptr);
}

// The run's own choice (confirmed against the baseline directly) stands over
// the evidence's where the run recorded one; else the evidence decides.
TEST(RunsBest, TheRunsRecordedChoiceElseTheEvidence) {
  Lineage l;
  const Json summary = Json::array({{{"task", "t"},
                                     {"best_candidate", 2},
                                     {"speedup_chained", {{"estimate", 2.4}, {"low", 2.3}, {"high", 2.5}, {"steps", 1}}}}});
  const BestCandidate chosen = run::RunsBest(summary, "t", l.view());
  EXPECT_EQ(chosen.candidate->hash, "tiled");
  EXPECT_EQ(chosen.evidence.estimate, 2.4);
  EXPECT_EQ(run::RunsBest(summary, "other", l.view()).candidate->hash, "proven");
  EXPECT_EQ(run::RunsBest(Json(), "t", l.view()).candidate->hash, "proven");
}

TEST(PairedSpeedupJson, RoundTripsAndReadsOldRecordsAsQuiet) {
  PairedSpeedup s = Paired(1.5, 1.4, 1.6, true);
  s.other_load = 0.63;
  s.disturbed_series = 4;
  auto back = PairedSpeedupFromJson(ToJson(s));
  ASSERT_TRUE(back);
  EXPECT_EQ(back->speedup, 1.5);
  EXPECT_EQ(back->pairs, 40);
  EXPECT_TRUE(back->disturbed);
  EXPECT_EQ(back->disturbed_series, 4);
  EXPECT_DOUBLE_EQ(back->other_load, 0.63);
  auto old = PairedSpeedupFromJson(Json{{"speedup", 2.0}, {"ci_low", 1.9}, {"ci_high", 2.1}, {"pairs", 20}});
  ASSERT_TRUE(old);
  EXPECT_FALSE(old->disturbed);
  EXPECT_FALSE(PairedSpeedupFromJson(Json{{"speedup", 2.0}}));
  EXPECT_NE(PairedSpeedupText(s).find("measured disturbed: others used 63% of the CPU"), std::string::npos);
  s.coverage = 0.9375;
  EXPECT_NE(PairedSpeedupText(s).find("1.500x (93.75% interval 1.400-1.600, 40 pairs"), std::string::npos)
      << PairedSpeedupText(s);
}

}  // namespace
}  // namespace accelopt
