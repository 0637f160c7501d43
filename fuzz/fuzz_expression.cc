// Fuzzes roofline and shape expressions: parsed, then evaluated with the
// names a task binds.

#include "fuzz/fuzz_support.h"
#include "suite/expr.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace accelopt;
  auto expr = suite::Expr::Parse(fuzz::Text(data, size));
  if (!expr) return 0;
  (void)expr->Evaluate({{"M", 3}, {"N", 5}, {"K", 7}, {"B", 2}, {"eps", 1e-6}});
  (void)expr->Evaluate({{"M", 1e300}, {"N", -1}, {"K", 0}});
  (void)expr->Names();
  return 0;
}
