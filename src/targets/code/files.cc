#include "targets/code/files.h"

#include <fmt/core.h>

#include <algorithm>
#include <map>
#include <optional>

#include "core/json_io.h"
#include "core/text.h"

namespace accelopt::code {
namespace fs = std::filesystem;

namespace {

bool Match(const char* g, const char* p) {
  for (; *g; ++g, ++p) {
    if (g[0] == '*' && g[1] == '*') {
      // "**/" is any number of whole folders, "**" anything at all.
      if (g[2] == '/') {
        if (Match(g + 3, p)) return true;
        for (const char* q = p; *q; ++q)
          if (*q == '/' && Match(g + 3, q + 1)) return true;
        return false;
      }
      for (const char* q = p;; ++q) {
        if (Match(g + 2, q)) return true;
        if (!*q) return false;
      }
    }
    if (*g == '*') {
      for (const char* q = p;; ++q) {
        if (Match(g + 1, q)) return true;
        if (!*q || *q == '/') return false;
      }
    }
    if (!*p || (*g == '?' ? *p == '/' : *g != *p)) return false;
  }
  return *p == '\0';
}

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    std::string line = text.substr(start, end - start);
    if (!line.empty() && line.back() == '\r') line.pop_back();
    lines.push_back(std::move(line));
    start = end + 1;
  }
  return lines;
}

// The blanks of a line: a line break is never in one.
constexpr std::string_view kBlanks = " \t";
std::string RightTrim(const std::string& s) { return TrimRight(s, kBlanks); }
std::string LeftTrim(const std::string& s) { return TrimLeft(s, kBlanks); }

// The length of the run of backticks that opens `line` as a fence (at most
// three spaces in), 0 when it does not.
size_t FenceLength(const std::string& line) {
  size_t i = 0;
  while (i < line.size() && i < 3 && line[i] == ' ') ++i;
  size_t n = 0;
  while (i + n < line.size() && line[i + n] == '`') ++n;
  return n >= 3 ? n : 0;
}

// Whether `line` closes a fence opened with `length` backticks.
bool ClosesFence(const std::string& line, size_t length) {
  const std::string t = RightTrim(LeftTrim(line));
  return t.size() >= length && t.find_first_not_of('`') == std::string::npos;
}

// "FILE" or "EDIT" and the path of a header line (markdown marks around it
// allowed: "### FILE: `src/a.cc`"); nothing for any other line.
std::optional<std::pair<std::string, std::string>> Header(const std::string& line) {
  std::string t = LeftTrim(line);
  size_t i = t.find_first_not_of("#*>-_ `");
  if (i == std::string::npos) return std::nullopt;
  t = t.substr(i);
  for (const char* kind : {"FILE:", "EDIT:"}) {
    if (t.rfind(kind, 0) != 0) continue;
    std::string path = RightTrim(LeftTrim(t.substr(5)));
    while (!path.empty() && std::string("*`'\"").find(path.back()) != std::string::npos) path.pop_back();
    size_t start = path.find_first_not_of("*`'\"");
    path = start == std::string::npos ? "" : path.substr(start);
    if (path.rfind("./", 0) == 0) path = path.substr(2);
    return std::pair{std::string(kind, 4), path};
  }
  return std::nullopt;
}

bool IsMarker(const std::string& line, char c, const char* word) {
  const std::string t = RightTrim(LeftTrim(line));
  size_t n = 0;
  while (n < t.size() && t[n] == c) ++n;
  if (n < 5) return false;
  return LeftTrim(t.substr(n)) == word;
}

struct Edit {
  std::vector<std::string> search, replace;
};

struct Change {
  std::string kind;  // "FILE" or "EDIT"
  std::string path;
  std::string text;         // FILE: the whole file
  std::vector<Edit> edits;  // EDIT
};

std::string Join(const std::vector<std::string>& lines, size_t from, size_t to) {
  std::string out;
  for (size_t i = from; i < to; ++i) out += lines[i] + "\n";
  return out;
}

// The SEARCH/REPLACE block whose `<<<<<<< SEARCH` line is lines[at], read no
// further than `end`; `*next` is the line after it. An Error names the line it lacks.
Result<Edit> ReadEdit(const std::vector<std::string>& lines, size_t at, size_t end, size_t* next) {
  Edit edit;
  size_t j = at + 1;
  while (j < end && !IsMarker(lines[j], '=', "")) edit.search.push_back(lines[j++]);
  if (j == end) return Error{"a SEARCH block has no '=======' line"};
  ++j;
  while (j < end && !IsMarker(lines[j], '>', "REPLACE")) edit.replace.push_back(lines[j++]);
  if (j == end) return Error{"a SEARCH block has no '>>>>>>> REPLACE' line"};
  *next = j + 1;
  return edit;
}

