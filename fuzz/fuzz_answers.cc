// Fuzzes what is read out of a model's answer: inline reasoning split off,
// then the code block, the plan and the lesson, as every role does, and a
// code task's file changes applied to a small candidate; and a code task's
// benchmark output, read for its metric by regex and by JSON path.

#include "agents/parse.h"
#include "fuzz/fuzz_support.h"
#include "llm/chat_model.h"
#include "targets/code/files.h"
#include "targets/code/metric.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace accelopt;
  llm::ChatResponse response;
  response.text = fuzz::Text(data, size);
  llm::SplitInlineReasoning(response);
  if (auto code = agents::ExtractCode(response.text)) (void)agents::CodeHash(*code, "c++");
  if (auto plan = agents::ParsePlan(response.text)) (void)plan->Text();
  (void)agents::ParseLesson(response.text);
  (void)agents::NormalizeCode(response.text, "c++");
  (void)agents::NormalizeCode(response.text, "python");
  static const std::string files = code::FormatFiles({{"src/a.cc", "int a() {\n  return 1;\n}\n"}});
  (void)code::ApplyAnswer(response.text, files, {"src/*.cc", "**/*.h"});
  (void)code::ParseFiles(response.text);
  static const suite::MetricSpec by_regex{"t", "ns", "t: ([0-9.eE+-]+) ns", "", false};
  static const suite::MetricSpec by_path{"t", "ns", "", "results.0.ns_per_op", true};
  (void)code::ReadMetric(response.text, response.text, by_regex);
  (void)code::ReadMetric(response.text, "", by_path);
  return 0;
}
