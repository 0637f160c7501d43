#include "suite/task.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "suite/roofline.h"
#include "testing/temp_dir.h"

namespace accelopt::suite {
namespace {

const char* kValid = R"(name: demo
description: out = x @ w
provenance: {model: Test-1B, shape: {M: 4096, K: 64}}
shapes:
  test: {M: 3, K: 4, N: 5}
  bench: {M: 64, K: 128, N: 32}
constants: {eps: 1.0e-6}
inputs:
  - {name: x, shape: [M, K], dist: {kind: uniform, low: -2, high: 2}}
  - {name: w, shape: [K, N]}
outputs:
  - {name: out, shape: [M, N]}
tolerance: 1.0e-4
roofline:
  flops_mm: 2*M*N*K
  flops_vec: 0
  min_bytes: 4*(M*K + K*N + M*N)
)";

class TaskFile : public ::testing::Test {
 protected:
  std::string Write(const std::string& yaml, const std::string& name = "demo") {
    std::string dir = tmp_.path() + "/" + name;
    std::filesystem::create_directories(dir);
    std::ofstream(dir + "/task.yaml") << yaml;
    std::ofstream(dir + "/reference.cpp") << "";
    std::ofstream(dir + "/baseline.cpp") << "";
    return dir;
  }
  // Loads `base` with `from` replaced by `to`; returns the error message.
  std::string ErrorFor(const std::string& from, const std::string& to, const char* base = kValid) {
    std::string yaml = base;
    auto at = yaml.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    yaml.replace(at, from.size(), to);
    auto task = LoadTask(Write(yaml));
    EXPECT_FALSE(task.ok()) << "accepted: " << to;
    return task.ok() ? "" : task.error().message;
  }
  testing::TempDir tmp_;
};

TEST_F(TaskFile, LoadsAValidTask) {
  auto task = LoadTask(Write(kValid));
  ASSERT_TRUE(task.ok()) << task.error().message;
  EXPECT_EQ(task->name, "demo");
  EXPECT_EQ(task->inputs.size(), 2u);
  EXPECT_EQ(task->inputs[0].dist.kind, "uniform");
  EXPECT_EQ(task->inputs[1].dist.kind, "normal");  // default
  EXPECT_DOUBLE_EQ(task->tolerance, 1e-4);
  EXPECT_DOUBLE_EQ(task->constants.at("eps"), 1e-6);
  EXPECT_EQ(task->provenance.at("model"), "Test-1B");

  auto bound = Bind(*task, "bench");
  ASSERT_TRUE(bound.ok());
  EXPECT_EQ(bound->inputs[0].dims, (std::vector<long>{64, 128}));
  EXPECT_EQ(bound->outputs[0].elements, 64 * 32);
  EXPECT_NE(bound->ShapeHeader().find("constexpr long M = 64;"), std::string::npos);
  EXPECT_NE(bound->ShapeHeader().find("constexpr double eps = "), std::string::npos);

  auto counts = CountRoofline(*bound);
  ASSERT_TRUE(counts.ok());
  EXPECT_DOUBLE_EQ(counts->flops_mm, 2.0 * 64 * 32 * 128);
  auto t = ComputeRooflineTime(*counts, {10, 1, 1});  // 1 GFLOP/s: compute-bound
  EXPECT_EQ(t.bound, "mm");
  EXPECT_DOUBLE_EQ(t.seconds, counts->flops_mm / 1e9);
  EXPECT_DOUBLE_EQ(t.mm_seconds, t.seconds);
  EXPECT_DOUBLE_EQ(t.memory_seconds, counts->min_bytes / 10e9);
  EXPECT_DOUBLE_EQ(t.vec_seconds, 0);
}

TEST_F(TaskFile, ErrorsNameFileFieldAndExpectation) {
  std::string e = ErrorFor("flops_mm: 2*M*N*K", "flops_mm: 2*M*");
  EXPECT_NE(e.find("task.yaml"), std::string::npos) << e;
  EXPECT_NE(e.find("roofline.flops_mm"), std::string::npos) << e;
  EXPECT_NE(e.find("line"), std::string::npos) << e;

  e = ErrorFor("  flops_vec: 0\n", "");
  EXPECT_NE(e.find("missing field 'roofline.flops_vec'"), std::string::npos) << e;

  e = ErrorFor("kind: uniform", "kind: gaussian");
  EXPECT_NE(e.find("inputs[0].dist.kind"), std::string::npos) << e;
  EXPECT_NE(e.find("expected 'normal', 'uniform', 'constant', 'indptr' or 'pages'"), std::string::npos) << e;

  e = ErrorFor("low: -2, high: 2", "low: 2, high: -2");
  EXPECT_NE(e.find("high must exceed low"), std::string::npos) << e;

  e = ErrorFor("tolerance: 1.0e-4", "tolerance: tight");
  EXPECT_NE(e.find("field 'tolerance'"), std::string::npos) << e;
  EXPECT_NE(e.find("expected a number, got 'tight'"), std::string::npos) << e;

  e = ErrorFor("bench: {M: 64, K: 128, N: 32}", "bench: {M: 64, K: 128}");
  EXPECT_NE(e.find("uses 'N', which shape 'bench' does not define"), std::string::npos) << e;

  e = ErrorFor("test: {M: 3, K: 4, N: 5}", "test: {M: 3.5, K: 4, N: 5}");
  EXPECT_NE(e.find("shapes.test.M"), std::string::npos) << e;
  EXPECT_NE(e.find("positive integer"), std::string::npos) << e;

  e = ErrorFor("  bench: {M: 64, K: 128, N: 32}\n", "");
  EXPECT_NE(e.find("required shape 'bench'"), std::string::npos) << e;

  e = ErrorFor("shape: [M, K]", "shape: M");
  EXPECT_NE(e.find("inputs[0].shape"), std::string::npos) << e;

  e = ErrorFor("name: demo", "name: other");
  EXPECT_NE(e.find("must equal the folder name"), std::string::npos) << e;

  e = ErrorFor("outputs:\n  - {name: out, shape: [M, N]}", "outputs: []");
  EXPECT_NE(e.find("field 'outputs'"), std::string::npos) << e;
}

// A roofline that cannot be evaluated on a shape is refused when the task is
// loaded, naming file, field and shape; it no longer leaves kernels unscored.
// The FlashInfer-Bench definition is optional; a misspelt field at the top
// level is refused with its name and line, not left out in silence.
TEST_F(TaskFile, FibDefinitionIsOptionalAndUnknownFieldsAreRefused) {
  auto plain = LoadTask(Write(kValid));
  ASSERT_TRUE(plain.ok()) << plain.error().message;
  EXPECT_EQ(plain->fib_definition, "");

  std::string yaml = kValid;
  yaml.insert(yaml.find("provenance:"), "fib_definition: gqa_paged_decode_h32_kv4_d128_ps1\n");
  auto named = LoadTask(Write(yaml, "named"));
  ASSERT_FALSE(named.ok());  // the name must still equal the folder
  yaml.replace(0, yaml.find('\n'), "name: named");
  named = LoadTask(Write(yaml, "named"));
  ASSERT_TRUE(named.ok()) << named.error().message;
  EXPECT_EQ(named->fib_definition, "gqa_paged_decode_h32_kv4_d128_ps1");

  std::string e = ErrorFor("provenance:", "fib_defintion: x\nprovenance:");
  EXPECT_NE(e.find("field 'fib_defintion' (line 3): unknown field (known: "), std::string::npos) << e;
  EXPECT_NE(e.find("fib_definition"), std::string::npos) << e;
  e = ErrorFor("provenance:", "fib_definition: 'a b'\nprovenance:");
  EXPECT_NE(e.find("field 'fib_definition' (line 3): the definition name holds ' '"), std::string::npos) << e;
  e = ErrorFor("provenance:", "fib_definition: [a, b]\nprovenance:");
  EXPECT_NE(e.find("field 'fib_definition'"), std::string::npos) << e;
}

TEST_F(TaskFile, ARooflineThatFailsWhenEvaluatedIsRefused) {
  std::string e = ErrorFor("min_bytes: 4*(M*K + K*N + M*N)", "min_bytes: 4*(2*M*N)/(M-M)");
  EXPECT_NE(e.find("task.yaml: field 'roofline.min_bytes' (line 17)"), std::string::npos) << e;
  EXPECT_NE(e.find("on shape 'bench'"), std::string::npos) << e;
  EXPECT_NE(e.find("division by zero"), std::string::npos) << e;

  e = ErrorFor("min_bytes: 4*(M*K + K*N + M*N)", "min_bytes: 0");
  EXPECT_NE(e.find("field 'roofline.min_bytes'"), std::string::npos) << e;
  EXPECT_NE(e.find("is 0, but every kernel reads its inputs"), std::string::npos) << e;

  e = ErrorFor("flops_mm: 2*M*N*K", "flops_mm: M - 2*M");
  EXPECT_NE(e.find("field 'roofline.flops_mm'"), std::string::npos) << e;
  EXPECT_NE(e.find("not negative"), std::string::npos) << e;
}

// Names become folder, file and C++ names: bounded and plain, refused when loading
// (a 250-character task name was listed, then failed with "File name too long").
// A paged-attention-like task: bf16 tensors, int32 offsets and page ids, a scalar.
const char* kPaged = R"(name: demo
shapes:
  test: {batch: 3, pages: 40, used: 25, d: 4}
  bench: {batch: 64, pages: 70000, used: 65536, d: 128}
inputs:
  - {name: q, shape: [batch, d], dtype: bf16}
  - {name: k_cache, shape: [pages, d], dtype: bf16, dist: {kind: uniform, low: -1, high: 1}}
  - {name: kv_indptr, shape: [batch + 1], dtype: int32, dist: {kind: indptr, total: used, least: 1, spread: 0.9}}
  - {name: kv_indices, shape: [used], dtype: int32, dist: {kind: pages, pages: pages}}
  - {name: sm_scale, shape: [], dist: {kind: constant, value: 0.5}}
outputs:
  - {name: out, shape: [batch, d], dtype: bf16}
  - {name: lse, shape: [batch]}
roofline: {flops_mm: 4*used*d, flops_vec: 0, min_bytes: 2*2*used*d}
)";

