#pragma once
/// Scoring, the same for every target: a profile's latency against the
/// roofline of its task at its shape (percent of peak, the bound, each
/// component), and the judgement of a correct kernel measured faster than the
/// roofline: evidence for the next calibration (never a raised rate), or
/// `suspect`.

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "core/profile.h"
#include "core/result.h"
#include "suite/roofline.h"

namespace accelopt::eval {

/// The rates a target scores against, with what is known of them.
struct ScoringPeaks {
  suite::PeakRates rates;        ///< measured (calibrated); zero bandwidth = no scoring
  suite::PeakRates theoretical;  ///< from the device's specifications; 0 where unknown
  /// Relative spread of each calibrated figure ("bandwidth", "peak_mm", "peak_vec").
  std::map<std::string, double> spreads;
  bool calibrated = false;  ///< the rates come from a profile whose spreads and peaks are known
  std::string fingerprint, measured_at;
  /// How far beyond a calibrated rate a kernel may prove the machine can go:
  /// this share, or `raise_spreads` times the figure's calibration spread if more.
  double raise_allowance = 0.05;
  double raise_spreads = 3;
};

/// Fills the profile's roofline fields, percent of peak, achieved rates and
/// `scored_against` from its median latency; nothing without a latency or rates.
void Score(const suite::RooflineCounts& counts, const ScoringPeaks& peaks, Profile& profile);

/// A rate a kernel proved the machine reaches, beyond its calibrated one.
struct ProvedRate {
  std::string figure;  ///< "bandwidth", "peak_mm" or "peak_vec"
  double value = 0;    ///< what the kernel achieved
  double previous = 0;
};

/// What a correct kernel that stayed faster than the roofline when measured
/// twice (`median`: the slower median) means: either rates it claims within
/// what the calibration could miss (evidence, never applied by an
/// evaluation), or why no honest measurement explains it. Every figure has a
/// ceiling: its theoretical figure where known, and always the calibrated
/// rate plus the allowance, which no evaluation moves.
struct BeyondPeak {
  std::string suspect_reason;      ///< "" when every claim is within what the calibration could have missed
  suite::PeakRates raised;         ///< the rates as the kernel claims them (evidence only)
  std::vector<ProvedRate> proved;  ///< each raise
};
BeyondPeak JudgeBeyondPeak(const suite::RooflineCounts& counts, double median, const ScoringPeaks& peaks);

/// Marks the profile `suspect`, saying why it is not trusted.
void MarkSuspect(Profile& profile, const std::string& reason);

/// Scores a correct profile, for every target alike. Faster than its
/// roofline, it is measured again (`measure_again` fills a fresh profile; an
/// Error is the engine's) and the slower median counts. Still faster: it is
/// suspect, or, where each rate it claims stays within what the calibration
/// could miss (and below the theoretical figure), it stays ok, scored against
/// the calibrated rates all the same, and its claims come back as evidence.
/// `peaks` is never changed: only `accelopt calibrate` moves the rates
/// (issue 24, "moving the yardstick"). Returns the claims (none, mostly).
Result<std::vector<ProvedRate>> ScoreMeasuringAgainBeyondPeak(
    const suite::RooflineCounts& counts, const ScoringPeaks& peaks, Profile& profile,
    const std::function<Status(Profile& again)>& measure_again);

}  // namespace accelopt::eval
