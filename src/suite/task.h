#pragma once
/// A task folder (docs/task-format.md) loaded and validated.

#include <map>
#include <string>
#include <vector>

#include "core/result.h"
#include "suite/expr.h"

namespace accelopt::suite {

/// The element type of a tensor as the kernel sees it. The engine keeps every
/// value as a float32 that the type represents exactly (a bf16 value, an
/// integer below 2^24), so references and comparisons read float32 alike.
enum class DType { kFloat32 = 0, kBf16 = 1, kInt32 = 2 };  // numbered as the cuda harness reads them

/// "float32", "bf16", "int32": as task.yaml spells it.
const char* DTypeName(DType type);
/// Bytes per element on the device.
size_t DTypeBytes(DType type);
/// The C/CUDA element type: float, __nv_bfloat16, int.
const char* DTypeCType(DType type);

/// How an input's values are drawn (docs/task-format.md, "Inputs"):
/// - normal(mean a, std b) and uniform[a, b): random floats (float32 or bf16);
/// - constant: every element is a (a scalar such as a softmax scale);
/// - indptr: int32 offsets [0, ..., total] of length-1 segments, each at least
///   `least` long, lengths drawn with a spread of `spread` around their mean
///   (0: all equal), as a batch of requests of unequal lengths;
/// - pages: int32 page ids, distinct, drawn at random from [0, pages).
struct Distribution {
  std::string kind = "normal";
  double a = 0;  ///< mean (normal), low (uniform) or the value (constant)
  double b = 1;  ///< std (normal) or high (uniform)
  Expr total, least, pages;
  double spread = 0;
  /// Random floats, redrawn (or perturbed) for every call; the other kinds
  /// are structure the kernel reads as it is.
  bool random() const { return kind == "normal" || kind == "uniform"; }
};

/// One kernel argument: an input or an output array.
struct Tensor {
  std::string name;
  std::vector<Expr> shape;  ///< one expression per dimension; none: a scalar (one element)
  DType dtype = DType::kFloat32;
  Distribution dist;  ///< inputs only
};

/// The roofline model of DESIGN.md section 3, as expressions.
struct RooflineExprs {
  Expr flops_mm;
  Expr flops_vec;
  Expr min_bytes;
};

/// How a code task's benchmark reports its figure (docs/task-format.md, "Code tasks").
struct MetricSpec {
  std::string name = "metric";  ///< what it is ("ns per word"), as prompts and reports say it
  std::string unit;             ///< "ns", "MB/s", ... ("" when it has none)
  /// A regular expression (RE2 syntax: no lookaround, no backreferences) on the benchmark's stdout: its first
  /// group, else its whole match, is the number. The last match counts.
  std::string regex;
  /// Or: the benchmark's stdout is JSON and this dotted path leads to the
  /// number ("results.0.ns_per_op"; a number names an array element).
  std::string json_path;
  bool higher_is_better = false;
};

/// The languages a code task may name (`code.language`), as task.yaml spells
/// them: the code target runs any of them through the task's own commands;
/// the name tags lessons and tells the agents what they edit.
inline const std::vector<std::string> kCodeLanguages = {"c",     "c++",        "cuda",      "fortran", "go",
                                                        "java",  "javascript", "julia",     "python",  "rust",
                                                        "shell", "text",       "typescript"};

/// A code base whose speed a command measures: what a task of kind `code`
/// points at and how a change to it is judged.
struct CodeSpec {
  std::string path;                ///< the code base's folder (absolute), or
  std::string repo, commit;        ///< a git repository (path or URL) and the commit to start from
  std::vector<std::string> files;  ///< globs (relative to the root) of the files the agents may change
  std::string language;            ///< of those files: one of kCodeLanguages (lessons are tagged with it)
  /// Shell commands, run at the root of each candidate's own copy.
  std::string build;  ///< a failure is compile_error
  std::string test;   ///< the project's own tests: a failure is wrong_answer
  std::string bench;  ///< prints the metric
  MetricSpec metric;
  /// Optional: where the benchmark prints a digest of its result (a checksum
  /// of what the timed code computed), by the first group of a regex or a
  /// dotted JSON path. Two runs on the same input must print the same one: a
  /// child whose digest differs from its parent's is wrong_answer.
  struct Digest {
    std::string regex, json_path;
    bool empty() const { return regex.empty() && json_path.empty(); }
  } digest;
  /// Optional, for the prompts: what the benchmark's data is (its sizes, its
  /// distribution, where it comes from), in the task author's words.
  std::string workload;
  /// Optional, for the prompts: what the candidate may use (libraries allowed
  /// or forbidden, the language version to keep to), in the task author's words.
  std::string libraries;
  /// Optional: the files (relative to the root) the tests and the benchmark
  /// run, shown to the agents read-only; those the test and bench commands
  /// name by path are found without it.
  std::vector<std::string> context;
  int repetitions = 5;           ///< benchmark runs per candidate (and pairs per side-by-side comparison)
  double noise_margin = 0.02;    ///< a change counts as faster only beyond this fraction
  double timeout_seconds = 600;  ///< per command
};

enum class TaskKind {
  kKernel,  ///< a kernel over arrays, checked against a reference, scored against a roofline
  kCode,    ///< a code base: its own build, tests and benchmark (CodeSpec)
};

struct Task {
  std::string name;
  TaskKind kind = TaskKind::kKernel;
  CodeSpec code;    ///< kind code only
  std::string dir;  ///< absolute folder path
  std::string description;
  /// What kind of kernel it is (matmul, elementwise, ...): lessons learnt on
  /// one task are given first to planners of the same family. "" when not said.
  std::string family;
  /// The name of the FlashInfer-Bench definition this task computes, with its
  /// semantics and names ("" when it has none): `accelopt export fib` files
  /// the task's kernels under it (docs/fib-export.md).
  std::string fib_definition;
  std::map<std::string, std::string> provenance;  ///< model, shape, note (as text)
  std::map<std::string, Bindings> shapes;         ///< shape name -> parameters
  Bindings constants;                             ///< non-shape numbers (eps, ...)
  std::vector<Tensor> inputs;
  std::vector<Tensor> outputs;
  double tolerance = 2e-5;  ///< relative L2 error bound