TEST_F(TaskFile, TypedTensorsGeneratorsAndScalarsLoadAndBind) {
  auto task = LoadTask(Write(kPaged));
  ASSERT_TRUE(task.ok()) << task.error().message;
  EXPECT_EQ(task->inputs[0].dtype, DType::kBf16);
  EXPECT_EQ(task->inputs[2].dtype, DType::kInt32);
  EXPECT_EQ(task->outputs[1].dtype, DType::kFloat32);
  EXPECT_FALSE(task->PlainFloat32());
  EXPECT_TRUE(task->Bf16Inputs());
  auto bound = Bind(*task, "test");
  ASSERT_TRUE(bound.ok()) << bound.error().message;
  EXPECT_EQ(bound->inputs[2].elements, 4);
  EXPECT_EQ(bound->inputs[2].total, 25);
  EXPECT_EQ(bound->inputs[2].least, 1);
  EXPECT_EQ(bound->inputs[3].pages, 40);
  EXPECT_TRUE(bound->inputs[4].dims.empty());
  EXPECT_EQ(bound->inputs[4].elements, 1);
  EXPECT_FALSE(bound->inputs[2].dist.random());
  EXPECT_TRUE(bound->inputs[1].dist.random());

  auto load_with = [&](const std::string& from, const std::string& to) { return ErrorFor(from, to, kPaged); };
  std::string e = load_with("dtype: bf16}", "dtype: fp8}");
  EXPECT_NE(e.find("inputs[0].dtype"), std::string::npos) << e;
  EXPECT_NE(e.find("float32 (the default), bf16 or int32"), std::string::npos) << e;
  e = load_with("dtype: int32, dist: {kind: pages", "dist: {kind: pages");
  EXPECT_NE(e.find("inputs[3].dist.kind"), std::string::npos) << e;
  EXPECT_NE(e.find("must be int32"), std::string::npos) << e;
  e = load_with("total: used", "total: 2");
  EXPECT_NE(e.find("64 segments of at least 1 each do not fit in a total of 2"), std::string::npos) << e;
  EXPECT_NE(e.find("shape 'bench', tensor 'kv_indptr'"), std::string::npos) << e;
  e = load_with("pages: pages}", "pages: 30000}");
  EXPECT_NE(e.find("65536 distinct page ids cannot be drawn from 30000 pages"), std::string::npos) << e;
  e = load_with("total: used", "total: nope");
  EXPECT_NE(e.find("inputs[2].dist.total"), std::string::npos) << e;
  e = load_with("spread: 0.9", "spread: 1.5");
  EXPECT_NE(e.find("0 <= spread < 1"), std::string::npos) << e;
  e = load_with("{name: lse, shape: [batch]}", "{name: lse, shape: []}");
  EXPECT_NE(e.find("an output needs at least one dimension"), std::string::npos) << e;
  e = load_with("{name: lse, shape: [batch]}", "{name: lse, shape: [batch], dtype: int32}");
  EXPECT_NE(e.find("outputs are float32 or bf16"), std::string::npos) << e;
  e = load_with("pages: pages}", "pages: pages, seed: 3}");
  EXPECT_NE(e.find("inputs[3].dist.seed"), std::string::npos) << e;
  EXPECT_NE(e.find("unknown field"), std::string::npos) << e;
}

