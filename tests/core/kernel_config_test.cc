// The one kernel-config reader: strict (`rtpulse kernel verify`) and lenient (the audit), and
// its loader of the running kernel's config.

#include "core/kernel_config.h"

#include <gtest/gtest.h>

#include "core/gzip.h"
#include "support/fake_tree.h"

namespace rtpulse {
namespace {

constexpr const char* kConfig = R"(#
# Automatically generated file; DO NOT EDIT.
# Linux/arm64 6.12.47 Kernel Configuration
#
CONFIG_PREEMPT_RT=y
# CONFIG_PREEMPT is not set
CONFIG_HZ=1000
CONFIG_LOCALVERSION="-v8-16k-rt"
CONFIG_CONFIGS=m

# a comment with CONFIG_FAKE=y inside
garbage line
CONFIG_=y
CONFIG_WITH SPACE=y
)";

// Lenient reading (the audit's, formerly sys::KernelConfig).
TEST(LenientKernelConfigTest, ReadsValuesAndNotSetLines) {
  const auto c = KernelConfig::ParseLenient(kConfig);
  EXPECT_EQ(c.Get("PREEMPT_RT"), "y");
  EXPECT_EQ(c.Get("CONFIG_PREEMPT_RT"), "y");
  EXPECT_EQ(c.Get("PREEMPT"), "n");
  EXPECT_EQ(c.Get("HZ"), "1000");
  EXPECT_EQ(c.Get("LOCALVERSION"), "\"-v8-16k-rt\"");
  EXPECT_EQ(c.Get("CONFIGS"), "m");
  EXPECT_EQ(c.Get("NO_HZ_FULL"), std::nullopt);
}

TEST(LenientKernelConfigTest, OnAndOff) {
  const auto c = KernelConfig::ParseLenient(kConfig);
  EXPECT_TRUE(c.IsOn("PREEMPT_RT"));
  EXPECT_FALSE(c.IsOff("PREEMPT_RT"));
  EXPECT_FALSE(c.IsOn("PREEMPT"));
  EXPECT_TRUE(c.IsOff("PREEMPT"));
  EXPECT_FALSE(c.IsOn("CONFIGS")) << "a module is not built in";
  EXPECT_FALSE(c.IsOff("CONFIGS"));
  EXPECT_TRUE(c.IsOff("NOT_MENTIONED")) << "Kconfig treats absent as off";
}

TEST(LenientKernelConfigTest, SkipsWhatItDoesNotUnderstand) {
  const auto c = KernelConfig::ParseLenient(kConfig);
  EXPECT_EQ(c.Get("FAKE"), std::nullopt);
  EXPECT_EQ(c.Get("WITH SPACE"), std::nullopt);
  EXPECT_EQ(c.size(), 5u);
  EXPECT_EQ(KernelConfig::ParseLenient("CONFIG_CRLF=y\r\n").Get("CRLF"), "y");
}

TEST(LenientKernelConfigTest, LastAssignmentWins) {
  EXPECT_EQ(KernelConfig::ParseLenient("CONFIG_HZ=250\nCONFIG_HZ=1000\n").Get("HZ"), "1000");
  EXPECT_EQ(KernelConfig::ParseLenient("").size(), 0u);
}

TEST(LoadKernelConfigTest, PrefersProcConfigGz) {
  testutil::FakeTree tree;
  tree.Write("/proc/config.gz", *Gzip("CONFIG_PREEMPT_RT=y\n"));
  tree.Write("/boot/config-6.12.0", "# CONFIG_PREEMPT_RT is not set\n");
  const auto loaded = LoadKernelConfig(tree.Root(), "6.12.0", ConfigReading::kLenient);
  ASSERT_TRUE(loaded.has_value());
  EXPECT_EQ(loaded->source, "/proc/config.gz");
  EXPECT_TRUE(loaded->config.IsOn("PREEMPT_RT"));
}

TEST(LoadKernelConfigTest, FallsBackToBootConfigOfThisRelease) {
  testutil::FakeTree tree;
  tree.Write("/boot/config-6.1.0", "CONFIG_HZ=100\n");
  tree.Write("/boot/config-6.12.0", "CONFIG_HZ=250\n");
  const auto loaded = LoadKernelConfig(tree.Root(), "6.12.0", ConfigReading::kLenient);
  ASSERT_TRUE(loaded.has_value());
  EXPECT_EQ(loaded->source, "/boot/config-6.12.0");
  EXPECT_EQ(loaded->config.Get("HZ"), "250");
}

TEST(LoadKernelConfigTest, CorruptGzipIsReportedAndTheBootFileUsed) {
  testutil::FakeTree tree;
  tree.Write("/proc/config.gz", "CONFIG_HZ=1000\n");  // not gzip
  tree.Write("/boot/config-6.12.0", "CONFIG_HZ=250\n");
  const auto loaded = LoadKernelConfig(tree.Root(), "6.12.0", ConfigReading::kLenient);
  ASSERT_TRUE(loaded.has_value());
  EXPECT_EQ(loaded->source, "/boot/config-6.12.0");

  testutil::FakeTree only_corrupt;
  only_corrupt.Write("/proc/config.gz", "junk");
  const auto none = LoadKernelConfig(only_corrupt.Root(), "6.12.0", ConfigReading::kLenient);
  ASSERT_FALSE(none.has_value());
  const std::string problem = none.error().message;
  EXPECT_NE(problem.find("/proc/config.gz: not valid gzip"), std::string::npos) << problem;
  EXPECT_NE(problem.find("/boot/config-6.12.0"), std::string::npos) << problem;
}

TEST(LoadKernelConfigTest, NothingToRead) {
  testutil::FakeTree tree;
  for (const auto reading : {ConfigReading::kLenient, ConfigReading::kStrict}) {
    const auto loaded = LoadKernelConfig(tree.Root(), "6.12.0", reading);
    ASSERT_FALSE(loaded.has_value());
    EXPECT_EQ(loaded.error().message,
              "neither /proc/config.gz nor /boot/config-6.12.0 is readable");
    EXPECT_EQ(loaded.error().code, ExitCode::kResource);
  }
}

// Strict reading (`rtpulse kernel verify`, formerly kernel::KernelConfig).
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

// Where the two modes part: strict refuses what lenient skips, and the loader's strict mode
// does not pass over a corrupt /proc/config.gz.
TEST(KernelConfigTest, StrictRefusesWhatLenientSkips) {
  const auto strict = KernelConfig::Parse(kConfig, "audit.config");
  ASSERT_FALSE(strict);
  EXPECT_EQ(strict.error().code, ExitCode::kUsage);
  EXPECT_NE(strict.error().message.find("audit.config:12: cannot read 'garbage line'"),
            std::string::npos)
      << strict.error().message;
  EXPECT_FALSE(KernelConfig::Parse("CONFIG_EXPERT=\n", "f"));
  EXPECT_EQ(KernelConfig::ParseLenient("CONFIG_EXPERT=\n").Get("EXPERT"), "")
      << "lenient keeps an empty value";
  const auto lenient = KernelConfig::ParseLenient(kConfig, "audit.config");
  EXPECT_EQ(lenient.version(), "6.12.47");
  EXPECT_EQ(lenient.arch(), "arm64");
  EXPECT_EQ(lenient.origin(), "audit.config");
}

TEST(KernelConfigTest, GetAcceptsTheConfigPrefixInBothModes) {
  auto config = KernelConfig::Parse("CONFIG_HZ=250\n# CONFIG_PREEMPT is not set\n", "t");
  ASSERT_TRUE(config) << config.error().message;
  EXPECT_EQ(config->Get("CONFIG_HZ"), "250");
  EXPECT_TRUE(config->IsOff("CONFIG_PREEMPT"));
  EXPECT_TRUE(config->IsOff("NOT_MENTIONED"));
  EXPECT_FALSE(config->IsOff("HZ"));
  EXPECT_EQ(config->size(), 2u);
}

TEST(LoadKernelConfigTest, StrictModeDoesNotPassOverACorruptProcConfigGz) {
  testutil::FakeTree tree;
  tree.Write("/proc/config.gz", "CONFIG_HZ=1000\n");  // not gzip
  tree.Write("/boot/config-6.12.0", "CONFIG_HZ=250\n");
  const auto loaded = LoadKernelConfig(tree.Root(), "6.12.0", ConfigReading::kStrict);
  ASSERT_FALSE(loaded.has_value());
  EXPECT_EQ(loaded.error().code, ExitCode::kFailure);
  EXPECT_NE(loaded.error().message.find("/proc/config.gz: not valid gzip"), std::string::npos)
      << loaded.error().message;
}

TEST(LoadKernelConfigTest, StrictModeRefusesALineItCannotRead) {
  testutil::FakeTree tree;
  tree.Write("/boot/config-6.12.0", "CONFIG_HZ=250\ngarbage\n");
  const auto strict = LoadKernelConfig(tree.Root(), "6.12.0", ConfigReading::kStrict);
  ASSERT_FALSE(strict.has_value());
  EXPECT_EQ(strict.error().code, ExitCode::kUsage);
  EXPECT_NE(strict.error().message.find(tree.path() + "/boot/config-6.12.0:2"), std::string::npos)
      << strict.error().message;
  const auto lenient = LoadKernelConfig(tree.Root(), "6.12.0", ConfigReading::kLenient);
  ASSERT_TRUE(lenient.has_value());
  EXPECT_EQ(lenient->config.Get("HZ"), "250");
  EXPECT_EQ(lenient->source, "/boot/config-6.12.0");
}

}  // namespace
}  // namespace rtpulse
