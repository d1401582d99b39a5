#include "kernel/kconfig.h"

#include <gtest/gtest.h>

namespace rtpulse::kernel {
namespace {

TEST(KernelConfigTest, ReadsValuesNotSetLinesAndHeader) {
  auto config = KernelConfig::Parse(
      "#\n# Linux/arm64 6.12.47 Kernel Configuration\n#\nCONFIG_PREEMPT_RT=y\n"
      "# CONFIG_NTP_PPS is not set\nCONFIG_HZ=1000\nCONFIG_LOCALVERSION=\"-v8-16k\"\n"
      "CONFIG_PPS_CLIENT_GPIO=m\n",
      "t");
  ASSERT_TRUE(config) << config.error().message;
  EXPECT_EQ(config->version(), "6.12.47");
  EXPECT_EQ(config->arch(), "arm64");
  EXPECT_EQ(config->Get("PREEMPT_RT"), "y");
  EXPECT_EQ(config->Get("NTP_PPS"), "n");
  EXPECT_EQ(config->Get("HZ"), "1000");
  EXPECT_EQ(config->Get("LOCALVERSION"), "\"-v8-16k\"");
  EXPECT_EQ(config->Get("PPS_CLIENT_GPIO"), "m");
  EXPECT_EQ(config->Get("EXPERT"), std::nullopt);
  EXPECT_TRUE(config->IsOn("PREEMPT_RT"));
  EXPECT_FALSE(config->IsOn("PPS_CLIENT_GPIO"));
  EXPECT_EQ(config->entries().size(), 5u);
  EXPECT_EQ(config->entries()[1].line, 5);
}

TEST(KernelConfigTest, OrdinaryCommentsAndBlankLinesAreSkipped) {
  auto config = KernelConfig::Parse(
      "\n# why: sleeping spinlocks\n   \n# CONFIG_ is not set\nCONFIG_EXPERT=y\r\n", "t");
  ASSERT_TRUE(config) << config.error().message;
  ASSERT_EQ(config->entries().size(), 1u);
  EXPECT_EQ(config->Get("EXPERT"), "y");  // CRLF files work too
  EXPECT_EQ(config->version(), "");
}

TEST(KernelConfigTest, LastAssignmentWinsInAConfig) {
  auto config = KernelConfig::Parse("CONFIG_HZ_1000=y\n# CONFIG_HZ_1000 is not set\n", "t");
  ASSERT_TRUE(config);
  EXPECT_EQ(config->Get("HZ_1000"), "n");
  EXPECT_EQ(config->entries().size(), 1u);
}

TEST(KernelConfigTest, FragmentWithConflictingValuesIsRejected) {
  auto config = KernelConfig::Parse("CONFIG_HZ_1000=y\n# CONFIG_HZ_1000 is not set\n", "rt.config",
                                    /*reject_conflicts=*/true);
  ASSERT_FALSE(config);
  EXPECT_EQ(config.error().code, ExitCode::kUsage);
  EXPECT_NE(config.error().message.find("rt.config:2"), std::string::npos);
  EXPECT_NE(config.error().message.find("line 1"), std::string::npos);
}

TEST(KernelConfigTest, RepeatingTheSameValueInAFragmentIsFine) {
  EXPECT_TRUE(KernelConfig::Parse("CONFIG_X=y\nCONFIG_X=y\n", "f", true));
}

TEST(KernelConfigTest, BadLinesNameFileAndLine) {
  for (const char* bad :
       {"PREEMPT_RT=y", "CONFIG_PREEMPT_RT", "CONFIG_=y", "CONFIG_A B=y", "CONFIG_EXPERT="}) {
    auto config = KernelConfig::Parse(std::string("CONFIG_OK=y\n") + bad + "\n", "frag");
    ASSERT_FALSE(config) << bad;
    EXPECT_EQ(config.error().code, ExitCode::kUsage);
    EXPECT_NE(config.error().message.find("frag:2"), std::string::npos) << config.error().message;
  }
}

TEST(KernelConfigTest, EmptyTextIsAnEmptyConfig) {
  auto config = KernelConfig::Parse("", "t");
  ASSERT_TRUE(config);
  EXPECT_TRUE(config->entries().empty());
}

TEST(MajorMinorTest, ParsesReleaseStrings) {
  EXPECT_EQ(MajorMinor("6.12.47-v8-16k-rt"), std::make_pair(6, 12));
  EXPECT_EQ(MajorMinor("6.6"), std::make_pair(6, 6));
  EXPECT_EQ(MajorMinor("5.15.0-rc7"), std::make_pair(5, 15));
  EXPECT_EQ(MajorMinor(""), std::nullopt);
  EXPECT_EQ(MajorMinor("6"), std::nullopt);
  EXPECT_EQ(MajorMinor("v6.12"), std::nullopt);
}

}  // namespace
}  // namespace rtpulse::kernel
