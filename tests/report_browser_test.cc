// `accelopt report` over a recorded demo run, opened in a real headless
// Chromium (Debian's chromium, driven by playwright-core from web/test/):
// no console error and no dialog; every chart drawn with as many points as
// the store holds; the lineage holds the run's candidates; a mouse click on a
// node shows its diff against its parent; a kernel whose source holds
// "</script><script>alert(1)</script>" and invalid UTF-8 shows as text.
// Screenshots are kept in test-artifacts/report-browser/ beside the test binary.
// Skipped, saying so, only where there is no Chromium.

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>

#include "core/json_io.h"
#include "core/paths.h"
#include "report/report_data.h"
#include "store/store.h"
#include "testing/run_command.h"
#include "testing/temp_dir.h"

namespace accelopt {
namespace {

namespace fs = std::filesystem;

std::string Quoted(const std::string& s) { return "'" + s + "'"; }

// Adds a child of `parent` whose code and plan are hostile: what the page must show as text.
int64_t AddHostileCandidate(store::Store& store, int64_t run, const std::string& task, const Candidate& parent) {
  Candidate c;
  c.iteration = parent.iteration + 1;
  c.parent_id = parent.id;
  c.plan = "<img src=x onerror=alert(2)> Inline everything";
  c.code = "// </script><script>alert(1)</script>\n" + parent.code + "// bytes that are not UTF-8: \xff\xfe\n";
  c.hash = "hostile";
  c.profile.status = Verdict::kCompileError;
  c.profile.message = "</script><b>does not build</b>";
  c.profile.compile_log = "error: <script>alert(3)</script>\n";
  auto id = store.AddCandidate({run, task, c});
  EXPECT_TRUE(id.ok()) << id.error().message;
  return id.ok() ? *id : 0;
}

TEST(ReportBrowser, DemoRunReportDrawsEveryChartAndShowsHostileSourceAsText) {
  if (!fs::exists(testing::ChromiumPath()))
    GTEST_SKIP() << "no Chromium at " << testing::ChromiumPath()
                 << ": this test opens the report in Debian's chromium (scripts/setup.sh installs it)";
  const std::string web = testing::SourceDir() + "/web";
  ASSERT_TRUE(fs::exists(web + "/node_modules/playwright-core"))
      << web << "/node_modules lacks playwright-core: run scripts/setup.sh (npm ci in web/)";
  testing::TempDir dir;
  const std::string db = dir.path() + "/accelopt.db";
  testing::CommandRun optimize =
      testing::Accelopt("optimize --demo --anchors --shape test --suite " + testing::SourceDir() + "/suite --db " + db);
  ASSERT_EQ(optimize.exit_code, 0) << optimize.out;

  auto opened = store::OpenSqliteStore({.path = db, .create = false});
  ASSERT_TRUE(opened.ok()) << opened.error().message;
  store::Store& store = **opened;
  const int64_t run = 1;
  Json data = report::RunReportData(store, run);
  ASSERT_FALSE(data.contains("error")) << data;
  ASSERT_EQ(data["tasks"].size(), 3u) << "the demo optimizes silu, matmul and rmsnorm_matmul";
  // --anchors: the two tasks with a vendor.cpp have their OpenBLAS anchor measured and kept in the summary.
  auto info = store.GetRun(run);
  ASSERT_TRUE(info.ok() && *info);
  for (const Json& t : (*info)->summary) {
    const bool has_vendor = fs::exists(testing::SourceDir() + "/suite/" + t["task"].get<std::string>() + "/vendor.cpp");
    ASSERT_EQ(t.contains("anchors"), has_vendor) << t;
    if (!has_vendor) continue;
    ASSERT_EQ(t["anchors"].size(), 1u) << t;
    EXPECT_EQ(t["anchors"][0]["name"], "openblas");
    EXPECT_EQ(t["anchors"][0]["status"], "ok") << t["anchors"][0];
    EXPECT_GT(t["anchors"][0]["median_s"].get<double>(), 0);
  }
  const std::string hostile_task = data["tasks"][0]["name"];
  auto best = store.GetCandidate(data["tasks"][0]["best_id"].get<int64_t>());
  ASSERT_TRUE(best.ok() && *best);
  const int64_t hostile = AddHostileCandidate(store, run, hostile_task, (*best)->candidate);

  const std::string report = dir.path() + "/report.html";
  testing::CommandRun made = testing::Accelopt("report 1 --store " + db + " -o " + report);
  ASSERT_EQ(made.exit_code, 0) << made.out;
  EXPECT_NE(made.out.find(report), std::string::npos) << made.out;

  // What the store holds, to count the page's points against; and per task a
  // candidate to click that is not the one shown first (the best).
  data = report::RunReportData(store, run);
  std::string clicks = " 0:" + std::to_string(hostile);
  std::map<int, int64_t> clicked;
  clicked[0] = hostile;
  for (size_t i = 1; i < data["tasks"].size(); ++i)
    for (const Json& c : data["tasks"][i]["candidates"])
      if (c["id"] != data["tasks"][i]["best_id"] && !c["parent"].is_null()) {
        clicked[static_cast<int>(i)] = c["id"].get<int64_t>();
        clicks += " " + std::to_string(i) + ":" + std::to_string(clicked[static_cast<int>(i)]);
        break;
      }

  const std::string artifacts = ExecutableDir() + "/test-artifacts/report-browser";
  fs::create_directories(artifacts);
  testing::CommandRun browser = testing::RunShell("(cd " + Quoted(web) + " && ACCELOPT_CHROMIUM=" + testing::ChromiumPath() +
                                                  " node test/check_report.mjs " + Quoted(report) + " " +
                                                  Quoted(artifacts) + clicks + " 2>" + Quoted(dir.path() + "/node.err") + ")");
  auto node_err = ReadFile(dir.path() + "/node.err");
  ASSERT_EQ(browser.exit_code, 0) << browser.out << (node_err ? *node_err : "");
  const Json seen = Json::parse(browser.out.substr(browser.out.rfind("\n{") + 1), nullptr, false);
  ASSERT_TRUE(seen.is_object()) << browser.out;
  std::printf("screenshots: %s\n", artifacts.c_str());

  for (const char* list : {"console_errors", "page_errors", "dialogs", "requests"}) {
    EXPECT_TRUE(seen[list].empty()) << list << ": " << seen[list];
    EXPECT_TRUE(seen["after_clicks"][list].empty()) << list << " after the clicks: " << seen["after_clicks"][list];
  }
  // The data added not one element: the page's own five scripts, no image.
  EXPECT_EQ(seen["page"]["scripts"], 5);
  EXPECT_EQ(seen["page"]["images"], 0);

  const Json& charts = seen["charts"];
  for (size_t i = 0; i < data["tasks"].size(); ++i) {
    const Json& task = data["tasks"][i];
    const std::string name = task["name"];
    auto stored = store.ListCandidates(run, name);
    ASSERT_TRUE(stored.ok());
    // Every candidate as one point, whatever its status.
    const Json& progress = charts["progress-" + std::to_string(i)];
    ASSERT_TRUE(progress.is_object()) << name << ": no progress chart";
    size_t scattered = 0, best_points = 0, lines = 0;
    for (const Json& s : progress["series"]) {
      if (s["type"] == "scatter") scattered += s["points"].get<size_t>();
      if (s["name"] == "best") {
        best_points = s["points"];
        lines = s["mark_lines"];
      }
    }
    EXPECT_EQ(scattered, stored->size()) << name;
    int last_iteration = 0;
    for (const auto& c : *stored) last_iteration = std::max(last_iteration, c.candidate.iteration);
    EXPECT_EQ(best_points, static_cast<size_t>(last_iteration + 1)) << name << ": one best per iteration";
    // The baseline, and for a scored run the roofline bound and each anchor.
    EXPECT_EQ(lines, task["scored"].get<bool>() ? 2u + task["anchors"].size() : 1u) << name;

    // The lineage: exactly the run's candidates of the task.
    const Json& lineage = charts["lineage-" + std::to_string(i)]["series"][0];
    std::vector<int64_t> ids, expected;
    for (const Json& id : lineage["ids"]) ids.push_back(id.get<int64_t>());
    for (const auto& c : *stored) expected.push_back(c.candidate.id);
    std::sort(ids.begin(), ids.end());
    EXPECT_EQ(ids, expected) << name;
    EXPECT_EQ(lineage["links"].get<size_t>(), stored->size() - 1) << name << ": one edge per candidate but the baseline";
  }
  // Tokens and cost: one point per call of each role.
  auto calls = store.ListLlmCalls(run);
  ASSERT_TRUE(calls.ok());
  std::map<std::string, size_t> per_role;
  for (const Json& c : *calls) ++per_role[c.value("agent_role", c.value("role", std::string("?")))];
  for (const char* chart : {"llm-tokens", "llm-cost"}) {
    std::map<std::string, size_t> drawn;
    for (const Json& s : charts[chart]["series"]) drawn[s["name"]] = s["points"];
    EXPECT_EQ(drawn, per_role) << chart;
  }
  // The suite: a bar per task for the baselines and for the bests.
  ASSERT_TRUE(charts["suite-bars"].is_object());
  for (const Json& s : charts["suite-bars"]["series"]) EXPECT_EQ(s["points"], 3) << s;

  // Each click showed that candidate and its diff against its parent.
  ASSERT_EQ(seen["clicks"].size(), clicked.size());
  for (const Json& click : seen["clicks"]) {
    const int64_t id = click["id"];
    ASSERT_TRUE(click["found"].get<bool>()) << "candidate " << id << " is not a node of its lineage";
    EXPECT_EQ(click["candidate"], std::to_string(id));
    EXPECT_NE(click["heading"].get<std::string>().find("Candidate " + std::to_string(id)), std::string::npos) << click;
    auto c = store.GetCandidate(id);
    ASSERT_TRUE(c.ok() && *c);
    const std::string diff = click["diff"];
    EXPECT_NE(diff.find("+++ candidate " + std::to_string(id)), std::string::npos) << diff;
    EXPECT_NE(diff.find("--- candidate " + std::to_string((*c)->candidate.parent_id)), std::string::npos) << diff;
    if ((*c)->candidate.code != (*store.GetCandidate((*c)->candidate.parent_id))->candidate.code) {
      EXPECT_GT(click["diff_lines"].get<int>(), 0) << diff;
    }
  }
  // The hostile source as text: the markup itself, and the invalid bytes as U+FFFD.
  const Json& shown = seen["clicks"][0];
  EXPECT_NE(shown["source"].get<std::string>().find("// </script><script>alert(1)</script>\n"), std::string::npos);
  EXPECT_NE(shown["source"].get<std::string>().find("not UTF-8: \xEF\xBF\xBD\xEF\xBF\xBD"), std::string::npos)
      << shown["source"];
  EXPECT_NE(shown["diff"].get<std::string>().find("+// </script><script>alert(1)</script>"), std::string::npos);
}

}  // namespace
}  // namespace accelopt
