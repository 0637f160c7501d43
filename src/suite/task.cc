#include "suite/task.h"

#include <fmt/core.h>
#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <sstream>
#include <tuple>

#include "core/pattern.h"

namespace accelopt::suite {
namespace fs = std::filesystem;

namespace {

constexpr size_t kMaxNameLength = 64;

// Task and shape names become folder and file names: letters, digits, '_',
// '-' and '.', starting with a letter or digit, at most 64 characters. "" when
// `name` is one, else what is wrong with it.
std::string NameProblem(const std::string& name) {
  if (name.empty()) return "is empty";
  if (name.size() > kMaxNameLength)
    return "is " + std::to_string(name.size()) + " characters long; at most " + std::to_string(kMaxNameLength);
  if (!std::isalnum(static_cast<unsigned char>(name[0]))) return "must start with a letter or digit";
  for (char c : name)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '-' && c != '.')
      return std::string("holds '") + c + "'; names use letters, digits, '_', '-' and '.'";
  return "";
}

// Tensor and parameter names become C++ identifiers in the kernel's signature and shape.h.
std::string IdentifierProblem(const std::string& name) {
  if (name.empty()) return "is empty";
  if (name.size() > kMaxNameLength)
    return "is " + std::to_string(name.size()) + " characters long; at most " + std::to_string(kMaxNameLength);
  if (!std::isalpha(static_cast<unsigned char>(name[0])) && name[0] != '_')
    return "must be a C++ identifier (start with a letter or '_')";
  for (char c : name)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_')
      return std::string("holds '") + c + "'; it must be a C++ identifier";
  return "";
}

// Parsing context: builds errors that name the file, the field and the line.
class Fields {
 public:
  explicit Fields(std::string file) : file_(std::move(file)) {}

  Error Fail(const std::string& field, const YAML::Node& node, const std::string& what) const {
    std::string where = file_ + ": field '" + field + "'";
    if (node.IsDefined() && node.Mark().line >= 0) where += " (line " + std::to_string(node.Mark().line + 1) + ")";
    return Error{where + ": " + what};
  }

  Result<YAML::Node> Required(const YAML::Node& parent, const std::string& key, const std::string& field) const {
    YAML::Node node = parent[key];
    if (!node.IsDefined() || node.IsNull()) return Error{file_ + ": missing field '" + field + "'"};
    return node;
  }

  Result<std::string> Scalar(const YAML::Node& node, const std::string& field) const {
    if (!node.IsScalar()) return Fail(field, node, "expected a single value");
    return node.Scalar();
  }

  Result<double> Number(const YAML::Node& node, const std::string& field) const {
    auto text = Scalar(node, field);
    if (!text) return text.error();
    char* end = nullptr;
    double value = std::strtod(text->c_str(), &end);
    if (text->empty() || *end != '\0' || !std::isfinite(value))
      return Fail(field, node, "expected a number, got '" + *text + "'");
    return value;
  }

  Result<Expr> Expression(const YAML::Node& node, const std::string& field) const {
    auto text = Scalar(node, field);
    if (!text) return text.error();
    auto expr = Expr::Parse(*text);
    if (!expr) return Fail(field, node, expr.error().message);
    return expr;
  }

  Result<Bindings> NumberMap(const YAML::Node& node, const std::string& field) const {
    if (!node.IsMap()) return Fail(field, node, "expected a mapping of names to numbers");
    Bindings out;
    for (const auto& item : node) {
      std::string key = item.first.as<std::string>();
      auto value = Number(item.second, field + "." + key);
      if (!value) return value.error();
      out[key] = *value;
    }
    return out;
  }

