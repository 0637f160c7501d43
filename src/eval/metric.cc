#include "eval/metric.h"

namespace accelopt::eval {

double CostOf(double figure, const suite::MetricSpec& metric) { return metric.higher_is_better ? 1 / figure : figure; }

double FigureOf(double cost, const suite::MetricSpec& metric) { return metric.higher_is_better ? 1 / cost : cost; }

MetricFigures FiguresOf(const LatencyStats& costs, const suite::MetricSpec& metric, int runs) {
  MetricFigures m{metric.name, metric.unit, metric.higher_is_better};
  m.median = FigureOf(costs.median_s, metric);
  m.best = FigureOf(costs.min_s, metric);
  m.worst = FigureOf(costs.max_s, metric);
  m.runs = runs;
  return m;
}

}  // namespace accelopt::eval
