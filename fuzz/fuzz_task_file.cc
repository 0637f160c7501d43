// Fuzzes the task file: task.yaml as a user or a downloaded suite gives it,
// loaded, bound to each of its shapes and its roofline counted.

#include <filesystem>

#include "fuzz/fuzz_support.h"
#include "suite/roofline.h"
#include "suite/task.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace accelopt;
  static const std::string dir = [] {
    std::string d = fuzz::ScratchFolder() + "/demo";
    std::filesystem::create_directories(d);
    fuzz::WriteScratch("demo/reference.cpp", "");
    fuzz::WriteScratch("demo/baseline.cpp", "");
    return d;
  }();
  fuzz::WriteScratch("demo/task.yaml", fuzz::Text(data, size));
  auto task = suite::LoadTask(dir);
  if (!task) return 0;
  for (const auto& [shape, params] : task->shapes) {
    auto bound = suite::Bind(*task, shape);
    if (bound) (void)suite::CountRoofline(*bound);
  }
  return 0;
}
