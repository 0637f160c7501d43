#include "targets/code/context.h"

#include <fmt/core.h>

#include <algorithm>
#include <map>
#include <mutex>
#include <set>
#include <vector>

#include "core/json_io.h"
#include "core/paths.h"
#include "eval/sandbox.h"
#include "targets/code/files.h"

namespace accelopt::code {
namespace fs = std::filesystem;

namespace {

// The words of a shell command that may name a file: split at blanks,
// quotes, operators and '=' (--data=path).
std::vector<std::string> Words(const std::string& command) {
  std::vector<std::string> out;
  std::string word;
  for (char ch : command + " ") {
    if (std::string(" \t\n;&|()<>\"'=`").find(ch) != std::string::npos) {
      if (!word.empty()) out.push_back(word);
      word.clear();
    } else {
      word += ch;
    }
  }
  return out;
}

// `word` as a path inside `base` ("" when it is not one).
std::string Inside(std::string word) {
  while (word.rfind("./", 0) == 0) word = word.substr(2);
  while (!word.empty() && word.back() == '/') word.pop_back();
  if (word.empty() || word[0] == '/' || word[0] == '-' || word.find("..") != std::string::npos ||
      word.find('$') != std::string::npos || word.find('*') != std::string::npos)
    return std::string();
  return word;
}

bool Skipped(const fs::path& name) {
  const std::string n = name.filename().string();
  return n.empty() || n[0] == '.' || n == "__pycache__" || n == "node_modules" || n == "build";
}

}  // namespace

std::string ContextText(const fs::path& base, const suite::CodeSpec& spec, size_t max_bytes, size_t max_file_bytes) {
  std::vector<std::string> named = spec.context;
  for (const std::string* command : {&spec.test, &spec.bench}) {
    const std::vector<std::string> words = Words(*command);
    for (size_t i = 0; i < words.size(); ++i) {
      named.push_back(words[i]);
      // python -m package.module: the module's file.
      if (words[i] == "-m" && i + 1 < words.size()) {
        std::string module = words[i + 1];
        std::replace(module.begin(), module.end(), '.', '/');
        named.push_back(module + ".py");
        named.push_back(module + "/__main__.py");
      }
    }
  }
  std::vector<std::string> files;
  std::set<std::string> seen;
  auto add = [&](const std::string& rel) {
    if (!PathProblem(rel, spec.files).empty() && seen.insert(rel).second) files.push_back(rel);
  };
  std::error_code ec;
  for (const std::string& word : named) {
    const std::string rel = Inside(word);
    if (rel.empty()) continue;
    const fs::path at = base / rel;
    if (fs::is_regular_file(at, ec)) {
      add(rel);
    } else if (fs::is_directory(at, ec) && !Skipped(at)) {
      std::vector<std::string> inside;
      for (auto it = fs::recursive_directory_iterator(at, ec); !ec && it != fs::recursive_directory_iterator();
           it.increment(ec)) {
        if (Skipped(it->path())) {
          it.disable_recursion_pending();
          continue;
        }
        if (it->is_regular_file(ec)) inside.push_back(fs::relative(it->path(), base, ec).string());
      }
      std::sort(inside.begin(), inside.end());
      for (const auto& f : inside) add(f);
    }
  }
  if (files.empty())
    return "(none found: the task lists no `context` files, and its test and bench commands name no file of the "
           "code base by path)\n";
  std::string out;
  std::vector<std::string> left_out;
  for (const std::string& rel : files) {
    auto text = ReadFile((base / rel).string());
    if (!text) continue;
    if (text->substr(0, 8192).find('\0') != std::string::npos) continue;  // binary: nothing to read
    std::string shown = *text, note;
    if (shown.size() > max_file_bytes) {
      shown.resize(max_file_bytes);
      note = fmt::format("... (cut short: {} more bytes of this file not shown)\n", text->size() - max_file_bytes);
    }
    if (!shown.empty() && shown.back() != '\n') shown += '\n';
    const std::string block = "FILE: " + rel + " (read-only)\n```\n" + shown + note + "```\n";
    if (out.size() + block.size() > max_bytes) {
      left_out.push_back(rel);
      continue;
    }
    out += block;
  }
  if (!left_out.empty()) {
    std::string names;
    for (const auto& n : left_out) names += (names.empty() ? "" : ", ") + n;
    out += fmt::format("({} more file(s) not shown, to keep this within {} bytes: {})\n", left_out.size(), max_bytes,
                       names);
  }
  return out;
}

std::string ToolchainText(const std::string& language) {
  static const std::map<std::string, std::vector<std::string>> asked = {
      {"python", {"python3", "--version"}},   {"c++", {"c++", "--version"}},     {"c", {"cc", "--version"}},
      {"cuda", {"nvcc", "--version"}},        {"rust", {"rustc", "--version"}},  {"go", {"go", "version"}},
      {"java", {"java", "-version"}},         {"javascript", {"node", "--version"}},
      {"typescript", {"tsc", "--version"}},   {"julia", {"julia", "--version"}},
      {"fortran", {"gfortran", "--version"}}, {"shell", {"sh", "--version"}}};
  static std::mutex mu;
  static std::map<std::string, std::string> kept;
  std::lock_guard lock(mu);
  if (auto k = kept.find(language); k != kept.end()) return k->second;
  std::string text;
  auto it = asked.find(language);
  if (it == asked.end()) {
    text = "not asked: " + language + " has no toolchain whose version the engine knows how to ask";
  } else {
    std::vector<std::string> argv = it->second;
    const std::string shown = argv[0] + " " + argv[1];
    const std::string path = FindProgram(argv[0]);
    if (path.empty()) {
      text = "unknown: `" + argv[0] + "` is not on the engine's $PATH (the task's commands may name another)";
    } else {
      argv[0] = path;
      eval::SandboxRequest run;
      run.argv = argv;
      run.limits.wall_seconds = 30;
      run.limits.address_space_bytes = 0;
      auto o = eval::RunSandboxed(run);
      std::string line;
      if (o && o->exited_cleanly()) {
        // The first line that says something (nvcc says its version last).
        const std::string said = o->out.empty() ? o->err : o->out;
        std::string last;
        for (size_t start = 0; start < said.size();) {
          size_t end = said.find('\n', start);
          if (end == std::string::npos) end = said.size();
          std::string l = said.substr(start, end - start);
          if (!l.empty() && line.empty()) line = l;
          if (!l.empty()) last = l;
          start = end + 1;
        }
        if (language == "cuda") line = last;
      }
      text = line.empty() ? "unknown: `" + shown + "` did not say"
                          : "`" + shown + "`: " + line.substr(0, 200) +
                                " (the one on the engine's $PATH, which the task's commands run with unless they name "
                                "another)";
    }
  }
  kept[language] = text;
  return text;
}

std::string ProfilerSiteCustomize(int entries) {
  return fmt::format(R"(# Written by accelopt: profiles this Python process (its main thread) with
# cProfile and writes its top {0} entries by cumulative time at exit.
def _accelopt_profile():
    import atexit, io, os, sys
    out = os.environ.get("ACCELOPT_PROFILE_DIR")
    if not out:
        return
    import cProfile, pstats
    profiler = cProfile.Profile()

    def done():
        profiler.disable()
        text = io.StringIO()
        stats = pstats.Stats(profiler, stream=text)
        stats.sort_stats("cumulative").print_stats({0})
        try:
            os.makedirs(out, exist_ok=True)
            with open(os.path.join(out, "profile.%d.txt" % os.getpid()), "w") as f:
                f.write("%.6f\n$ python %s\n%s" % (stats.total_tt, " ".join(sys.argv), text.getvalue()))
        except OSError:
            pass

    atexit.register(done)
    profiler.enable()


_accelopt_profile()
del _accelopt_profile
)",
                     entries);
}

