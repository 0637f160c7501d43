#pragma once
/// A plain metric with a direction (a code task's benchmark figure, or an
/// external evaluator's) as the engine compares it: by its cost, where lower is
/// better, so that speedups, decisions and statistics are the same as for latencies.

#include <string>
#include <vector>

#include "core/profile.h"
#include "eval/stats.h"
#include "suite/task.h"

namespace accelopt::eval {

/// The figure itself when lower is better, its reciprocal when higher is.
double CostOf(double figure, const suite::MetricSpec& metric);
/// The figure a cost stands for.
double FigureOf(double cost, const suite::MetricSpec& metric);

/// A profile's metric, from the statistics of its costs over `runs` measurements.
MetricFigures FiguresOf(const LatencyStats& costs, const suite::MetricSpec& metric, int runs);

}  // namespace accelopt::eval
