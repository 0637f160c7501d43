// The run's data and page as `serve` shows them: the report's (report_data.h,
// report_page.h), the page fetching the data again from the server while the
// run goes.

#include "report/report_data.h"
#include "report/report_page.h"
#include "report/serve.h"

namespace accelopt::report {

RunPages ReportPages() {
  RunPages pages;
  pages.data = [](store::Store& store, int64_t run_id) -> Result<Json> {
    Json data = RunReportData(store, run_id);
    // The report's data is {"error": ...} alone when the store could not be read.
    if (data.is_object() && data.size() == 1 && data.contains("error"))
      return Error{data["error"].is_string() ? data["error"].get<std::string>() : DumpJson(data["error"])};
    return data;
  };
  pages.page = [](const Json& data, const std::string& live_api_url) {
    return RenderReportHtml(data, ReportPageOptions{.live_api_url = live_api_url});
  };
  return pages;
}

}  // namespace accelopt::report