// A line that is only a file's path, markdown marks and a colon aside
// ("**src/a.cc**", "### `src/a.cc`:"); "" for any other line.
std::string BarePath(const std::string& line) {
  std::string t = RightTrim(LeftTrim(line));
  size_t b = t.find_first_not_of("#*>_` ");
  if (b == std::string::npos) return "";
  t = t.substr(b);
  while (!t.empty() && std::string("*`:_ ").find(t.back()) != std::string::npos) t.pop_back();
  if (t.empty() || t.size() > 200 || t.find_first_of(" \t\"'") != std::string::npos || t[0] == '-') return "";
  const size_t slash = t.rfind('/');
  const std::string name = slash == std::string::npos ? t : t.substr(slash + 1);
  if (name.find('.') == std::string::npos || name.front() == '.' || name.back() == '.') return "";
  return t.rfind("./", 0) == 0 ? t.substr(2) : t;
}

// The path a fence's info string names ("cpp src/a.cc", "cpp title=\"src/a.cc\""); "" when none.
std::string FencePath(const std::string& line) {
  std::string info = LeftTrim(line);
  info = info.substr(info.find_first_not_of('`') == std::string::npos ? info.size() : info.find_first_not_of('`'));
  std::string token;
  std::vector<std::string> tokens;
  for (char c : info + " ") {
    if (c == ' ' || c == '\t') {
      if (!token.empty()) tokens.push_back(token);
      token.clear();
    } else {
      token += c;
    }
  }
  for (std::string t : tokens) {
    for (const char* key : {"title=", "file=", "filename=", "path="})
      if (t.rfind(key, 0) == 0) t = t.substr(std::string(key).size());
    if (size_t colon = t.find(':'); colon != std::string::npos && t.find('/') != std::string::npos)
      t = t.substr(colon + 1);
    while (!t.empty() && (t.back() == '"' || t.back() == '\'')) t.pop_back();
    while (!t.empty() && (t.front() == '"' || t.front() == '\'')) t.erase(t.begin());
    if (t.find('/') != std::string::npos || (t.find('.') != std::string::npos && t.front() != '.')) return BarePath(t);
  }
  return "";
}

// For an answer without FILE:/EDIT: lines: each fenced block named by the line
// before it ("src/a.cc", in any markdown) or by its info string. A block of
// SEARCH/REPLACE blocks is an edit (an unfinished one is an Error), any other the whole file.
Result<std::vector<Change>> NamedBlocks(const std::vector<std::string>& lines) {
  std::vector<Change> changes;
  std::string previous;  // the last non-blank line before a fence
  for (size_t i = 0; i < lines.size(); ++i) {
    const size_t length = FenceLength(lines[i]);
    if (!length) {
      if (!LeftTrim(lines[i]).empty()) previous = lines[i];
      continue;
    }
    std::string path = FencePath(lines[i]);
    if (path.empty()) path = BarePath(previous);
    const size_t begin = i + 1;
    size_t end = begin;
    while (end < lines.size() && !ClosesFence(lines[end], length)) ++end;
    previous.clear();
    if (end == lines.size()) break;
    i = end;
    if (path.empty()) continue;
    Change change{"FILE", path, Join(lines, begin, end), {}};
    for (size_t k = begin; k < end;) {
      if (!IsMarker(lines[k], '<', "SEARCH")) {
        ++k;
        continue;
      }
      auto edit = ReadEdit(lines, k, end, &k);
      if (!edit) return Error{path + ": " + edit.error().message};
      change.edits.push_back(std::move(*edit));
    }
    if (!change.edits.empty()) change.kind = "EDIT";
    changes.push_back(std::move(change));
  }
  return changes;
}

// The changes an answer (or a document) holds, in order.
Result<std::vector<Change>> ParseChanges(const std::string& text) {
  const std::vector<std::string> lines = Lines(text);
  if (std::none_of(lines.begin(), lines.end(), [](const std::string& l) { return Header(l).has_value(); }))
    return NamedBlocks(lines);
  std::vector<Change> changes;
  size_t i = 0;
  while (i < lines.size()) {
    auto header = Header(lines[i]);
    if (!header) {
      ++i;
      continue;
    }
    Change change{header->first, header->second, "", {}};
    const std::string where = change.kind + ": " + (change.path.empty() ? "(no path)" : change.path);
    if (change.path.empty()) return Error{"a '" + change.kind + ":' line names no file"};
    ++i;
    if (change.kind == "FILE") {
      while (i < lines.size() && !FenceLength(lines[i]) && !Header(lines[i])) ++i;
      if (i == lines.size() || Header(lines[i])) return Error{where + ": no fenced code block with the file follows"};
      const size_t length = FenceLength(lines[i]);
      const size_t begin = ++i;
      while (i < lines.size() && !ClosesFence(lines[i], length)) ++i;
      if (i == lines.size()) return Error{where + ": its code block is not closed"};
      change.text = Join(lines, begin, i);
      ++i;
    } else {
      while (i < lines.size() && !Header(lines[i])) {
        if (!IsMarker(lines[i], '<', "SEARCH")) {
          ++i;
          continue;
        }
        auto edit = ReadEdit(lines, i, lines.size(), &i);
        if (!edit) return Error{where + ": " + edit.error().message};
        change.edits.push_back(std::move(*edit));
      }
      if (change.edits.empty()) return Error{where + ": no <<<<<<< SEARCH / ======= / >>>>>>> REPLACE block follows"};
    }
    changes.push_back(std::move(change));
  }
  return changes;
}

