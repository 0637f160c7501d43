#include "report/report_page.h"

#include "report/web_assets.h"

namespace accelopt::report {
namespace {

// The page reaches nothing but, when live, its own origin: a report that
// opened a connection anywhere would not be the offline document it claims.
std::string ContentPolicy(bool live) {
  return std::string("default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:; ") +
         "connect-src " + (live ? "'self'" : "'none'");
}

}  // namespace

std::string ScriptSafeJson(const Json& value) {
  const std::string text = DumpJson(value);
  std::string out;
  out.reserve(text.size() + text.size() / 16);
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    // Outside strings JSON holds none of these, so every one is inside a string, where an escape means the same.
    if (c == '<') {
      out += "\\u003c";
    } else if (c == '>') {
      out += "\\u003e";
    } else if (c == '&') {
      out += "\\u0026";
    } else if (c == '\xE2' && i + 2 < text.size() && text[i + 1] == '\x80' &&
               (text[i + 2] == '\xA8' || text[i + 2] == '\xA9')) {
      out += text[i + 2] == '\xA8' ? "\\u2028" : "\\u2029";
      i += 2;
    } else {
      out += c;
    }
  }
  return out;
}

std::string RenderReportHtml(const Json& data, const ReportPageOptions& options) {
  const bool live = !options.live_api_url.empty();
  const Json page_options = {{"live_api_url", options.live_api_url}, {"refresh_ms", 2000}};
  std::string html;
  html.reserve(sizeof(kEchartsScript) + sizeof(kDiffScript) + sizeof(kPageScript) + 4096);
  html += "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
  html += "<meta http-equiv=\"Content-Security-Policy\" content=\"" + ContentPolicy(live) + "\">\n";
  html += "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n";
  html += "<title>accelopt report</title>\n<style>\n";
  html += kPageStyle;
  html += "</style>\n</head>\n<body>\n";
  html += "<header><h1 id=\"title\">accelopt report</h1><p id=\"status-line\" hidden></p></header>\n";
  html += "<main id=\"report\"></main>\n";
  html += "<script type=\"application/json\" id=\"report-data\">" + ScriptSafeJson(data) + "</script>\n";
  html += "<script type=\"application/json\" id=\"report-options\">" + ScriptSafeJson(page_options) + "</script>\n";
  html += "<script>\n";
  html += kEchartsScript;
  html += "\n</script>\n<script>\n";
  html += kDiffScript;
  html += "\n</script>\n<script>\n";
  html += kPageScript;
  html += "\n</script>\n</body>\n</html>\n";
  return html;
}

}  // namespace accelopt::report
