#include "core/json_io.h"

#include <gtest/gtest.h>

#include <string>

#include "testing/temp_dir.h"

namespace accelopt {
namespace {

TEST(ReadFile, ADirectoryIsAnErrorNamingIt) {
  testing::TempDir dir;
  auto read = ReadFile(dir.path());
  ASSERT_FALSE(read);
  EXPECT_EQ(read.error().message, dir.path() + ": is a directory");
}

// A kernel's Latin-1 comment, its binary stderr, a log cut inside a
// character: none of it may make the engine throw when it becomes JSON.
TEST(DumpJson, InvalidUtf8BecomesTheReplacementCharacter) {
  const Json j = {{"log", std::string("caf\xe9 \xff\xfe and a cut \xe2\x82")}, {"ok", "d\xc3\xa9j\xc3\xa0"}};
  std::string text;
  ASSERT_NO_THROW(text = DumpJson(j));
  EXPECT_NE(text.find("caf\xef\xbf\xbd"), std::string::npos) << text;
  EXPECT_NE(text.find("d\xc3\xa9j\xc3\xa0"), std::string::npos) << text;  // valid UTF-8 is kept as it is
  EXPECT_NO_THROW((void)Json::parse(text));
}

}  // namespace
}  // namespace accelopt