 private:
  std::string file_;
};

Result<DType> ParseDType(const Fields& f, const YAML::Node& node, const std::string& field) {
  if (!node.IsDefined()) return DType::kFloat32;
  for (DType type : {DType::kFloat32, DType::kBf16, DType::kInt32})
    if (node.IsScalar() && node.Scalar() == DTypeName(type)) return type;
  return f.Fail(field, node, "expected float32 (the default), bf16 or int32");
}

// One number of a distribution: a plain number, or (for the integer
// generators) an expression over the shape's parameters.
Status ParseNumber(const Fields& f, const YAML::Node& node, const std::string& key, const std::string& field,
                   double& into) {
  auto value = f.Required(node, key, field + "." + key);
  if (!value) return value.error();
  auto number = f.Number(*value, field + "." + key);
  if (!number) return number.error();
  into = *number;
  return Ok{};
}

Status ParseExpression(const Fields& f, const YAML::Node& node, const std::string& key, const std::string& field,
                       Expr& into) {
  auto value = f.Required(node, key, field + "." + key);
  if (!value) return value.error();
  auto expr = f.Expression(*value, field + "." + key);
  if (!expr) return expr.error();
  into = *expr;
  return Ok{};
}

Result<Distribution> ParseDistribution(const Fields& f, const YAML::Node& node, const std::string& field, DType dtype) {
  Distribution dist;
  if (!node.IsDefined()) {  // standard normal; an int32 input must say how its integers are drawn
    if (dtype == DType::kInt32)
      return f.Fail(field, node, "an int32 input needs {kind: indptr, ...} or {kind: pages, ...}");
    return dist;
  }
  if (!node.IsMap()) return f.Fail(field, node, "expected {kind: normal|uniform|constant|indptr|pages, ...}");
  auto kind = f.Required(node, "kind", field + ".kind");
  if (!kind) return kind.error();
  dist.kind = kind->Scalar();
  const std::vector<std::string> known = {"kind",  "mean",  "std",   "low",    "high",
                                          "value", "total", "least", "spread", "pages"};
  for (const auto& item : node)
    if (std::find(known.begin(), known.end(), item.first.Scalar()) == known.end())
      return f.Fail(field + "." + item.first.Scalar(), item.first, "unknown field");
  Status parsed = Ok{};
  if (dist.kind == "normal") {
    parsed = ParseNumber(f, node, "mean", field, dist.a);
    if (parsed) parsed = ParseNumber(f, node, "std", field, dist.b);
    if (parsed && dist.b <= 0) return f.Fail(field, node, "std must be positive");
  } else if (dist.kind == "uniform") {
    parsed = ParseNumber(f, node, "low", field, dist.a);
    if (parsed) parsed = ParseNumber(f, node, "high", field, dist.b);
    if (parsed && dist.b <= dist.a) return f.Fail(field, node, "high must exceed low");
  } else if (dist.kind == "constant") {
    parsed = ParseNumber(f, node, "value", field, dist.a);
  } else if (dist.kind == "indptr") {
    parsed = ParseExpression(f, node, "total", field, dist.total);
    dist.least = *Expr::Parse("0");
    if (parsed && node["least"].IsDefined()) parsed = ParseExpression(f, node, "least", field, dist.least);
    if (parsed && node["spread"].IsDefined()) parsed = ParseNumber(f, node, "spread", field, dist.spread);
    if (parsed && (dist.spread < 0 || dist.spread >= 1))
      return f.Fail(field + ".spread", node["spread"], "expected 0 <= spread < 1");
  } else if (dist.kind == "pages") {
    parsed = ParseExpression(f, node, "pages", field, dist.pages);
  } else {
    return f.Fail(field + ".kind", *kind,
                  "expected 'normal', 'uniform', 'constant', 'indptr' or 'pages', got '" + dist.kind + "'");
  }
  if (!parsed) return parsed.error();
  const bool integers = dist.kind == "indptr" || dist.kind == "pages";
  if (integers != (dtype == DType::kInt32))
    return f.Fail(field + ".kind", *kind,
                  integers ? "'" + dist.kind + "' draws integers: the input's dtype must be int32"
                           : std::string("an int32 input needs kind 'indptr' or 'pages'"));
  return dist;
}

Result<std::vector<Tensor>> ParseTensors(const Fields& f, const YAML::Node& list, const std::string& field,
                                         bool with_dist) {
  if (!list.IsSequence() || list.size() == 0) return f.Fail(field, list, "expected a non-empty list of {name, shape}");
  std::vector<Tensor> tensors;
  for (size_t i = 0; i < list.size(); ++i) {
    std::string at = field + "[" + std::to_string(i) + "]";
    const YAML::Node& item = list[i];
    if (!item.IsMap()) return f.Fail(at, item, "expected {name, shape}");
    Tensor t;
    auto name = f.Required(item, "name", at + ".name");
    if (!name) return name.error();
    t.name = name->Scalar();
    if (auto problem = IdentifierProblem(t.name); !problem.empty())
      return f.Fail(at + ".name", *name, "'" + t.name + "' " + problem);
    auto shape = f.Required(item, "shape", at + ".shape");
    if (!shape) return shape.error();
    if (!shape->IsSequence()) return f.Fail(at + ".shape", *shape, "expected a list of dimension expressions");
    if (shape->size() == 0 && !with_dist)
      return f.Fail(at + ".shape", *shape, "an output needs at least one dimension");
    for (size_t d = 0; d < shape->size(); ++d) {
      auto dim = f.Expression((*shape)[d], at + ".shape[" + std::to_string(d) + "]");
      if (!dim) return dim.error();
      t.shape.push_back(*dim);
    }
    auto dtype = ParseDType(f, item["dtype"], at + ".dtype");
    if (!dtype) return dtype.error();
    t.dtype = *dtype;
    if (with_dist) {
      auto dist = ParseDistribution(f, item["dist"], at + ".dist", t.dtype);
      if (!dist) return dist.error();
      t.dist = *dist;
      if ((t.dist.kind == "indptr" || t.dist.kind == "pages") && t.shape.size() != 1)
        return f.Fail(at + ".shape", *shape, "'" + t.dist.kind + "' draws a one-dimensional array");
    } else if (t.dtype == DType::kInt32) {
      return f.Fail(at + ".dtype", item["dtype"], "outputs are float32 or bf16");
    }
    tensors.push_back(std::move(t));
  }
  return tensors;
}

// Every name an expression uses must be a parameter of every shape or a constant.
Status CheckNames(const Fields& f, const Task& task, const Expr& expr, const std::string& field,
                  const YAML::Node& node) {
  for (const auto& name : expr.Names()) {
    if (task.constants.count(name)) continue;
    for (const auto& [shape, params] : task.shapes)
      if (!params.count(name))
        return f.Fail(
            field, node,
            "expression '" + expr.text() + "' uses '" + name + "', which shape '" + shape + "' does not define");
  }
  return Ok{};
}

// Every tensor dimension names known parameters and evaluates, on every shape,
// to a positive integer: an error names the file, the field and its line.
Status CheckTensorShapes(const Fields& f, const Task& task, const YAML::Node& root) {
  for (auto [group, tensors] : {std::pair{"inputs", &task.inputs}, std::pair{"outputs", &task.outputs}})
    for (size_t i = 0; i < tensors->size(); ++i)
      for (size_t d = 0; d < (*tensors)[i].shape.size(); ++d) {
        const Expr& dim = (*tensors)[i].shape[d];
        const std::string field = std::string(group) + "[" + std::to_string(i) + "].shape[" + std::to_string(d) + "]";
        const YAML::Node node = root[group][i]["shape"][d];
        if (auto s = CheckNames(f, task, dim, field, node); !s) return s;
        for (const auto& [shape, params] : task.shapes) {
          Bindings bindings = params;
          for (const auto& [k, v] : task.constants) bindings.emplace(k, v);
          auto value = dim.Evaluate(bindings);
          if (!value) return f.Fail(field, node, "on shape '" + shape + "': " + value.error().message);
          if (*value < 1 || *value != std::floor(*value) || *value > 1e12)
            return f.Fail(field, node,
                          "on shape '" + shape + "', dimension '" + dim.text() + "' must be a positive integer, got " +
                              fmt::format("{:g}", *value));
        }
      }
  return Ok{};
}

// The integer generators' expressions name known parameters, and every shape
// binds: the arrays they draw fit their lengths (docs/task-format.md, "Inputs").
Status CheckGenerators(const Fields& f, const Task& task, const YAML::Node& root) {
  for (size_t i = 0; i < task.inputs.size(); ++i) {
    const Distribution& d = task.inputs[i].dist;
    const std::string field = "inputs[" + std::to_string(i) + "].dist";
    const YAML::Node node = root["inputs"][i]["dist"];
    if (d.kind == "indptr")
      for (auto [expr, key] : {std::pair{&d.total, "total"}, std::pair{&d.least, "least"}})
        if (auto s = CheckNames(f, task, *expr, field + "." + key, node[key]); !s) return s;
    if (d.kind == "pages")
      if (auto s = CheckNames(f, task, d.pages, field + ".pages", node["pages"]); !s) return s;
  }
  for (const auto& [shape, _] : task.shapes)
    if (auto bound = Bind(task, shape); !bound) return f.Fail("inputs", root["inputs"], bound.error().message);
  return Ok{};
}

// Every shape's roofline evaluates to finite, non-negative counts, and to some
// bytes moved: a roofline that cannot be evaluated would leave every kernel of
// the task unscored without a word (and skip the check for impossible speeds).
Status CheckRoofline(const Fields& f, const Task& task, const YAML::Node& roofline) {
  for (const auto& [shape, params] : task.shapes) {
    Bindings all = task.constants;
    for (const auto& [k, v] : params) all[k] = v;
    for (auto [expr, key] :
         {std::pair{&task.roofline.flops_mm, "flops_mm"}, std::pair{&task.roofline.flops_vec, "flops_vec"},
          std::pair{&task.roofline.min_bytes, "min_bytes"}}) {
      const std::string field = std::string("roofline.") + key;
      auto value = expr->Evaluate(all);
      if (!value) return f.Fail(field, roofline[key], "on shape '" + shape + "': " + value.error().message);
      if (!std::isfinite(*value) || *value < 0)
        return f.Fail(field, roofline[key],
                      "on shape '" + shape + "': '" + expr->text() + "' is " + std::to_string(*value) +
                          " (a count must be finite and not negative)");
      if (std::string(key) == "min_bytes" && *value <= 0)
        return f.Fail(field, roofline[key],
                      "on shape '" + shape + "': '" + expr->text() +
                          "' is 0, but every kernel reads its inputs and writes its outputs");
    }
  }
  return Ok{};
}

std::string Flatten(const YAML::Node& node) {
  if (node.IsScalar()) return node.Scalar();
  YAML::Emitter out;
  out << YAML::Flow << node;
  return out.c_str();
}

// The `code:` section of a task of kind code (docs/task-format.md, "Code tasks").
Status ParseCode(const Fields& f, const YAML::Node& root, Task& task) {
  auto code = f.Required(root, "code", "code");
  if (!code) return code.error();
  if (!code->IsMap())
    return f.Fail("code", *code, "expected a mapping (path or repo, files, build, test, bench, metric)");
  static const std::vector<std::string> known = {"path",     "repo",        "commit",       "files",
                                                 "language", "build",       "test",         "bench",
                                                 "metric",   "digest",      "repetitions",  "noise_margin",
                                                 "timeout_seconds", "workload",  "libraries",    "context"};
  for (const auto& item : *code)
    if (std::find(known.begin(), known.end(), item.first.Scalar()) == known.end())
      return f.Fail("code." + item.first.Scalar(), item.first,
                    fmt::format("unknown field (known: {})", fmt::join(known, ", ")));
  CodeSpec& spec = task.code;
  auto text = [&](const char* key, std::string& slot, bool required) -> Status {
    const YAML::Node node = (*code)[key];
    if (!node.IsDefined() || node.IsNull()) {
      if (required) return f.Fail(std::string("code.") + key, *code, "missing");
      return Ok{};
    }
    auto value = f.Scalar(node, std::string("code.") + key);
    if (!value) return value.error();
    if (required && value->empty()) return f.Fail(std::string("code.") + key, node, "must not be empty");
    slot = *value;
    return Ok{};
  };
  for (auto [key, slot, required] :
       {std::tuple{"path", &spec.path, false}, std::tuple{"repo", &spec.repo, false},
        std::tuple{"commit", &spec.commit, false}, std::tuple{"language", &spec.language, true},
        std::tuple{"build", &spec.build, false}, std::tuple{"test", &spec.test, true},
        std::tuple{"bench", &spec.bench, true}, std::tuple{"workload", &spec.workload, false},
        std::tuple{"libraries", &spec.libraries, false}})
    if (auto s = text(key, *slot, required); !s) return s;
  if (spec.path.empty() == spec.repo.empty())
    return f.Fail("code", *code,
                  "name the code base with exactly one of 'path' (a folder) or 'repo' (a git repository)");
  // A folder is taken as it is: a commit beside it would be a promise nothing keeps.
  if (!spec.path.empty() && !spec.commit.empty())
    return f.Fail("code.commit", (*code)["commit"],
                  "only with 'repo': 'path' names a folder taken as it is (to start from a commit, name the "
                  "repository with 'repo' instead of 'path')");
  if (std::find(kCodeLanguages.begin(), kCodeLanguages.end(), spec.language) == kCodeLanguages.end())
    return f.Fail("code.language", (*code)["language"],
                  fmt::format("unknown language '{}' (accepted: {})", spec.language, fmt::join(kCodeLanguages, ", ")));
  std::error_code ec;
  if (!spec.path.empty()) {
    fs::path p = fs::path(spec.path).is_absolute() ? fs::path(spec.path) : fs::path(task.dir) / spec.path;
    p = fs::weakly_canonical(p, ec);
    if (!fs::is_directory(p, ec)) return f.Fail("code.path", (*code)["path"], "no folder at " + p.string());
    spec.path = p.string();
  } else {
    if (spec.commit.empty())
      return f.Fail("code.commit", *code,
                    "missing: a repository needs the commit to start from (a hash, tag or branch)");
    // A local repository is named relative to the task folder; anything else is a URL for git.
    fs::path local = fs::path(spec.repo).is_absolute() ? fs::path(spec.repo) : fs::path(task.dir) / spec.repo;
    if (fs::is_directory(local, ec)) spec.repo = fs::weakly_canonical(local, ec).string();
  }
  // A list of paths (globs) relative to the code base's root, each without '..'.
  auto relative = [&](const YAML::Node& list, const std::string& key, const char* what,
                      std::vector<std::string>& out) -> Status {
    for (size_t i = 0; i < list.size(); ++i) {
      const std::string field = key + "[" + std::to_string(i) + "]";
      auto item = f.Scalar(list[i], field);
      if (!item) return item.error();
      if (item->empty() || (*item)[0] == '/' || item->find("..") != std::string::npos)
        return f.Fail(field, list[i], std::string("a ") + what + " relative to the code base's root, without '..'");
      out.push_back(*item);
    }
    return Ok{};
  };
  const YAML::Node files = (*code)["files"];
  if (!files.IsDefined() || !files.IsSequence() || files.size() == 0)
    return f.Fail("code.files", files.IsDefined() ? files : *code,
                  "expected a list of globs: the files the agents may change (e.g. [src/*.cc, include/**.h])");
  if (auto s = relative(files, "code.files", "glob", spec.files); !s) return s;
  if (const YAML::Node context = (*code)["context"]; context.IsDefined() && !context.IsNull()) {
    if (!context.IsSequence())
      return f.Fail("code.context", context,
                    "expected a list of paths: the files the tests and the benchmark run (shown read-only)");
    if (auto s = relative(context, "code.context", "path", spec.context); !s) return s;
  }
  auto metric = f.Required(*code, "metric", "code.metric");
  if (!metric) return metric.error();
  if (!metric->IsMap())
    return f.Fail("code.metric", *metric, "expected a mapping (regex or json, direction, name, unit)");
  MetricSpec& m = spec.metric;
  for (auto [key, slot] : {std::pair{"name", &m.name}, std::pair{"unit", &m.unit}, std::pair{"regex", &m.regex},
                           std::pair{"json", &m.json_path}})
    if (const YAML::Node node = (*metric)[key]; node.IsDefined() && !node.IsNull()) {
      auto value = f.Scalar(node, std::string("code.metric.") + key);
      if (!value) return value.error();
      *slot = *value;
    }
  if (m.regex.empty() == m.json_path.empty())
    return f.Fail("code.metric", *metric,
                  "say how to read the benchmark's figure with exactly one of 'regex' (on its output) or 'json' (a "
                  "dotted path into its JSON output)");
  if (!m.regex.empty()) {
    if (auto compiled = CompilePattern(m.regex); !compiled)
      return f.Fail("code.metric.regex", (*metric)["regex"], compiled.error().message);
  }
  auto direction = f.Required(*metric, "direction", "code.metric.direction");
  if (!direction) return direction.error();
  if (direction->Scalar() != "lower" && direction->Scalar() != "higher")
    return f.Fail("code.metric.direction", *direction, "expected 'lower' or 'higher' (which is better)");
  m.higher_is_better = direction->Scalar() == "higher";
  if (const YAML::Node digest = (*code)["digest"]; digest.IsDefined() && !digest.IsNull()) {
    if (!digest.IsMap()) return f.Fail("code.digest", digest, "expected a mapping with 'regex' or 'json'");
    for (const auto& item : digest)
      if (item.first.Scalar() != "regex" && item.first.Scalar() != "json")
        return f.Fail("code.digest." + item.first.Scalar(), item.first, "unknown field (known: regex, json)");
    for (auto [key, slot] : {std::pair{"regex", &spec.digest.regex}, std::pair{"json", &spec.digest.json_path}})
      if (const YAML::Node node = digest[key]; node.IsDefined() && !node.IsNull()) {
        auto value = f.Scalar(node, std::string("code.digest.") + key);
        if (!value) return value.error();
        *slot = *value;
      }
    if (spec.digest.regex.empty() == spec.digest.json_path.empty())
      return f.Fail("code.digest", digest,
                    "say where the benchmark prints its result's digest with exactly one of 'regex' or 'json'");
    if (!spec.digest.regex.empty())
      if (auto compiled = CompilePattern(spec.digest.regex); !compiled)
        return f.Fail("code.digest.regex", digest["regex"], compiled.error().message);
  }
  if (const YAML::Node node = (*code)["repetitions"]; node.IsDefined()) {
    auto value = f.Number(node, "code.repetitions");
    if (!value) return value.error();
    if (*value < 3 || *value > 1000 || *value != std::floor(*value))
      return f.Fail("code.repetitions", node, "expected a whole number from 3 to 1000");
    spec.repetitions = static_cast<int>(*value);
  }
  if (const YAML::Node node = (*code)["noise_margin"]; node.IsDefined()) {
    auto value = f.Number(node, "code.noise_margin");
    if (!value) return value.error();
    if (*value < 0 || *value >= 1) return f.Fail("code.noise_margin", node, "expected a fraction, 0 <= margin < 1");
    spec.noise_margin = *value;
  }
  if (const YAML::Node node = (*code)["timeout_seconds"]; node.IsDefined()) {
    auto value = f.Number(node, "code.timeout_seconds");
    if (!value) return value.error();
    if (*value <= 0) return f.Fail("code.timeout_seconds", node, "expected a positive number of seconds");
    spec.timeout_seconds = *value;
  }
  // One shape: the code base as it is; the loop optimizes "bench".
  task.shapes["bench"] = {};
  return Ok{};
}

// The fields a task.yaml may hold at its top level (docs/task-format.md): a
// misspelt optional field is an error, never a setting silently left out.
const std::vector<std::string>& KnownTopLevelFields() {
  static const std::vector<std::string> known = {"name",       "kind",     "description", "family", "fib_definition",
                                                 "provenance", "shapes",   "constants",   "inputs", "outputs",
                                                 "tolerance",  "roofline", "code"};
  return known;
}

Result<Task> ParseTask(const Fields& f, const YAML::Node& root, const std::string& dir) {
  Task task;
  task.dir = fs::absolute(dir).lexically_normal().string();
  if (!task.dir.empty() && task.dir.back() == '/') task.dir.pop_back();
  if (!root.IsMap()) return f.Fail("(top level)", root, "expected a mapping");
  const auto& known = KnownTopLevelFields();
  for (const auto& item : root)
    if (std::find(known.begin(), known.end(), item.first.Scalar()) == known.end())
      return f.Fail(item.first.Scalar(), item.first, fmt::format("unknown field (known: {})", fmt::join(known, ", ")));

  auto name = f.Required(root, "name", "name");
  if (!name) return name.error();
  task.name = name->Scalar();
  if (auto problem = NameProblem(task.name); !problem.empty()) return f.Fail("name", *name, "the task name " + problem);
  if (task.name != fs::path(task.dir).filename().string())
    return f.Fail("name", *name, "must equal the folder name '" + fs::path(task.dir).filename().string() + "'");
  if (root["description"]) task.description = root["description"].Scalar();
  if (const auto& family = root["family"]) {
    if (!family.IsScalar()) return f.Fail("family", family, "expected a name");
    task.family = family.Scalar();
    if (auto problem = NameProblem(task.family); !problem.empty())
      return f.Fail("family", family, "the family name " + problem);
  }
  if (const auto& fib = root["fib_definition"]; fib.IsDefined()) {
    if (!fib.IsScalar()) return f.Fail("fib_definition", fib, "expected a FlashInfer-Bench definition name");
    task.fib_definition = fib.Scalar();
    if (auto problem = NameProblem(task.fib_definition); !problem.empty())
      return f.Fail("fib_definition", fib, "the definition name " + problem);
  }
  if (const auto& prov = root["provenance"]; prov && prov.IsMap())
    for (const auto& item : prov) task.provenance[item.first.Scalar()] = Flatten(item.second);
  if (const auto& kind = root["kind"]; kind.IsDefined()) {
    if (kind.Scalar() == "code") {
      task.kind = TaskKind::kCode;
      if (auto s = ParseCode(f, root, task); !s) return s.error();
      return task;
    }
    if (kind.Scalar() != "kernel") return f.Fail("kind", kind, "expected 'kernel' (the default) or 'code'");
  }

  auto shapes = f.Required(root, "shapes", "shapes");
  if (!shapes) return shapes.error();
  if (!shapes->IsMap()) return f.Fail("shapes", *shapes, "expected a mapping of shape names");
  for (const auto& item : *shapes) {
    std::string field = "shapes." + item.first.Scalar();
    if (auto problem = NameProblem(item.first.Scalar()); !problem.empty())
      return f.Fail(field, item.first, "the shape name " + problem);
    auto params = f.NumberMap(item.second, field);
    if (!params) return params.error();
    for (const auto& [param, value] : *params)
      if (auto problem = IdentifierProblem(param); !problem.empty())
        return f.Fail(field + "." + param, item.second, "the parameter name '" + param + "' " + problem);
    for (const auto& [param, value] : *params)
      if (value < 1 || value != std::floor(value))
        return f.Fail(field + "." + param, item.second[param], "expected a positive integer");
    task.shapes[item.first.Scalar()] = *params;
  }
  for (const char* required : {"test", "bench"})
    if (!task.shapes.count(required))
      return f.Fail("shapes", *shapes, std::string("missing the required shape '") + required + "'");

  if (root["constants"]) {
    auto constants = f.NumberMap(root["constants"], "constants");
    if (!constants) return constants.error();
    task.constants = *constants;
  }
  auto inputs = f.Required(root, "inputs", "inputs");
  if (!inputs) return inputs.error();
  auto in = ParseTensors(f, *inputs, "inputs", true);
  if (!in) return in.error();
  task.inputs = *in;
  auto outputs = f.Required(root, "outputs", "outputs");
  if (!outputs) return outputs.error();
  auto out = ParseTensors(f, *outputs, "outputs", false);
  if (!out) return out.error();
  task.outputs = *out;

  if (root["tolerance"]) {
    auto tol = f.Number(root["tolerance"], "tolerance");
    if (!tol) return tol.error();
    if (*tol <= 0 || *tol >= 1) return f.Fail("tolerance", root["tolerance"], "expected 0 < tolerance < 1");
    task.tolerance = *tol;
  }
  auto roofline = f.Required(root, "roofline", "roofline");
  if (!roofline) return roofline.error();
  for (auto [key, slot] :
       {std::pair{"flops_mm", &task.roofline.flops_mm}, std::pair{"flops_vec", &task.roofline.flops_vec},
        std::pair{"min_bytes", &task.roofline.min_bytes}}) {
    auto node = f.Required(*roofline, key, std::string("roofline.") + key);
    if (!node) return node.error();
    auto expr = f.Expression(*node, std::string("roofline.") + key);
    if (!expr) return expr.error();
    if (auto s = CheckNames(f, task, *expr, std::string("roofline.") + key, *node); !s) return s.error();
    *slot = *expr;
  }
  if (auto s = CheckTensorShapes(f, task, root); !s) return s.error();
  if (auto s = CheckGenerators(f, task, root); !s) return s.error();
  if (auto s = CheckRoofline(f, task, *roofline); !s) return s.error();
  return task;
}

}  // namespace