TEST_F(TaskFile, NamesAreBoundedAndPlain) {
  const std::string long_name(250, 'a');
  std::string yaml = kValid;
  yaml.replace(yaml.find("name: demo"), 10, "name: " + long_name);
  auto task = LoadTask(Write(yaml, long_name));
  ASSERT_FALSE(task.ok());
  EXPECT_NE(task.error().message.find("field 'name' (line 1): the task name is 250 characters long; at most 64"),
            std::string::npos)
      << task.error().message;

  std::string e = ErrorFor("{name: x, shape", "{name: x y, shape");
  EXPECT_NE(e.find("inputs[0].name"), std::string::npos) << e;
  EXPECT_NE(e.find("C++ identifier"), std::string::npos) << e;
  e = ErrorFor("test: {M: 3,", "te/st: {M: 3,");
  EXPECT_NE(e.find("the shape name holds '/'"), std::string::npos) << e;
  e = ErrorFor("bench: {M: 64,", "bench: {M: 64, 2K: 1,");
  EXPECT_NE(e.find("the parameter name '2K'"), std::string::npos) << e;
}

TEST_F(TaskFile, InvalidYamlNamesTheLine) {
  auto task = LoadTask(Write("name: demo\nshapes: {test: [1, 2\n"));
  ASSERT_FALSE(task.ok());
  EXPECT_NE(task.error().message.find("invalid YAML at line"), std::string::npos) << task.error().message;
}