std::string Excerpt(const std::vector<std::string>& lines) {
  for (const auto& l : lines)
    if (!LeftTrim(l).empty()) return "'" + RightTrim(LeftTrim(l)).substr(0, 80) + "'";
  return "(blank)";
}

// Where the search lines occur in `lines`, compared by `same` line by line.
template <typename Same>
std::vector<size_t> Occurrences(const std::vector<std::string>& lines, const std::vector<std::string>& search,
                                Same same) {
  std::vector<size_t> at;
  for (size_t i = 0; i + search.size() <= lines.size(); ++i) {
    bool all = true;
    for (size_t k = 0; k < search.size() && all; ++k) all = same(lines[i + k], search[k]);
    if (all) at.push_back(i);
  }
  return at;
}

std::string Indent(const std::string& line) { return line.substr(0, line.size() - LeftTrim(line).size()); }

// `text` with one edit applied; an Error says why it could not be. The search
// text is matched as it is (trailing blanks aside), else, when that finds
// nothing, with each line's indentation aside too; the replacement is then
// shifted to the file's indentation.
Result<std::string> ApplyEdit(const std::string& text, const Edit& edit) {
  if (std::all_of(edit.search.begin(), edit.search.end(), [](const auto& l) { return LeftTrim(l).empty(); }))
    return Error{"a SEARCH block is empty (to add code, search for the lines it goes beside)"};
  std::vector<std::string> lines = Lines(text);
  const size_t n = edit.search.size();
  std::vector<size_t> at =
      Occurrences(lines, edit.search, [](const auto& a, const auto& b) { return RightTrim(a) == RightTrim(b); });
  std::vector<std::string> replace = edit.replace;
  if (at.empty()) {
    at = Occurrences(lines, edit.search,
                     [](const auto& a, const auto& b) { return RightTrim(LeftTrim(a)) == RightTrim(LeftTrim(b)); });
    if (at.size() == 1) {
      // When the search lines are the file's shifted by one indentation, the
      // replacement is shifted back; otherwise it stays as written.
      size_t first = 0;
      while (LeftTrim(edit.search[first]).empty()) ++first;
      const std::string theirs = Indent(edit.search[first]), ours = Indent(lines[at[0] + first]);
      bool uniform = true;
      for (size_t k = 0; k < n && uniform; ++k) {
        if (LeftTrim(edit.search[k]).empty()) continue;
        const std::string indent = Indent(edit.search[k]);
        uniform = indent.rfind(theirs, 0) == 0 && Indent(lines[at[0] + k]) == ours + indent.substr(theirs.size());
      }
      for (std::string& line : replace)
        if (uniform && !LeftTrim(line).empty() && line.rfind(theirs, 0) == 0) line = ours + line.substr(theirs.size());
    }
  }
  if (at.empty())
    return Error{fmt::format("the SEARCH text ({} line(s), first {}) is not in the file", n, Excerpt(edit.search))};
  if (at.size() > 1)
    return Error{
        fmt::format("the SEARCH text (first {}) occurs {} times in the file; include more lines to make it unique",
                    Excerpt(edit.search), at.size())};
  lines.erase(lines.begin() + at[0], lines.begin() + at[0] + n);
  lines.insert(lines.begin() + at[0], replace.begin(), replace.end());
  return Join(lines, 0, lines.size());
}

}  // namespace

std::string PathProblem(const std::string& path, const std::vector<std::string>& globs) {
  if (path.empty() || path[0] == '/' || path.find("..") != std::string::npos || path.find('\\') != std::string::npos)
    return "'" + path + "' is not a path relative to the code base's root";
  if (!AnyGlobMatches(globs, path)) {
    std::string list;
    for (const auto& g : globs) list += (list.empty() ? "" : ", ") + g;
    return "'" + path + "' is not among the files the agents may change (" + list + ")";
  }
  return "";
}

bool GlobMatches(const std::string& glob, const std::string& path) { return Match(glob.c_str(), path.c_str()); }

bool AnyGlobMatches(const std::vector<std::string>& globs, const std::string& path) {
  return std::any_of(globs.begin(), globs.end(), [&](const auto& g) { return GlobMatches(g, path); });
}