Result<Task> LoadTask(const std::string& dir) {
  std::string file = (fs::path(dir) / "task.yaml").string();
  Fields fields(file);
  YAML::Node root;
  try {
    root = YAML::LoadFile(file);
  } catch (const YAML::BadFile&) {
    return Error{file + ": cannot read the file"};
  } catch (const YAML::Exception& e) {
    return Error{file + ": invalid YAML at line " + std::to_string(e.mark.line + 1) + ": " + e.msg};
  }
  try {
    auto task = ParseTask(fields, root, dir);
    if (!task || task->kind == TaskKind::kCode) return task;
    // A reference and a baseline at least (reference.cpp and baseline.cpp for
    // the cpu target; the cuda target pairs baseline.cu with reference.cpp);
    // which targets can run it is theirs to say.
    std::error_code ec;
    bool reference = false, baseline = false;
    for (const auto& entry : fs::directory_iterator(dir, ec)) {
      reference = reference || entry.path().stem() == "reference";
      baseline = baseline || entry.path().stem() == "baseline";
    }
    if (reference && baseline) return task;
    const fs::path missing = fs::path(dir) / (reference ? "baseline.cpp" : "reference.cpp");
    return Error{missing.string() +
                 ": missing (every task needs a reference and a baseline: reference.cpp and baseline.cpp, or "
                 "another target's own files)"};
  } catch (const YAML::Exception& e) {
    return Error{file + ": malformed at line " + std::to_string(e.mark.line + 1) + ": " + e.msg};
  }
}

