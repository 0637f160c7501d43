// Fuzzes what the engine reads out of a kernel's source and its compiler's
// output without a model: the tuning annotations (found, then each variant
// written), the check of the files it would read at compile time, and a
// compile log filtered to the kernel's own diagnostics and its vectorization
// remarks.

#include "eval/compiler.h"
#include "eval/includes.h"
#include "fuzz/fuzz_support.h"
#include "search/tuning.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace accelopt;
  const std::string text = fuzz::Text(data, size);
  search::TunableScan scan = search::FindTunables(text);
  for (const search::Setting& setting : search::TuningSettings(scan.tunables, 4))
    (void)search::ApplySetting(text, setting);
  (void)eval::ForbiddenFileAccess(text);
  (void)eval::KeepOwnDiagnostics(text);
  (void)eval::NotVectorizedRemarks(text);
  return 0;
}