TEST_F(TaskFile, MissingSourcesAreNamed) {
  std::string dir = Write(kValid);
  std::filesystem::remove(dir + "/baseline.cpp");
  auto task = LoadTask(dir);
  ASSERT_FALSE(task.ok());
  EXPECT_NE(task.error().message.find("baseline.cpp: missing"), std::string::npos);
}

TEST_F(TaskFile, BindRejectsUnknownShape) {
  auto task = LoadTask(Write(kValid));
  ASSERT_TRUE(task.ok()) << task.error().message;
  auto unknown = Bind(*task, "huge");
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.error().message.find("has no shape 'huge' (it has: bench, test)"), std::string::npos);
}

// A dimension that is not a positive integer on some shape, or cannot be
// evaluated, is refused when the task loads, naming file, field, line and shape
// (a division by zero named neither; an unknown name was put at line 1).
TEST_F(TaskFile, BadDimensionsAreRefusedWhereTheyAre) {
  std::string e = ErrorFor("shape: [K, N]", "shape: [K, N - 40]");
  EXPECT_NE(e.find("task.yaml: field 'inputs[1].shape[1]' (line 10): on shape 'bench', dimension 'N - 40' must be "
                   "a positive integer"),
            std::string::npos)
      << e;
  e = ErrorFor("shape: [K, N]", "shape: [K, N / (M - M)]");
  EXPECT_NE(e.find("field 'inputs[1].shape[1]' (line 10): on shape"), std::string::npos) << e;
  EXPECT_NE(e.find("division by zero"), std::string::npos) << e;
  e = ErrorFor("shape: [K, N]", "shape: [K, Q]");
  EXPECT_NE(e.find("field 'inputs[1].shape[1]' (line 10): expression 'Q' uses 'Q'"), std::string::npos) << e;
  e = ErrorFor("min_bytes: 4*(M*K + K*N + M*N)", "min_bytes: 4*(M*K + K*N + M*Z)");
  EXPECT_NE(e.find("field 'roofline.min_bytes' (line 17)"), std::string::npos) << e;
}

TEST_F(TaskFile, SuiteLoadsSortedAndReportsTheBadTask) {
  Write(kValid, "demo");
  std::string yaml = kValid;
  yaml.replace(yaml.find("name: demo"), 10, "name: another");
  Write(yaml, "another");
  auto suite = LoadSuite(tmp_.path());
  ASSERT_TRUE(suite.ok()) << suite.error().message;
  ASSERT_EQ(suite->size(), 2u);
  EXPECT_EQ((*suite)[0].name, "another");
  Write("name: broken\n", "broken");
  auto bad = LoadSuite(tmp_.path());
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("broken/task.yaml"), std::string::npos) << bad.error().message;
}