Result<Suite> ScanSuite(const std::string& suite_dir) {
  std::error_code ec;
  if (!fs::is_directory(suite_dir, ec)) return Error{"task suite folder not found: " + suite_dir};
  Suite suite;
  for (const auto& entry : fs::directory_iterator(suite_dir, ec)) {
    if (!entry.is_directory() || !fs::exists(entry.path() / "task.yaml")) continue;
    auto task = LoadTask(entry.path().string());
    if (task)
      suite.tasks.push_back(std::move(*task));
    else
      suite.broken.push_back({entry.path().filename().string(), task.error().message});
  }
  if (ec) return Error{"cannot list " + suite_dir + ": " + ec.message()};
  std::sort(suite.tasks.begin(), suite.tasks.end(), [](const Task& a, const Task& b) { return a.name < b.name; });
  std::sort(suite.broken.begin(), suite.broken.end(),
            [](const BrokenTask& a, const BrokenTask& b) { return a.name < b.name; });
  return suite;
}

const BrokenTask* Suite::FindBroken(const std::string& name) const {
  for (const BrokenTask& b : broken)
    if (b.name == name) return &b;
  return nullptr;
}

Result<std::vector<Task>> LoadSuite(const std::string& suite_dir) {
  auto suite = ScanSuite(suite_dir);
  if (!suite) return suite.error();
  if (!suite->broken.empty()) return Error{suite->broken.front().error};
  return std::move(suite->tasks);
}

