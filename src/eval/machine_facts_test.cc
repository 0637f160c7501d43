#include "eval/machine_facts.h"

#include <gtest/gtest.h>

#include "targets/registry.h"

namespace accelopt::eval {
namespace {

bool Contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

TEST(MachineFacts, KnownMicroarchitecturesAreNamedAndOthersAreNot) {
  EXPECT_EQ(Microarchitecture("AuthenticAMD", 25, 1), "Zen 3");
  EXPECT_EQ(Microarchitecture("AuthenticAMD", 25, 0x11), "Zen 4");
  EXPECT_EQ(Microarchitecture("AuthenticAMD", 23, 0x31), "Zen 2");
  EXPECT_EQ(Microarchitecture("GenuineIntel", 6, 0x8f), "Sapphire Rapids");
  EXPECT_EQ(Microarchitecture("GenuineIntel", 6, 0x55), "Skylake-SP / Cascade Lake");
  EXPECT_EQ(Microarchitecture("GenuineIntel", 6, 0x01), "");
  EXPECT_EQ(Microarchitecture("", -1, -1), "");
}

TEST(MachineFacts, TlbsAreDescribedLevelByLevel) {
  EXPECT_EQ(DescribeTlbs({{"L1 data", "4K", 64, "fully associative"}, {"L2 unified", "4K/2M", 2048, "8-way"}}),
            "L1 data 64 entries (4K pages, fully associative); L2 unified 2048 entries (4K/2M pages, 8-way)");
  EXPECT_EQ(DescribeTlbs({}), "");
}

TEST(MachineFacts, EveryFactIsSaidOrSaidToBeUnknown) {
  CpuInfo cpu = ReadCpuInfo();
  const std::string facts = DescribeMachineFacts(cpu, "c++");
  RecordProperty("facts", facts);
  EXPECT_TRUE(Contains(facts, "CPU: ")) << facts;
  EXPECT_TRUE(Contains(facts, "TLBs: ")) << facts;
  EXPECT_TRUE(Contains(facts, " KiB pages")) << facts;
  EXPECT_TRUE(Contains(facts, "transparent huge pages: ")) << facts;
  EXPECT_TRUE(Contains(facts, "compiler: ")) << facts;  // c++ is installed wherever kernels are built
  EXPECT_TRUE(Contains(facts, "hardware counters: readable (") || Contains(facts, "hardware counters: not offered here"))
      << facts;
  if (cpu.family >= 0) {
    EXPECT_TRUE(Contains(facts, "family " + std::to_string(cpu.family))) << facts;
  }
  EXPECT_EQ(CompilerVersion("/nonexistent/compiler"), "");
}

// The agents read the machine through the target's MachineText (the rules' {{isa}}).
TEST(MachineFacts, TheCpuTargetTellsThemToTheAgents) {
  targets::TargetSettings settings;
  auto target = targets::MakeTarget("cpu", settings);
  ASSERT_TRUE(target.ok()) << target.error().message;
  const std::string text = (*target)->MachineText();
  for (const char* fact : {"cores", "-bit SIMD", "CPU: ", "TLBs: ", "KiB pages", "compiler: ", "hardware counters: "})
    EXPECT_TRUE(Contains(text, fact)) << fact << " missing from: " << text;
}

}  // namespace
}  // namespace accelopt::eval
