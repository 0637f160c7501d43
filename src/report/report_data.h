#pragma once
/// report: what a person reads instead of the store. RunReportData gathers a
/// run's facts into one JSON document (the single contract between the engine
/// and the report page); RenderReportHtml (report_page.h) turns it into one
/// self-contained HTML file, or, for `accelopt serve`, a page that fetches it
/// again while the run goes on.

#include <cstdint>

#include "core/json_io.h"
#include "store/store.h"

namespace accelopt::report {

/// Version of the document RunReportData makes (its field "schema").
inline constexpr int kReportSchema = 1;

/// Everything the report shows of run `run_id`, read from `store`:
///   run       {id, created_at, status, target, shape, tasks: [names]}
///   hardware  the profile its percentages were scored against, or null
///   tasks     per task: {name, scored, baseline_id, best_id, baseline_percent,
///             best_percent, best_latency_s, speedup {estimate, low, high, steps},
///             anchors [{name, percent_of_peak}], iterations [{iteration, best_id,
///             best_percent, best_latency_s, step {a comparison as the store keeps
///             it (ToJson(PairedSpeedup)), parent, parent_percent} or null}], candidates [{id, iteration,
///             parent, status, percent_of_peak, latency_s, disturbed, other_load,
///             duplicate_of, plan_title, plan, code, message, log, vs_parent, best_lineage}]}
///   lessons   [{id, title, text, task, speedup, low, high, slow, fast, memory, created_at}]
///   llm       {calls [{at_s, started_at, role, task, model, input_tokens,
///             output_tokens, cost_usd, failed}], roles [{role, calls, input_tokens,
///             output_tokens, cost_usd}], totals {...}}
///   disturbed [{task, candidate, kind ("evaluation" or "comparison"), other_load, series}]
///   suite     {tasks, scored_tasks, geomean_percent, baseline_geomean_percent,
///             geomean_speedup (of the best over the baseline, step by step)} when
///             the run has more than one task, else null
/// Numbers that were not measured are null. Text is copied as stored (it may
/// hold HTML or invalid UTF-8: the page escapes it). Blocks on the store; safe
/// to call while the run writes to it. A store error or an unknown run comes
/// back as {"error": "message naming what and where"} and nothing else.
nlohmann::json RunReportData(store::Store& store, int64_t run_id);

}  // namespace accelopt::report
