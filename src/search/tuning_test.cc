#include "search/tuning.h"

#include <gtest/gtest.h>

namespace accelopt::search {
namespace {

const char* kKernel =
    "#include <immintrin.h>\n"
    "constexpr int BLOCK_K = 32;  // accelopt:tune BLOCK_K 8 16 32 64\n"
    "#define UNROLL 4\n"
    "// accelopt:tune UNROLL 2 4 8\n"
    "static constexpr bool PREFETCH = true;  // accelopt:tune PREFETCH true false\n"
    "extern \"C\" void kernel(const float* x, float* out) { if (BLOCK_K == 32) out[0] = x[0]; }\n";

TEST(FindTunables, ReadsEachAnnotationAndTheValueDefined) {
  TunableScan scan = FindTunables(kKernel);
  EXPECT_TRUE(scan.problems.empty()) << scan.problems.front();
  ASSERT_EQ(scan.tunables.size(), 3u);
  EXPECT_EQ(scan.tunables[0].name, "BLOCK_K");
  EXPECT_EQ(scan.tunables[0].values, (std::vector<std::string>{"8", "16", "32", "64"}));
  EXPECT_EQ(scan.tunables[0].current, "32");
  EXPECT_EQ(scan.tunables[1].current, "4");
  EXPECT_EQ(scan.tunables[2].current, "true");
}

TEST(FindTunables, AnnotationsThatCannotBeAppliedAreProblemsNotGuesses) {
  TunableScan scan = FindTunables(
      "int TILE = 8;  // accelopt:tune TILE 4 8\n"    // not const: no definition to set
      "// accelopt:tune N 1 2; system(\"x\")\n"       // not a value
      "constexpr int A = 1;  // accelopt:tune A 2\n"  // a single value
      "// accelopt:tune 3rd 1 2\n");                  // not a name
  EXPECT_TRUE(scan.tunables.empty());
  ASSERT_EQ(scan.problems.size(), 4u);
  EXPECT_NE(scan.problems[0].find("TILE: no `constexpr"), std::string::npos) << scan.problems[0];
  EXPECT_NE(scan.problems[1].find("is not a number"), std::string::npos) << scan.problems[1];
  EXPECT_NE(scan.problems[2].find("at least two values"), std::string::npos) << scan.problems[2];
  EXPECT_NE(scan.problems[3].find("expected a constant's name"), std::string::npos) << scan.problems[3];
}

// A model's kernel with one 50 KB line: the scan is linear (std::regex
// overflowed the stack here, and again on resume, which reads the same answer).
TEST(FindTunables, LinesOfFiftyKilobytesAreReadNotACrash) {
  std::string values;
  while (values.size() < 50000) values += " 8 16";
  TunableScan scan = FindTunables("constexpr int BLOCK = 8;  // accelopt:tune BLOCK" + values + "\n");
  ASSERT_EQ(scan.tunables.size(), 1u);
  EXPECT_EQ(scan.tunables[0].values.size(), 16u);  // the first 16 taken
  EXPECT_EQ(scan.tunables[0].current, "8");

  scan = FindTunables("// accelopt:tune " + std::string(50000, '#') + "\n");
  ASSERT_EQ(scan.problems.size(), 1u);
  EXPECT_NE(scan.problems[0].find("expected a constant's name"), std::string::npos);
  EXPECT_LT(scan.problems[0].size(), 200u);  // quoted in part

  // The definition's line is the long one.
  const std::string padding(50000, 'x');
  scan = FindTunables("/*" + padding + "*/ constexpr int TILE = 4;  // accelopt:tune TILE 4 8\n");
  ASSERT_EQ(scan.tunables.size(), 1u) << (scan.problems.empty() ? "" : scan.problems[0]);
  EXPECT_EQ(scan.tunables[0].current, "4");
  EXPECT_NE(ApplySetting("/*" + padding + "*/ constexpr int TILE = 4;\n", {{"TILE", "8"}}).find("TILE = 8;"),
            std::string::npos);
}

TEST(ApplySetting, RewritesOnlyTheDefinitions) {
  std::string code = ApplySetting(kKernel, {{"BLOCK_K", "64"}, {"UNROLL", "8"}, {"PREFETCH", "false"}});
  EXPECT_NE(code.find("constexpr int BLOCK_K = 64;  // accelopt:tune BLOCK_K 8 16 32 64"), std::string::npos) << code;
  EXPECT_NE(code.find("#define UNROLL 8\n"), std::string::npos) << code;
  EXPECT_NE(code.find("static constexpr bool PREFETCH = false;"), std::string::npos) << code;
  EXPECT_NE(code.find("if (BLOCK_K == 32)"), std::string::npos) << code;  // a use is not a definition
}

TEST(TuningSettings, EveryCombinationWithinTheBudgetElseOneAtATime) {
  std::vector<Tunable> one = {{"B", {"8", "16", "32", "64"}, "32"}};
  auto settings = TuningSettings(one, 8);
  ASSERT_EQ(settings.size(), 3u);  // the kernel's own value is not tried again
  EXPECT_EQ(SettingText(settings[0]), "B=8");
  std::vector<Tunable> two = {{"B", {"8", "16", "32", "64"}, "32"}, {"U", {"2", "4", "8"}, "4"}};
  EXPECT_EQ(TuningSettings(two, 11).size(), 11u);  // 12 combinations, less the kernel's own
  auto coordinate = TuningSettings(two, 4);
  ASSERT_EQ(coordinate.size(), 4u);
  EXPECT_EQ(SettingText(coordinate[0]), "B=8, U=4");
  EXPECT_EQ(SettingText(coordinate[1]), "B=32, U=2");
  EXPECT_EQ(SettingText(coordinate[2]), "B=16, U=4");
  EXPECT_EQ(SettingText(coordinate[3]), "B=32, U=8");  // U=4 is the kernel's own
  EXPECT_TRUE(TuningSettings(two, 0).empty());
  EXPECT_TRUE(TuningSettings({}, 8).empty());
}

}  // namespace
}  // namespace accelopt::search
