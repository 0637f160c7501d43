// Fuzzes what is read out of a model's answer: inline reasoning split off,
// then the code block, the plan and the lesson, as every role does, and a
// code task's file changes applied to a small candidate.

#include "agents/parse.h"
#include "fuzz/fuzz_support.h"
#include "llm/chat_model.h"
#include "targets/code/files.h"

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
  return 0;
}
