#include "eval/scoring.h"

#include <algorithm>
#include <cstdio>

namespace accelopt::eval {

void Score(const suite::RooflineCounts& counts, const ScoringPeaks& peaks, Profile& profile) {
  if (!profile.latency || peaks.rates.bandwidth_gbs <= 0) return;
  const suite::RooflineTime t = suite::ComputeRooflineTime(counts, peaks.rates);
  const double median = profile.latency->median_s;
  profile.bound = t.bound;
  profile.roofline_seconds = t.seconds;
  profile.roofline_memory_seconds = t.memory_seconds;
  profile.roofline_mm_seconds = t.mm_seconds;
  profile.roofline_vec_seconds = t.vec_seconds;
  profile.percent_of_peak = 100.0 * t.seconds / median;
  profile.achieved_gbs = counts.min_bytes / median / 1e9;
  profile.achieved_gflops = (counts.flops_mm + counts.flops_vec) / median / 1e9;
  ScoredAgainst& against = profile.scored_against.emplace();
  against.bandwidth_gbs = peaks.rates.bandwidth_gbs;
  against.peak_mm_gflops = peaks.rates.peak_mm_gflops;
  against.peak_vec_gflops = peaks.rates.peak_vec_gflops;
  against.fingerprint = peaks.fingerprint;
  against.measured_at = peaks.measured_at;
}

BeyondPeak JudgeBeyondPeak(const suite::RooflineCounts& counts, double median, const ScoringPeaks& peaks) {
  struct Claim {
    const char* figure;
    double proved;  // the rate the kernel achieved in this figure
    double* rate;   // the calibrated rate
    double theoretical;
  };
  BeyondPeak out;
  out.raised = peaks.rates;
  const std::vector<Claim> claims = {
      {"bandwidth", counts.min_bytes / median / 1e9, &out.raised.bandwidth_gbs, peaks.theoretical.bandwidth_gbs},
      {"peak_mm", counts.flops_mm / median / 1e9, &out.raised.peak_mm_gflops, peaks.theoretical.peak_mm_gflops},
      {"peak_vec", counts.flops_vec / median / 1e9, &out.raised.peak_vec_gflops, peaks.theoretical.peak_vec_gflops}};
  for (const Claim& c : claims) {
    if (c.proved <= *c.rate) continue;
    double spread = 0;
    if (auto it = peaks.spreads.find(c.figure); it != peaks.spreads.end()) spread = it->second;
    const double allowed = *c.rate * (1 + std::max(peaks.raise_allowance, peaks.raise_spreads * spread));
    char text[256];
    if (!peaks.calibrated) {
      std::snprintf(text, sizeof text, "%s %.4g beyond the calibrated %.4g, and no hardware profile to weigh it",
                    c.figure, c.proved, *c.rate);
    } else if (c.theoretical > 0 && c.proved > c.theoretical) {
      std::snprintf(text, sizeof text, "%s %.4g above the theoretical %.4g", c.figure, c.proved, c.theoretical);
    } else if (c.proved > allowed) {
      std::snprintf(text, sizeof text,
                    "%s %.4g, more than the calibrated %.4g plus what its calibration could have missed (up to %.4g)",
                    c.figure, c.proved, *c.rate, allowed);
    } else {
      out.proved.push_back({c.figure, c.proved, *c.rate});
      *c.rate = c.proved;
      continue;
    }
    out.suspect_reason = text;
    out.proved.clear();
    out.raised = peaks.rates;
    break;
  }
  return out;
}

void MarkSuspect(Profile& profile, const std::string& reason) {
  profile.status = Verdict::kSuspect;
  char text[512];
  std::snprintf(text, sizeof text,
                "correct, but measured twice faster than the roofline (%.1f%% of peak, T = %.3g s): it would need %s; "
                "not trusted",
                profile.percent_of_peak, profile.roofline_seconds, reason.c_str());
  profile.message = text;
}

Result<std::vector<ProvedRate>> ScoreMeasuringAgainBeyondPeak(
    const suite::RooflineCounts& counts, const ScoringPeaks& peaks, Profile& profile,
    const std::function<Status(Profile& again)>& measure_again) {
  Score(counts, peaks, profile);
  if (profile.status != Verdict::kOk || profile.percent_of_peak <= 100) return std::vector<ProvedRate>{};
  Profile again;
  again.tolerance = profile.tolerance;
  if (auto s = measure_again(again); !s) return s.error();
  if (again.status != Verdict::kOk) {
    profile.status = again.status;
    profile.message = "measured again because it ran faster than the roofline: " + again.message;
    profile.run_log = again.run_log;
    return std::vector<ProvedRate>{};
  }
  if (again.latency->median_s > profile.latency->median_s) profile.latency = again.latency;
  Score(counts, peaks, profile);
  if (profile.percent_of_peak <= 100) {
    profile.message += "; measured again after a first median faster than the roofline";
    return std::vector<ProvedRate>{};
  }
  const BeyondPeak judged = JudgeBeyondPeak(counts, profile.latency->median_s, peaks);
  if (!judged.suspect_reason.empty()) {
    MarkSuspect(profile, judged.suspect_reason);
    return std::vector<ProvedRate>{};
  }
  // Within what the calibration could have missed: evidence for the next
  // `accelopt calibrate` to confirm, never a new yardstick. The rates stay the
  // calibrated ones (the profile scores above 100% against them), so no
  // kernel moves what every later kernel is measured against.
  for (const ProvedRate& p : judged.proved) {
    char text[320];
    std::snprintf(text, sizeof text,
                  "; beyond the calibrated %s (%.4g against %.4g, measured twice) but within what its calibration "
                  "could have missed: evidence for the next `accelopt calibrate` to confirm, scored against "
                  "the calibrated rates",
                  p.figure.c_str(), p.value, p.previous);
    profile.message += text;
  }
  return judged.proved;
}

}  // namespace accelopt::eval