namespace {

// Integers the engine keeps as float32 must stay exact.
constexpr long kMaxExactInteger = 1L << 24;

// The integer generators' parameters on this shape, and whether the array fits them.
Status BindGenerator(BoundTensor& b, const Bindings& bindings, const std::string& where) {
  auto eval = [&](const Expr& e, long& into) -> Status {
    auto value = e.Evaluate(bindings);
    if (!value) return Error{where + ": " + value.error().message};
    if (*value < 0 || *value != std::floor(*value) || *value > kMaxExactInteger)
      return Error{where + ": '" + e.text() + "' must be an integer in [0, 2^24], got " + fmt::format("{:g}", *value)};
    into = static_cast<long>(*value);
    return Ok{};
  };
  if (b.dist.kind == "indptr") {
    if (auto s = eval(b.dist.total, b.total); !s) return s;
    if (auto s = eval(b.dist.least, b.least); !s) return s;
    const long parts = b.elements - 1;
    if (parts < 1) return Error{where + ": an indptr array holds at least two offsets"};
    if (b.total < parts * b.least)
      return Error{where + fmt::format(": {} segments of at least {} each do not fit in a total of {}", parts, b.least,
                                       b.total)};
  } else if (b.dist.kind == "pages") {
    if (auto s = eval(b.dist.pages, b.pages); !s) return s;
    if (b.elements > b.pages)
      return Error{where + fmt::format(": {} distinct page ids cannot be drawn from {} pages", b.elements, b.pages)};
  }
  return Ok{};
}

Result<std::vector<BoundTensor>> BindTensors(const std::vector<Tensor>& tensors, const Bindings& bindings,
                                             const std::string& where) {
  std::vector<BoundTensor> out;
  for (const auto& t : tensors) {
    BoundTensor b{t.name, {}, 1, t.dtype, t.dist};
    for (const auto& dim : t.shape) {
      auto value = dim.Evaluate(bindings);
      if (!value) return Error{where + ", tensor '" + t.name + "': " + value.error().message};
      if (*value < 1 || *value != std::floor(*value) || *value > 1e12)
        return Error{where + ", tensor '" + t.name + "': dimension '" + dim.text() +
                     "' must be a positive integer, got " + std::to_string(*value)};
      b.dims.push_back(static_cast<long>(*value));
      b.elements *= b.dims.back();
    }
    if (auto s = BindGenerator(b, bindings, where + ", tensor '" + t.name + "'"); !s) return s.error();
    out.push_back(std::move(b));
  }
  return out;
}

}  // namespace

