// accelopt report RUN: the run as one self-contained HTML page (src/report/).

#include <fmt/core.h>

#include "cli/common.h"
#include "core/json_io.h"
#include "report/report_data.h"
#include "report/report_page.h"

namespace accelopt::cli {

void RegisterReport(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "report",
      "write a run as one HTML page that opens offline: per task the best % of peak per iteration and every "
      "candidate, the lineage with each candidate's code and diff, lessons, tokens and cost, the hardware profile");
  static std::string db = "accelopt.db", output;
  static int64_t run = 0;
  cmd->add_option("RUN", run, "run id (see `accelopt runs`)")->required();
  cmd->add_option("--store,--db", db, kDbHelp);
  cmd->add_option("-o,--output", output, "the HTML file to write (default: report-RUN.html)");
  cmd->callback([] {
    auto store = OpenStoreOrExit(db, /*create=*/false);
    RunOrExit(*store, run, db);  // names the store when the run is not in it
    const Json data = report::RunReportData(*store, run);
    if (data.contains("error")) throw Exit{kExitError, data["error"].get<std::string>()};
    const std::string path = output.empty() ? fmt::format("report-{}.html", run) : output;
    if (auto s = WriteFile(path, report::RenderReportHtml(data, {})); !s)
      throw Exit{kExitError, "cannot write the report: " + s.error().message};
    int candidates = 0;
    for (const Json& t : data["tasks"]) candidates += static_cast<int>(t["candidates"].size());
    fmt::print("{}: run {}, {} task(s), {} candidate(s); open it in a browser\n", path, run, data["tasks"].size(),
               candidates);
  });
}

}  // namespace accelopt::cli
