#include "eval/stats.h"

#include <algorithm>
#include <numeric>

#include "core/check.h"

namespace accelopt::eval {

double Quantile(std::vector<double> values, double q) {
  ACCELOPT_CHECK(!values.empty());
  std::sort(values.begin(), values.end());
  double pos = q * static_cast<double>(values.size() - 1);
  size_t lo = static_cast<size_t>(pos);
  size_t hi = std::min(lo + 1, values.size() - 1);
  return values[lo] + (values[hi] - values[lo]) * (pos - static_cast<double>(lo));
}

LatencyStats Summarize(const std::vector<double>& samples) {
  ACCELOPT_CHECK(!samples.empty());
  LatencyStats s;
  s.median_s = Quantile(samples, 0.5);
  s.min_s = *std::min_element(samples.begin(), samples.end());
  s.max_s = *std::max_element(samples.begin(), samples.end());
  s.mean_s = std::accumulate(samples.begin(), samples.end(), 0.0) / static_cast<double>(samples.size());
  s.spread = s.median_s > 0 ? (Quantile(samples, 0.75) - Quantile(samples, 0.25)) / s.median_s : 0;
  s.calls = static_cast<int>(samples.size());
  s.series = 1;
  return s;
}

LatencyStats MostStable(const std::vector<std::vector<double>>& series) {
  ACCELOPT_CHECK(!series.empty());
  LatencyStats best = Summarize(series.front());
  for (size_t i = 1; i < series.size(); ++i) {
    LatencyStats s = Summarize(series[i]);
    if (s.spread < best.spread) best = s;
  }
  best.series = static_cast<int>(series.size());
  return best;
}

}  // namespace accelopt::eval
