#include "core/hash.h"

#include <gtest/gtest.h>

namespace accelopt {
namespace {

TEST(ContentHash, IsSha256) {
  EXPECT_EQ(ContentHash("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(ContentHash(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(ContentHasher().Add("a").Add("bc").Hex(), ContentHash("abc"));
}

}  // namespace
}  // namespace accelopt