std::string FormatFiles(std::vector<SourceFile> files) {
  std::sort(files.begin(), files.end(), [](const auto& a, const auto& b) { return a.path < b.path; });
  std::string out;
  for (const auto& f : files) {
    size_t longest = 0;
    for (const auto& line : Lines(f.text)) longest = std::max(longest, FenceLength(line));
    const std::string fence(std::max<size_t>(3, longest + 1), '`');
    const size_t dot = f.path.rfind('.');
    const std::string tag =
        dot == std::string::npos || f.path.find('/', dot) != std::string::npos ? "" : f.path.substr(dot + 1);
    out += (out.empty() ? "" : "\n") + std::string("FILE: ") + f.path + "\n" + fence + tag + "\n" + f.text +
           (f.text.empty() || f.text.back() == '\n' ? "" : "\n") + fence + "\n";
  }
  return out;
}

Result<std::vector<SourceFile>> ParseFiles(const std::string& document) {
  auto changes = ParseChanges(document);
  if (!changes) return changes.error();
  std::map<std::string, std::string> files;
  for (const auto& c : *changes) {
    if (c.kind != "FILE") return Error{"a candidate's files hold an edit ('EDIT: " + c.path + "'), not whole files"};
    files[c.path] = c.text;
  }
  if (files.empty()) return Error{"a candidate's files: no 'FILE: <path>' block"};
  std::vector<SourceFile> out;
  for (auto& [path, text] : files) out.push_back({path, std::move(text)});
  return out;
}

Result<std::string> ApplyAnswer(const std::string& answer, const std::string& document,
                                const std::vector<std::string>& globs) {
  auto current = ParseFiles(document);
  if (!current) return current.error();
  std::map<std::string, std::string> files;
  for (auto& f : *current) files[f.path] = std::move(f.text);
  auto changes = ParseChanges(answer);
  if (!changes) return Error{"the answer cannot be read: " + changes.error().message};
  if (changes->empty())
    return Error{
        "the answer holds no change: neither a 'FILE: <path>' block nor an 'EDIT: <path>' with SEARCH/REPLACE"};
  for (const auto& c : *changes) {
    if (auto problem = PathProblem(c.path, globs); !problem.empty()) return Error{c.kind + ": " + problem};
    if (c.kind == "FILE") {
      files[c.path] = c.text;
      continue;
    }
    auto it = files.find(c.path);
    if (it == files.end()) return Error{"EDIT: " + c.path + ": no such file among the candidate's files"};
    for (size_t k = 0; k < c.edits.size(); ++k) {
      auto edited = ApplyEdit(it->second, c.edits[k]);
      if (!edited)
        return Error{fmt::format("EDIT: {}, edit {} of {}: {}", c.path, k + 1, c.edits.size(), edited.error().message)};
      it->second = *edited;
    }
  }
  std::vector<SourceFile> out;
  for (auto& [path, text] : files) out.push_back({path, std::move(text)});
  std::string result = FormatFiles(std::move(out));
  if (result.size() > kMaxDocumentBytes)
    return Error{
        fmt::format("the changed files come to {} KB; at most {} KB", result.size() / 1024, kMaxDocumentBytes / 1024)};
  return result;
}

Result<std::vector<SourceFile>> CollectFiles(const fs::path& root, const std::vector<std::string>& globs) {
  std::vector<SourceFile> out;
  std::error_code ec;
  size_t bytes = 0;
  for (auto it = fs::recursive_directory_iterator(root, ec); !ec && it != fs::recursive_directory_iterator();
       it.increment(ec)) {
    if (it->path().filename() == ".git") {
      it.disable_recursion_pending();
      continue;
    }
    if (!it->is_regular_file() || it->is_symlink()) continue;
    const std::string rel = fs::relative(it->path(), root).generic_string();
    if (!AnyGlobMatches(globs, rel)) continue;
    auto text = ReadFile(it->path().string());
    if (!text) return text.error();
    if (text->find('\0') != std::string::npos) continue;  // binary: nothing the agents can edit as text
    bytes += text->size();
    out.push_back({rel, std::move(*text)});
  }
  if (ec) return Error{"cannot list " + root.string() + ": " + ec.message()};
  std::string list;
  for (const auto& g : globs) list += (list.empty() ? "" : ", ") + g;
  if (out.empty()) return Error{"no file of " + root.string() + " matches code.files (" + list + ")"};
  if (bytes > kMaxDocumentBytes)
    return Error{
        fmt::format("the files matching code.files ({}) come to {} KB; at most {} KB fit a prompt: narrow the globs",
                    list, bytes / 1024, kMaxDocumentBytes / 1024)};
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.path < b.path; });
  return out;
}

}  // namespace accelopt::code
