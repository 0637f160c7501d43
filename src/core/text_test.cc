#include "core/text.h"

#include <gtest/gtest.h>

namespace accelopt {
namespace {

TEST(Text, TrimTakesTheBlanksItIsGivenFromEitherEnd) {
  EXPECT_EQ(Trim(" \t a b \r\n"), "a b");
  EXPECT_EQ(TrimLeft("  a "), "a ");
  EXPECT_EQ(TrimRight("  a \n"), "  a");
  EXPECT_EQ(Trim(" \r\n "), "");
  EXPECT_EQ(TrimRight("a \r", " \t"), "a \r");  // a line's blanks only
  EXPECT_EQ(Lower("MiXed"), "mixed");
}

}  // namespace
}  // namespace accelopt
