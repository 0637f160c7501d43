// Fuzzes the readers of recorded and exchanged answers: a scripted recording
// (JSON lines) replayed for each role, and an exchange answer file.

#include "fuzz/fuzz_support.h"
#include "llm/chat_model.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace accelopt;
  const std::string text = fuzz::Text(data, size);
  (void)llm::ParseExchangeAnswer(text, "answer.json", "the prompt", "exchange");
  auto model = llm::OpenScriptedChatModel({fuzz::WriteScratch("recording.jsonl", text)});
  if (!model) return 0;
  for (const char* role : {"planner", "executor", "fixer", "summarizer"}) {
    llm::ChatRequest request;
    request.agent_role = role;
    request.messages = {{"user", "Task: silu\nPlan: vectorize"}};
    (void)(*model)->Complete(request);
  }
  return 0;
}