// One broken folder once made the whole suite fail to load: the others stay
// usable, and the broken one is listed by its folder with the loader's error.
TEST_F(TaskFile, ABrokenTaskLeavesTheOthersUsableAndIsListedWithItsError) {
  Write(kValid, "demo");
  Write("name: broken\n", "broken");
  Write("name: [unclosed\n", "awry");
  auto suite = ScanSuite(tmp_.path());
  ASSERT_TRUE(suite.ok()) << suite.error().message;
  ASSERT_EQ(suite->tasks.size(), 1u);
  EXPECT_EQ(suite->tasks[0].name, "demo");
  ASSERT_EQ(suite->broken.size(), 2u);
  EXPECT_EQ(suite->broken[0].name, "awry");
  EXPECT_NE(suite->broken[0].error.find("awry/task.yaml: invalid YAML at line"), std::string::npos)
      << suite->broken[0].error;
  ASSERT_NE(suite->FindBroken("broken"), nullptr);
  EXPECT_NE(suite->FindBroken("broken")->error.find("broken/task.yaml"), std::string::npos);
  EXPECT_EQ(suite->FindBroken("demo"), nullptr);
  EXPECT_FALSE(ScanSuite(tmp_.path() + "/nowhere").ok());
}

}  // namespace
}  // namespace accelopt::suite

