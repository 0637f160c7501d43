#include "targets/settings.h"

#include <gtest/gtest.h>

namespace accelopt::targets {
namespace {

const std::vector<SettingSpec> kSpecs = {{"cores", SettingType::kIntList, Json::array(), "cores to use"},
                                         {"rate", SettingType::kNumber, 1.5, "a rate"}};

TEST(ResolveSettings, FillsDefaultsAndKeepsGivenValues) {
  auto resolved = ResolveSettings(kSpecs, {{"cores", {0, 2}}}, "the test target");
  ASSERT_TRUE(resolved) << resolved.error().message;
  EXPECT_EQ((*resolved)["cores"], Json({0, 2}));
  EXPECT_DOUBLE_EQ((*resolved)["rate"].get<double>(), 1.5);
  auto none = ResolveSettings(kSpecs, nullptr, "the test target");
  ASSERT_TRUE(none);
  EXPECT_EQ((*none)["cores"], Json::array());
}

TEST(ResolveSettings, NamesAnUnknownSettingAndAWrongType) {
  auto unknown = ResolveSettings(kSpecs, {{"speed", 1}}, "the test target");
  ASSERT_FALSE(unknown);
  EXPECT_EQ(unknown.error().message, "the test target takes no setting 'speed' (it takes: cores, rate)");
  auto wrong = ResolveSettings(kSpecs, {{"cores", {"a"}}}, "the test target");
  ASSERT_FALSE(wrong);
  EXPECT_EQ(wrong.error().message, "the test target: setting 'cores' must be of type int list, not [\"a\"]");
}

}  // namespace
}  // namespace accelopt::targets
