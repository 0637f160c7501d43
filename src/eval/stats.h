#pragma once
/// Latency statistics over a series of timed calls.

#include <vector>

#include "core/profile.h"

namespace accelopt::eval {

/// Statistics of one series. Requires a non-empty series.
LatencyStats Summarize(const std::vector<double>& samples_s);

/// Summarizes each series and keeps the one with the smallest spread.
/// Requires at least one non-empty series.
LatencyStats MostStable(const std::vector<std::vector<double>>& series);

/// The speedup of B over A from calls timed in pairs (A then B, or B then A,
/// back to back under the same conditions): the median of the pairs' ratios
/// a/b, with a distribution-free confidence interval for that median (order
/// statistics of the ratios, from the binomial distribution of the sign
/// test): the narrowest of at least 95% when there are 6 pairs or more, else
/// the whole range, whose coverage (0.9375 for 5 pairs) is less. The coverage
/// the interval gives is kept in `coverage`, to be printed instead of "95%".
/// Pairing cancels what drifts between pairs (the machine's clock, its load):
/// only what differs within a pair remains.

/// Requires a.size() == b.size() >= 1 and positive times.
PairedSpeedup PairedComparison(const std::vector<double>& a_s, const std::vector<double>& b_s);

/// Linear-interpolated quantile q in [0, 1]. Requires non-empty input.
double Quantile(std::vector<double> values, double q);

}  // namespace accelopt::eval
