// The run's data and page as `serve` shows them. Until the report page
// (report_page.h) is built in, a run's page is a stand-in that points at the
// run's JSON.

#include "report/serve.h"

namespace accelopt::report {

RunPages ReportPages() {
  RunPages pages;
  pages.data = [](store::Store& store, int64_t run_id) -> Result<Json> {
    auto run = store.GetRun(run_id);
    if (!run) return run.error();
    if (!*run) return Error{"no run " + std::to_string(run_id)};
    const store::RunInfo& r = **run;
    return Json{{"run", {{"id", r.id}, {"created_at", r.created_at}, {"status", r.status}}}, {"summary", r.summary}};
  };
  pages.page = [](const Json& data, const std::string& live_api_url) {
    (void)data;
    // The URL is ours ("/api/runs/ID"): digits and slashes only.
    return "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>accelopt run</title></head>"
           "<body><p>The run's data: <a href=\"" +
           live_api_url + "\">" + live_api_url + "</a></p></body></html>\n";
  };
  return pages;
}

}  // namespace accelopt::report
