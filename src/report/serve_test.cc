// `serve`'s routes over a real socket: what each answers, what it refuses
// (methods, paths outside its routes however they are spelled), and that
// nothing a stored kernel or run holds reaches the index or the JSON unescaped.
// The run's page is a stand-in here (RunPages): these tests do not depend on it.

#include "report/serve.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include "testing/httplib.h"
#include "testing/temp_dir.h"

namespace accelopt::report {
namespace {

bool Contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

constexpr const char* kHostile = "</script><script>alert(1)</script>";

// A page that shows what it was given, as the report page would, so the test sees the route's data.
RunPages StandInPages() {
  RunPages pages;
  pages.data = [](store::Store& store, int64_t id) -> Result<Json> {
    auto run = store.GetRun(id);
    if (!run) return run.error();
    auto candidates = store.ListCandidates(id, "");
    if (!candidates) return candidates.error();
    Json list = Json::array();
    for (const auto& c : *candidates) list.push_back({{"id", c.candidate.id}, {"code", c.candidate.code}});
    return Json{{"run", {{"id", id}}}, {"candidates", list}};
  };
  pages.page = [](const Json&, const std::string& live) {
    return "<html>stand-in page, live from " + live + "</html>";
  };
  return pages;
}

class ServeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto writer = store::OpenSqliteStore({.path = path_});
    ASSERT_TRUE(writer) << writer.error().message;
    writer_ = std::move(*writer);
    // A run whose task name, kernel and progress hold HTML and bytes that are not UTF-8.
    run_ = *writer_->CreateRun({{"tasks", {std::string("silu") + kHostile, std::string("bad\xff\xfe")}}});
    AddHostileCandidate();
    ASSERT_TRUE(writer_->PutRunProgress(run_, {{"iteration", 1}, {"waiting_for", kHostile}}).ok());
    auto reader = store::OpenStoreReadOnly(path_);
    ASSERT_TRUE(reader) << reader.error().message;
    reader_ = std::move(*reader);
    ServeOptions options;
    options.port = 0;
    options.pages = StandInPages();
    auto server = Server::Start(*reader_, options);
    ASSERT_TRUE(server) << server.error().message;
    server_ = std::move(*server);
    client_ = std::make_unique<httplib::Client>("127.0.0.1", server_->port());
  }

  void AddHostileCandidate() {
    Profile p;
    p.task = "silu";
    p.percent_of_peak = 12.5;
    store::StoredCandidate c{.run_id = run_, .task = "silu"};
    c.candidate.code = std::string("// ") + kHostile + "\n// \xc3\x28 \xed\xa0\x80 invalid UTF-8\nvoid k() {}";
    c.candidate.plan = kHostile;
    c.candidate.hash = "h";
    c.candidate.profile = p;
    ASSERT_TRUE(writer_->AddCandidate(c).ok());
  }

  // The raw bytes of an answer to a request line written by hand (httplib's
  // client would normalize what these tests must send as it is).
  std::string Raw(const std::string& request) {
    const int fd = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<uint16_t>(server_->port()));
    inet_pton(AF_INET, "127.0.0.1", &addr.sin_addr);
    EXPECT_EQ(connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
    EXPECT_EQ(write(fd, request.data(), request.size()), static_cast<ssize_t>(request.size()));
    std::string out;
    char buf[4096];
    ssize_t n;
    while ((n = read(fd, buf, sizeof buf)) > 0) out.append(buf, static_cast<size_t>(n));
    close(fd);
    return out;
  }
  int RawStatus(const std::string& method, const std::string& target) {
    const std::string out = Raw(method + " " + target + " HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n");
    return out.size() > 12 ? std::atoi(out.substr(9, 3).c_str()) : -1;
  }

  testing::TempDir dir_;
  std::string path_ = dir_.path() + "/accelopt.db";
  std::unique_ptr<store::Store> writer_, reader_;
  int64_t run_ = 0;
  std::unique_ptr<Server> server_;
  std::unique_ptr<httplib::Client> client_;
};

