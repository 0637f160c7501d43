// Fuzzes the JSON the engine reads back from disk: a hardware profile, a
// kernel's profile, a run's checkpoint, and the model configuration (YAML).

#include "core/profile.h"
#include "fuzz/fuzz_support.h"
#include "llm/config.h"
#include "run/optimize.h"
#include "targets/cpu/hardware_store.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace accelopt;
  const std::string text = fuzz::Text(data, size);
  (void)llm::LoadLlmConfig(fuzz::WriteScratch("accelopt.yaml", text));
  Json json;
  try {
    json = Json::parse(text);
  } catch (const Json::exception&) {
    return 0;
  }
  (void)cpu::HardwareProfileFromJson(json);
  (void)ProfileFromJson(json);
  (void)run::StateFromJson(json);
  return 0;
}
