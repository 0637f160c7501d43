#pragma once
/// The report page: one HTML file that holds its chart and diff libraries,
/// its own script and style, and the data of RunReportData, and that opens
/// offline. Safe by construction: the data goes in as JSON inside a
/// <script type="application/json"> block with <, >, &, U+2028 and U+2029
/// escaped and invalid UTF-8 replaced, and the page puts text into the
/// document only as text (textContent), so a kernel holding "</script>" or
/// HTML is shown, never run.

#include <string>

#include "core/json_io.h"

namespace accelopt::report {

struct ReportPageOptions {
  /// Empty: a static report. Otherwise a URL (relative to the page, or
  /// absolute on its own origin) answering RunReportData's JSON: the page
  /// fetches it every 2 seconds, redraws, and shows the status line of its
  /// "progress" object ({iteration, candidates_evaluated, waiting_for,
  /// elapsed_s, eta_s}, any of them) when present.
  std::string live_api_url;
};

/// The whole page for `data` (RunReportData's document, or {"error": ...},
/// which the page shows as such). Never fails; pure.
std::string RenderReportHtml(const Json& data, const ReportPageOptions& options);

/// `value` as JSON text that may stand inside an HTML <script> element:
/// <, >, & and U+2028/U+2029 as \u escapes, invalid UTF-8 as U+FFFD.
std::string ScriptSafeJson(const Json& value);

}  // namespace accelopt::report