TEST_F(ServeTest, EachRouteAnswersWithItsStatusAndType) {
  auto index = client_->Get("/");
  ASSERT_TRUE(index);
  EXPECT_EQ(index->status, 200);
  EXPECT_EQ(index->get_header_value("Content-Type"), "text/html; charset=utf-8");
  EXPECT_TRUE(Contains(index->body, "<a href=\"/runs/1\">1</a>")) << index->body;
  EXPECT_TRUE(Contains(index->body, "running"));
  EXPECT_TRUE(Contains(index->get_header_value("Content-Security-Policy"), "default-src 'none'"));
  EXPECT_FALSE(Contains(index->get_header_value("Content-Security-Policy"), "script-src"))
      << "the index runs no script";

  auto runs = client_->Get("/api/runs");
  ASSERT_TRUE(runs);
  EXPECT_EQ(runs->status, 200);
  EXPECT_EQ(runs->get_header_value("Content-Type"), "application/json; charset=utf-8");
  Json list = Json::parse(runs->body);
  ASSERT_EQ(list.size(), 1u);
  EXPECT_EQ(list[0]["id"], run_);
  EXPECT_EQ(list[0]["status"], "running");

  auto run = client_->Get("/api/runs/1");
  ASSERT_TRUE(run);
  EXPECT_EQ(run->status, 200);
  Json data = Json::parse(run->body);
  EXPECT_EQ(data["candidates"].size(), 1u);
  EXPECT_EQ(data["progress"]["iteration"], 1) << "the run's JSON carries its live progress";

  auto page = client_->Get("/runs/1");
  ASSERT_TRUE(page);
  EXPECT_EQ(page->status, 200);
  EXPECT_EQ(page->body, "<html>stand-in page, live from /api/runs/1</html>");
  EXPECT_TRUE(Contains(page->get_header_value("Content-Security-Policy"), "script-src 'unsafe-inline'"));

  auto progress = client_->Get("/api/runs/1/progress");
  ASSERT_TRUE(progress);
  EXPECT_EQ(progress->status, 200);
  Json p = Json::parse(progress->body);
  EXPECT_EQ(p["status"], "running");
  EXPECT_EQ(p["progress"]["waiting_for"], kHostile);

  auto head = client_->Head("/api/runs");
  ASSERT_TRUE(head);
  EXPECT_EQ(head->status, 200);
  EXPECT_TRUE(head->body.empty());
}

TEST_F(ServeTest, AnUnknownRunIs404SayingSo) {
  for (const char* path : {"/runs/99", "/api/runs/99", "/api/runs/99/progress"}) {
    auto r = client_->Get(path);
    ASSERT_TRUE(r) << path;
    EXPECT_EQ(r->status, 404) << path;
    EXPECT_TRUE(Contains(r->body, "no run 99 in this store")) << path << ": " << r->body;
  }
}

TEST_F(ServeTest, EveryMethodButGetAndHeadIs405AndWritesNothing) {
  for (const char* method : {"POST", "PUT", "DELETE", "PATCH", "OPTIONS", "TRACE", "CONNECT"}) {
    for (const char* path : {"/", "/api/runs", "/api/runs/1", "/api/runs/1/progress", "/nosuch"}) {
      EXPECT_EQ(RawStatus(method, path), 405) << method << " " << path;
    }
  }
  const std::string answer = Raw("DELETE /api/runs/1 HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n");
  EXPECT_TRUE(Contains(answer, "Allow: GET, HEAD")) << answer;
  auto runs = writer_->ListRuns();
  ASSERT_TRUE(runs.ok());
  EXPECT_EQ(runs->size(), 1u);
  EXPECT_EQ((**writer_->GetRunProgress(run_))["iteration"], 1);
}

