#pragma once
/// Latency statistics over a series of timed calls.

#include <vector>

namespace accelopt::eval {

struct LatencyStats {
  double median_s = 0, min_s = 0, max_s = 0, mean_s = 0;
  double spread = 0;  ///< interquartile range / median
  int calls = 0;      ///< calls in the kept series
  int series = 0;     ///< series measured (the most stable one is kept)
};

/// Statistics of one series. Requires a non-empty series.
LatencyStats Summarize(const std::vector<double>& samples_s);

/// Summarizes each series and keeps the one with the smallest spread.
/// Requires at least one non-empty series.
LatencyStats MostStable(const std::vector<std::vector<double>>& series);

/// Linear-interpolated quantile q in [0, 1]. Requires non-empty input.
double Quantile(std::vector<double> values, double q);

}  // namespace accelopt::eval