  /// Every input and output is float32 with a random distribution: what
  /// the cpu target and external evaluators run.
  bool PlainFloat32() const;
  /// Some input is bf16 (its matrix arithmetic runs at the bf16 rate).
  bool Bf16Inputs() const;
  RooflineExprs roofline;

  /// The reference and the baseline in a target's kernel language, by its
  /// file extension (".cpp" for the cpu target).
  std::string reference_path(const std::string& extension) const { return dir + "/reference" + extension; }
  std::string baseline_path(const std::string& extension) const { return dir + "/baseline" + extension; }
};

/// A task at one shape: every dimension evaluated.
struct BoundTensor {
  std::string name;
  std::vector<long> dims;  ///< empty for a scalar
  long elements = 1;
  DType dtype = DType::kFloat32;
  Distribution dist;
  long total = 0, least = 0, pages = 0;  ///< dist's expressions, evaluated (indptr, pages)
};

struct BoundTask {
  const Task* task = nullptr;
  std::string shape_name;
  Bindings params;  ///< the shape's parameters
  std::vector<BoundTensor> inputs;
  std::vector<BoundTensor> outputs;
  /// C++ header declaring each parameter and constant (`constexpr long M = 64;`);
  /// constants are double, or float for a float32 evaluation of the reference.
  std::string ShapeHeader(bool float_constants = false) const;
};

/// A shape's parameters as "K=1024 M=6 N=3072".
std::string ShapeText(const Bindings& params);

/// Loads and validates `dir/task.yaml`. Errors name the file, the field and
/// what was expected.
Result<Task> LoadTask(const std::string& dir);

/// A task folder of a suite that does not load: its folder's name and why.
struct BrokenTask {
  std::string name;   ///< the folder's name (task.yaml may not say one)
  std::string error;  ///< LoadTask's message, naming the file, field and line
};

/// A suite as it loads: the tasks that do, sorted by name, and the folders
/// that do not, sorted by name. One broken folder leaves the others usable.
struct Suite {
  std::vector<Task> tasks;
  std::vector<BrokenTask> broken;
  /// The broken folder named `name`, or null.
  const BrokenTask* FindBroken(const std::string& name) const;
};

/// Loads every subfolder of `suite_dir` holding a task.yaml. An Error only
/// when the folder itself cannot be listed; a task that does not load is
/// listed in Suite::broken.
Result<Suite> ScanSuite(const std::string& suite_dir);

/// ScanSuite's tasks, where every one must load: the first broken task is an error.
Result<std::vector<Task>> LoadSuite(const std::string& suite_dir);

/// Evaluates the shape `shape_name`; an unknown shape or a dimension that is
/// not a positive integer is an error naming the tensor.
Result<BoundTask> Bind(const Task& task, const std::string& shape_name);

}  // namespace accelopt::suite