TEST_F(ServeTest, PathsOutsideTheRoutesAre404HoweverTheyAreSpelled) {
  const std::string long_path = "/api/runs/" + std::string(5000, '1');
  for (const std::string& path : std::vector<std::string>{"/..",
                                                          "/../etc/passwd",
                                                          "/runs/../../etc/passwd",
                                                          "/%2e%2e/%2e%2e/etc/passwd",
                                                          "/%2E%2E%2Fetc%2Fpasswd",
                                                          "/runs/%2e%2e",
                                                          "/api/runs/1/../../../etc/passwd",
                                                          "/api/runs/..%2f..%2fetc%2fpasswd",
                                                          "//etc/passwd",
                                                          "/etc/passwd",
                                                          "/accelopt.db",
                                                          "/index.html",
                                                          "/runs",
                                                          "/runs/",
                                                          "/runs/1/",
                                                          "/runs/0",
                                                          "/runs/-1",
                                                          "/runs/1x",
                                                          "/api/runs/",
                                                          "/api/runs/1/progress/",
                                                          "/api/runs/1/candidates",
                                                          "/api/runs/99999999999999999999",
                                                          "/runs/1%00",
                                                          "/%00",
                                                          "/api",
                                                          "/static/x.js",
                                                          long_path}) {
    const int status = RawStatus("GET", path);
    EXPECT_TRUE(status == 404 || status == 400 || status == 414) << path << " answered " << status;
    EXPECT_NE(status, 200) << path;
  }
  // An absolute URI as the target, and a target that is no path at all.
  EXPECT_NE(RawStatus("GET", "http://127.0.0.1/etc/passwd"), 200);
  EXPECT_NE(RawStatus("GET", "*"), 200);
  EXPECT_NE(RawStatus("GET", "file:///etc/passwd"), 200);
}

TEST_F(ServeTest, ARequestForAnotherHostIsRefusedOnLoopback) {
  // A page of another site whose name was pointed at 127.0.0.1 (DNS rebinding).
  const std::string answer = Raw("GET /api/runs HTTP/1.1\r\nHost: evil.example:80\r\nConnection: close\r\n\r\n");
  EXPECT_EQ(answer.substr(9, 3), "403") << answer;
  EXPECT_EQ(RawStatus("GET", "/api/runs"), 200);
  const std::string localhost = Raw("GET /api/runs HTTP/1.1\r\nHost: localhost:1\r\nConnection: close\r\n\r\n");
  EXPECT_EQ(localhost.substr(9, 3), "200") << localhost;
}

TEST_F(ServeTest, NothingAStoredKernelHoldsIsServedUnescaped) {
  auto index = client_->Get("/");
  ASSERT_TRUE(index);
  EXPECT_FALSE(Contains(index->body, "<script")) << index->body;
  EXPECT_TRUE(Contains(index->body, "silu&lt;/script&gt;&lt;script&gt;alert(1)&lt;/script&gt;")) << index->body;
  EXPECT_TRUE(Contains(index->body, "bad\xEF\xBF\xBD\xEF\xBF\xBD")) << "invalid UTF-8 shown replaced";
  EXPECT_FALSE(Contains(index->body, "\xff"));

  for (const char* path : {"/api/runs", "/api/runs/1", "/api/runs/1/progress"}) {
    auto r = client_->Get(path);
    ASSERT_TRUE(r) << path;
    ASSERT_EQ(r->status, 200) << path;
    // Valid JSON whatever the bytes stored; served as JSON (nosniff), never as a page.
    Json parsed = Json::parse(r->body, nullptr, /*allow_exceptions=*/false);
    EXPECT_FALSE(parsed.is_discarded()) << path << ": " << r->body;
    EXPECT_EQ(r->get_header_value("X-Content-Type-Options"), "nosniff");
    EXPECT_FALSE(Contains(r->body, "\xff")) << path;
    EXPECT_FALSE(Contains(r->body, "\xed\xa0\x80")) << path << ": a surrogate's bytes are not UTF-8";
  }
  Json data = Json::parse(client_->Get("/api/runs/1")->body);
  const std::string code = data["candidates"][0]["code"];
  EXPECT_TRUE(Contains(code, kHostile)) << "the kernel comes back as data, in full";
}

TEST(ServeStart, APortInUseIsAClearError) {
  testing::TempDir dir;
  auto store = store::OpenSqliteStore({.path = dir.path() + "/accelopt.db"});
  ASSERT_TRUE(store);
  ServeOptions options;
  options.port = 0;
  auto first = Server::Start(**store, options);
  ASSERT_TRUE(first) << first.error().message;
  options.port = (*first)->port();
  auto second = Server::Start(**store, options);
  ASSERT_FALSE(second);
  EXPECT_TRUE(Contains(second.error().message, "cannot serve on 127.0.0.1:" + std::to_string(options.port)))
      << second.error().message;
  EXPECT_EQ((*first)->url(), "http://127.0.0.1:" + std::to_string(options.port) + "/");
}

}  // namespace
}  // namespace accelopt::report