std::string ReadPythonProfiles(const fs::path& dir, const fs::path& root, size_t max_bytes) {
  std::error_code ec;
  int count = 0;
  double longest = -1;
  std::string chosen;
  for (auto it = fs::directory_iterator(dir, ec); !ec && it != fs::directory_iterator(); it.increment(ec)) {
    if (it->path().filename().string().rfind("profile.", 0) != 0) continue;
    auto text = ReadFile(it->path().string());
    if (!text) continue;
    ++count;
    const size_t first = text->find('\n');
    double seconds = 0;
    try {
      seconds = std::stod(text->substr(0, first));
    } catch (...) {
    }
    if (seconds > longest) {
      longest = seconds;
      chosen = first == std::string::npos ? std::string() : text->substr(first + 1);
    }
  }
  if (count == 0) return std::string();
  // pstats pads its lines and ends with blank ones.
  std::string out;
  for (size_t start = 0; start < chosen.size();) {
    size_t end = chosen.find('\n', start);
    if (end == std::string::npos) end = chosen.size();
    std::string line = chosen.substr(start, end - start);
    while (!line.empty() && line.back() == ' ') line.pop_back();
    const std::string prefix = root.string() + "/";
    for (size_t at; !prefix.empty() && (at = line.find(prefix)) != std::string::npos;) line.erase(at, prefix.size());
    if (!line.empty()) out += line + "\n";
    start = end + 1;
  }
  if (out.size() > max_bytes) out = out.substr(0, max_bytes) + "... (cut short)\n";
  if (count > 1)
    out = fmt::format("({} Python processes ran; the one that ran longest is shown)\n", count) + out;
  return out;
}

}  // namespace accelopt::code
