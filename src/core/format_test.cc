#include "core/format.h"

#include <gtest/gtest.h>

namespace accelopt {
namespace {

TEST(Format, ElapsedReadsAsAPersonWaitingReadsIt) {
  EXPECT_EQ(FormatElapsed(0), "0s");
  EXPECT_EQ(FormatElapsed(44.6), "45s");
  EXPECT_EQ(FormatElapsed(185), "3m05s");
  EXPECT_EQ(FormatElapsed(7620), "2h07m");
  EXPECT_EQ(FormatElapsed(-3), "0s");
}

TEST(Format, TheEstimateScalesWhatIsDoneToWhatIsLeft) {
  EXPECT_EQ(ElapsedAndEta(60, 1, 4), ", elapsed 1m00s, about 3m00s left");
  EXPECT_EQ(ElapsedAndEta(30, 0, 4), ", elapsed 30s");  // nothing done yet: no estimate
  EXPECT_EQ(ElapsedAndEta(90, 4, 4), ", elapsed 1m30s");  // all done
}

}  // namespace
}  // namespace accelopt
