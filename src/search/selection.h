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

/// Indices of the (parent, kept) pairs to summarize, given their speedups
/// (parent latency / kept latency): up to top_k/2 with speedup > max_threshold,
/// best first, then filled to top_k with speedup < 1/min_threshold, worst first.
std::vector<size_t> PickLessonPairs(const std::vector<double>& speedups, size_t top_k, double max_threshold,
                                    double min_threshold);

/// Indices of the best `width` distinct candidates by latency, among those
/// that are ok; `hashes` identify duplicates (the first occurrence counts).
std::vector<size_t> PickBeam(const std::vector<Sample>& candidates, const std::vector<std::string>& hashes,
                             size_t width);

}  // namespace accelopt::search
