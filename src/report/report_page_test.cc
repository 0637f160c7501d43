#include "report/report_page.h"

#include <gtest/gtest.h>

namespace accelopt::report {
namespace {

size_t Count(const std::string& text, const std::string& part) {
  size_t n = 0;
  for (size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++n;
  return n;
}

TEST(ScriptSafeJson, EscapesWhatCouldEndOrConfuseAScriptElement) {
  const Json value = {{"code", "</script><script>alert(1)</script> a && b > c <!-- \xE2\x80\xA8\xE2\x80\xA9 ok"}};
  const std::string text = ScriptSafeJson(value);
  EXPECT_EQ(text.find('<'), std::string::npos) << text;
  EXPECT_EQ(text.find('>'), std::string::npos) << text;
  EXPECT_EQ(text.find('&'), std::string::npos) << text;
  EXPECT_EQ(text.find("\xE2\x80\xA8"), std::string::npos) << text;
  EXPECT_NE(text.find("\\u003c/script\\u003e"), std::string::npos) << text;
  EXPECT_NE(text.find("\\u2028\\u2029"), std::string::npos) << text;
  // The same value when read back.
  EXPECT_EQ(Json::parse(text), value);
}

TEST(ScriptSafeJson, ReplacesInvalidUtf8) {
  const std::string text = ScriptSafeJson(Json{{"log", std::string("a\xff\xfe" "b")}});
  const Json back = Json::parse(text);
  EXPECT_EQ(back["log"], "a\xEF\xBF\xBD\xEF\xBF\xBD" "b");
}

TEST(RenderReportHtml, OneSelfContainedPageWithTheDataAsJson) {
  const Json data = {{"error", "</script><script>alert(1)</script>"}};
  const std::string html = RenderReportHtml(data, {});
  EXPECT_EQ(html.rfind("<!DOCTYPE html>", 0), 0u);
  // The data cannot close its element: the only "</script>" are the page's own.
  EXPECT_EQ(Count(html, "<script"), 5u);
  EXPECT_EQ(Count(html, "</script>"), 5u);
  EXPECT_EQ(html.find("alert(1)</script>"), std::string::npos);
  EXPECT_NE(html.find("\"live_api_url\":\"\""), std::string::npos);
  // Nothing is loaded from anywhere, and a static report connects nowhere.
  EXPECT_EQ(html.find("<script src"), std::string::npos);
  EXPECT_EQ(html.find("<link"), std::string::npos);
  EXPECT_NE(html.find("connect-src 'none'"), std::string::npos);
  // The libraries are in the page.
  EXPECT_NE(html.find("echarts"), std::string::npos);
  EXPECT_NE(html.find("createTwoFilesPatch"), std::string::npos);
}

TEST(RenderReportHtml, ALivePageNamesItsUrlAsDataAndMayConnectToItsOrigin) {
  const std::string html = RenderReportHtml(Json::object(), {.live_api_url = "/api/runs/3/report?x=<1>"});
  EXPECT_NE(html.find("\"live_api_url\":\"/api/runs/3/report?x=\\u003c1\\u003e\""), std::string::npos);
  EXPECT_NE(html.find("connect-src 'self'"), std::string::npos);
}

}  // namespace
}  // namespace accelopt::report
