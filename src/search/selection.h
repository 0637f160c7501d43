#pragma once
/// search: the beam search over kernels (DESIGN.md section 2). This header:
/// the selection rules, as plain functions.

#include <cstddef>
#include <string>
#include <vector>

namespace accelopt::search {

/// One sample of a (kernel, plan): its latency, or a failure.
struct Sample {
  bool ok = false;
  double latency_s = 0;
};

/// Which sample of one (kernel, plan) is kept: the fastest correct one if it
/// beats the parent, else the worst (a failed sample counts as the worst).
/// Requires at least one sample.
size_t KeepSample(const std::vector<Sample>& samples, double parent_latency_s);

/// A speedup (parent time / child time) with its interval; from a paired
/// comparison, or low == high == estimate when only two medians are known.
struct Speedup {
  double estimate = 0, low = 0, high = 0;
  /// Measured while other processes took more than the allowed share of the
  /// machine (and not quiet when measured again): shown, never decides.
  bool disturbed = false;
  double coverage = 0;  ///< of [low, high] (PairedSpeedup::coverage); 0: unknown or a single point
};

/// Indices of the (parent, kept) pairs to summarize: up to top_k/2 whose whole
/// interval lies above max_threshold, best first, then filled to top_k with
/// those whose whole interval lies below 1/min_threshold, worst first. A pair
/// whose interval reaches into [1/min_threshold, max_threshold] teaches nothing,
/// nor does one measured disturbed.
std::vector<size_t> PickLessonPairs(const std::vector<Speedup>& speedups, size_t top_k, double max_threshold,
                                    double min_threshold);

/// Whether two plan titles name the same strategy: their content words
/// (lowercased, three letters or more, common words left out) overlap by at
/// least 60% of their union. An empty title (the baseline's) names none.
bool SameStrategy(const std::string& a, const std::string& b);

/// Indices of the best `width` distinct candidates by `speedups` (each one's
/// speedup over the baseline as the side-by-side evidence gives it: larger is
/// better; ties by latency), among those that are ok; `hashes` identify
/// duplicates (the first occurrence counts). `strategies` (each one's plan
/// title; empty: no check) keeps the beam's strategies distinct: a candidate
/// whose plan repeats the strategy of one ranked above it is not admitted, so
/// of two variants of one idea only the one the evidence puts first is kept.
std::vector<size_t> PickBeam(const std::vector<Sample>& candidates, const std::vector<double>& speedups,
                             const std::vector<std::string>& hashes, size_t width,
                             const std::vector<std::string>& strategies = {});

}  // namespace accelopt::search