Result<BoundTask> Bind(const Task& task, const std::string& shape_name) {
  auto shape = task.shapes.find(shape_name);
  if (shape == task.shapes.end()) {
    std::string known;
    for (const auto& [name, _] : task.shapes) known += (known.empty() ? "" : ", ") + name;
    return Error{"task '" + task.name + "' has no shape '" + shape_name + "' (it has: " + known + ")"};
  }
  BoundTask bound;
  bound.task = &task;
  bound.shape_name = shape_name;
  bound.params = shape->second;
  Bindings all = task.constants;
  for (const auto& [k, v] : shape->second) all[k] = v;
  std::string where = "task '" + task.name + "' shape '" + shape_name + "'";
  auto inputs = BindTensors(task.inputs, all, where);
  if (!inputs) return inputs.error();
  auto outputs = BindTensors(task.outputs, all, where);
  if (!outputs) return outputs.error();
  bound.inputs = *inputs;
  bound.outputs = *outputs;
  return bound;
}

std::string BoundTask::ShapeHeader(bool float_constants) const {
  std::ostringstream out;
  out << "// Generated by accelopt: task '" << task->name << "', shape '" << shape_name << "'.\n"
      << "#pragma once\n";
  for (const auto& [name, value] : params)
    out << "constexpr long " << name << " = " << static_cast<long>(value) << ";\n";
  out.precision(17);
  const char* type = float_constants ? "float" : "double";
  for (const auto& [name, value] : task->constants)
    out << "constexpr " << type << " " << name << " = " << value << ";\n";
  return out.str();
}

