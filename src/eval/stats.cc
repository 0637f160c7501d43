#include "eval/stats.h"

#include <algorithm>
#include <cmath>
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

PairedSpeedup PairedComparison(const std::vector<double>& a_s, const std::vector<double>& b_s) {
  std::vector<double> ratios;
  for (size_t i = 0; i < a_s.size() && i < b_s.size(); ++i) ratios.push_back(a_s[i] / b_s[i]);
  std::sort(ratios.begin(), ratios.end());
  PairedSpeedup out;
  const int n = static_cast<int>(ratios.size());
  out.pairs = n;
  if (n == 0) return out;
  out.speedup = Quantile(ratios, 0.5);
  // The largest k with P(Binomial(n, 1/2) < k) <= 2.5%: the k-th smallest and
  // k-th largest ratios bound the median with at least 95% confidence; the
  // coverage they actually give is computed and kept beside them.
  double below = 0;                // P(X <= j - 1), accumulated
  double term = std::pow(0.5, n);  // P(X = 0)
  int k = 0;
  for (int j = 0; j < n; ++j) {
    if (below + term > 0.025) break;
    below += term;
    term *= static_cast<double>(n - j) / (j + 1);
    k = j + 1;
  }
  // Too few pairs for 95% (five or fewer): the whole range, the 1st and n-th.
  const int order = std::max(k, 1);
  out.ci_low = ratios[static_cast<size_t>(order - 1)];
  out.ci_high = ratios[static_cast<size_t>(n - order)];
  // The median lies outside [X(order), X(n+1-order)] when fewer than `order`
  // ratios fall on one side of it: P(Binomial(n, 1/2) <= order - 1), twice.
  double outside = 0, p = std::pow(0.5, n);
  for (int j = 0; j < order; ++j) {
    outside += p;
    p *= static_cast<double>(n - j) / (j + 1);
  }
  out.coverage = std::max(0.0, 1 - 2 * outside);
  return out;
}

}  // namespace accelopt::eval