namespace accelopt::suite {
namespace {

const char* kCodeTask = R"(name: fast
kind: code
description: a code base
code:
  path: ../project
  language: c++
  files: [src/*.cc]
  build: make
  test: make test
  bench: ./bench
  metric: {name: time per op, unit: ns, regex: 'ns/op: ([0-9.]+)', direction: lower}
)";

class CodeTaskFile : public ::testing::Test {
 protected:
  void SetUp() override { std::filesystem::create_directories(tmp_.path() + "/project"); }
  Result<Task> Load(const std::string& yaml) {
    std::string dir = tmp_.path() + "/fast";
    std::filesystem::create_directories(dir);
    std::ofstream(dir + "/task.yaml") << yaml;
    return LoadTask(dir);
  }
  std::string ErrorFor(const std::string& from, const std::string& to) {
    std::string yaml = kCodeTask;
    auto at = yaml.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    yaml.replace(at, from.size(), to);
    auto task = Load(yaml);
    EXPECT_FALSE(task.ok()) << "accepted: " << to;
    return task.ok() ? "" : task.error().message;
  }
  testing::TempDir tmp_;
};

TEST_F(CodeTaskFile, LoadsACodeTaskWithoutReferenceOrShapes) {
  auto task = Load(kCodeTask);
  ASSERT_TRUE(task) << task.error().message;
  EXPECT_EQ(task->kind, TaskKind::kCode);
  EXPECT_EQ(task->code.path, std::filesystem::canonical(tmp_.path() + "/project").string());
  EXPECT_EQ(task->code.files, std::vector<std::string>{"src/*.cc"});
  EXPECT_EQ(task->code.metric.regex, "ns/op: ([0-9.]+)");
  EXPECT_FALSE(task->code.metric.higher_is_better);
  EXPECT_EQ(task->code.repetitions, 5);
  EXPECT_TRUE(task->shapes.count("bench"));
}

TEST_F(CodeTaskFile, ErrorsNameTheField) {
  EXPECT_NE(ErrorFor("path: ../project", "path: ../nowhere").find("code.path"), std::string::npos);
  EXPECT_NE(ErrorFor("path: ../project", "path: ../project\n  repo: x").find("exactly one of 'path'"),
            std::string::npos);
  EXPECT_NE(ErrorFor("path: ../project", "repo: https://example.com/x.git").find("code.commit"), std::string::npos);
  EXPECT_NE(ErrorFor("direction: lower", "direction: faster").find("code.metric.direction"), std::string::npos);
  EXPECT_NE(ErrorFor("regex: 'ns/op: ([0-9.]+)'", "regex: '(['").find("not a valid regular expression"),
            std::string::npos);
  // RE2 syntax: a lookahead (ECMAScript's, not RE2's) is refused where it is written.
  const std::string lookahead = ErrorFor("regex: 'ns/op: ([0-9.]+)'", "regex: 'ns/op: (?=[0-9])([0-9.]+)'");
  EXPECT_NE(lookahead.find("code.metric.regex"), std::string::npos) << lookahead;
  EXPECT_NE(lookahead.find("RE2 syntax"), std::string::npos) << lookahead;
  EXPECT_NE(ErrorFor("regex: 'ns/op: ([0-9.]+)'", "json: a.b, regex: x").find("exactly one of 'regex'"),
            std::string::npos);
  EXPECT_NE(ErrorFor("files: [src/*.cc]", "files: [../src/*.cc]").find("code.files[0]"), std::string::npos);
  EXPECT_NE(ErrorFor("files: [src/*.cc]", "files: []").find("code.files"), std::string::npos);
  EXPECT_NE(ErrorFor("  test: make test\n", "").find("code.test"), std::string::npos);
  EXPECT_NE(ErrorFor("build: make", "biuld: make").find("unknown field"), std::string::npos);
  EXPECT_NE(ErrorFor("kind: code", "kind: library").find("field 'kind'"), std::string::npos);
  EXPECT_NE(ErrorFor("  bench: ./bench\n", "  bench: ./bench\n  repetitions: 1\n").find("code.repetitions"),
            std::string::npos);
}

// The digest of the benchmark's result is read by exactly one of a regex
// (RE2) or a JSON path; anything else is an error naming the field.
TEST_F(CodeTaskFile, ADigestIsReadByARegexOrAJsonPath) {
  std::string yaml = kCodeTask;
  yaml += "  digest: {json: checksum}\n";
  auto task = Load(yaml);
  ASSERT_TRUE(task) << task.error().message;
  EXPECT_EQ(task->code.digest.json_path, "checksum");
  EXPECT_TRUE(task->code.digest.regex.empty());
  const std::string bench = "  bench: ./bench\n";
  EXPECT_NE(ErrorFor(bench, bench + "  digest: {json: a, regex: b}\n").find("exactly one of 'regex' or 'json'"),
            std::string::npos);
  EXPECT_NE(ErrorFor(bench, bench + "  digest: {sha: a}\n").find("code.digest.sha"), std::string::npos);
  EXPECT_NE(ErrorFor(bench, bench + "  digest: {regex: '(['}\n").find("code.digest.regex"), std::string::npos);
  EXPECT_NE(ErrorFor(bench, bench + "  digest: checksum\n").find("code.digest"), std::string::npos);
}

// What the prompts tell of the workload, the allowed libraries and the
// tests' and benchmark's files: optional, read as written, a context path
// outside the code base an error naming the field.
TEST_F(CodeTaskFile, TheWorkloadTheLibrariesAndTheContextFilesAreOptional) {
  std::string yaml = kCodeTask;
  yaml += "  workload: 1 MB of random text\n  libraries: the standard library only\n  context: [bench/b.cc, t.cc]\n";
  auto task = Load(yaml);
  ASSERT_TRUE(task) << task.error().message;
  EXPECT_EQ(task->code.workload, "1 MB of random text");
  EXPECT_EQ(task->code.libraries, "the standard library only");
  EXPECT_EQ(task->code.context, (std::vector<std::string>{"bench/b.cc", "t.cc"}));
  auto plain = Load(kCodeTask);
  ASSERT_TRUE(plain);
  EXPECT_TRUE(plain->code.workload.empty() && plain->code.libraries.empty() && plain->code.context.empty());
  const std::string bench = "  bench: ./bench\n";
  EXPECT_NE(ErrorFor(bench, bench + "  context: [../x.cc]\n").find("code.context[0]"), std::string::npos);
  EXPECT_NE(ErrorFor(bench, bench + "  context: x.cc\n").find("code.context"), std::string::npos);
}

// A commit beside a folder was once dropped without a word, and any language
// was taken: both are errors naming the file, the field, its line and what is accepted.
TEST_F(CodeTaskFile, ACommitBesideAPathAndAnUnknownLanguageAreErrors) {
  std::string e = ErrorFor("path: ../project", "path: ../project\n  commit: v1.2");
  EXPECT_NE(e.find("fast/task.yaml: field 'code.commit' (line 6): only with 'repo'"), std::string::npos) << e;
  e = ErrorFor("language: c++", "language: klingon");
  EXPECT_NE(e.find("fast/task.yaml: field 'code.language' (line 6): unknown language 'klingon'"), std::string::npos)
      << e;
  EXPECT_NE(e.find("accepted: c, c++,"), std::string::npos) << e;
  std::string yaml = kCodeTask;
  yaml.replace(yaml.find("language: c++"), 13, "language: python");
  EXPECT_TRUE(Load(yaml).ok());
}

}  // namespace
}  // namespace accelopt::suite