const char* DTypeName(DType type) {
  switch (type) {
    case DType::kBf16:
      return "bf16";
    case DType::kInt32:
      return "int32";
    default:
      return "float32";
  }
}

size_t DTypeBytes(DType type) { return type == DType::kBf16 ? 2 : 4; }

const char* DTypeCType(DType type) {
  switch (type) {
    case DType::kBf16:
      return "__nv_bfloat16";
    case DType::kInt32:
      return "int";
    default:
      return "float";
  }
}

bool Task::PlainFloat32() const {
  for (const auto& t : inputs)
    if (t.dtype != DType::kFloat32 || !t.dist.random() || t.shape.empty()) return false;
  for (const auto& t : outputs)
    if (t.dtype != DType::kFloat32) return false;
  return true;
}

bool Task::Bf16Inputs() const {
  return std::any_of(inputs.begin(), inputs.end(), [](const Tensor& t) { return t.dtype == DType::kBf16; });
}

std::string ShapeText(const Bindings& params) {
  std::string out;
  for (const auto& [k, v] : params) {
    // Dimensions are integers; a constant may not be (eps=1e-06).
    char value[32];
    if (v == static_cast<double>(static_cast<long>(v)))
      std::snprintf(value, sizeof value, "%ld", static_cast<long>(v));
    else
      std::snprintf(value, sizeof value, "%.9g", v);
    out += (out.empty() ? "" : " ") + k + "=" + value;
  }
  return out;
}

}  // namespace accelopt::suite
