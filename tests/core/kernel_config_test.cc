#include "sys/kernel_config.h"

#include <gtest/gtest.h>

#include "core/gzip.h"
#include "sys/fake_machine.h"

namespace rtpulse::sys {
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

TEST(KernelConfigTest, ReadsValuesAndNotSetLines) {
  const auto c = KernelConfig::Parse(kConfig);
  EXPECT_EQ(c.Get("PREEMPT_RT"), "y");
  EXPECT_EQ(c.Get("CONFIG_PREEMPT_RT"), "y");
  EXPECT_EQ(c.Get("PREEMPT"), "n");
  EXPECT_EQ(c.Get("HZ"), "1000");
  EXPECT_EQ(c.Get("LOCALVERSION"), "\"-v8-16k-rt\"");
  EXPECT_EQ(c.Get("CONFIGS"), "m");
  EXPECT_EQ(c.Get("NO_HZ_FULL"), std::nullopt);
}

TEST(KernelConfigTest, OnAndOff) {
  const auto c = KernelConfig::Parse(kConfig);
  EXPECT_TRUE(c.IsOn("PREEMPT_RT"));
  EXPECT_FALSE(c.IsOff("PREEMPT_RT"));
  EXPECT_FALSE(c.IsOn("PREEMPT"));
  EXPECT_TRUE(c.IsOff("PREEMPT"));
  EXPECT_FALSE(c.IsOn("CONFIGS")) << "a module is not built in";
  EXPECT_FALSE(c.IsOff("CONFIGS"));
  EXPECT_TRUE(c.IsOff("NOT_MENTIONED")) << "Kconfig treats absent as off";
}

TEST(KernelConfigTest, SkipsWhatItDoesNotUnderstand) {
  const auto c = KernelConfig::Parse(kConfig);
  EXPECT_EQ(c.Get("FAKE"), std::nullopt);
  EXPECT_EQ(c.Get("WITH SPACE"), std::nullopt);
  EXPECT_EQ(c.size(), 5u);
  EXPECT_EQ(KernelConfig::Parse("CONFIG_CRLF=y\r\n").Get("CRLF"), "y");
}

TEST(KernelConfigTest, LastAssignmentWins) {
  EXPECT_EQ(KernelConfig::Parse("CONFIG_HZ=250\nCONFIG_HZ=1000\n").Get("HZ"), "1000");
  EXPECT_EQ(KernelConfig::Parse("").size(), 0u);
}

TEST(LoadKernelConfigTest, PrefersProcConfigGz) {
  testutil::FakeTree tree;
  tree.Write("/proc/config.gz", *Gzip("CONFIG_PREEMPT_RT=y\n"));
  tree.Write("/boot/config-6.12.0", "# CONFIG_PREEMPT_RT is not set\n");
  const auto loaded = LoadKernelConfig(tree.Root(), "6.12.0");
  ASSERT_TRUE(loaded.has_value());
  EXPECT_EQ(loaded->source, "/proc/config.gz");
  EXPECT_TRUE(loaded->config.IsOn("PREEMPT_RT"));
}

TEST(LoadKernelConfigTest, FallsBackToBootConfigOfThisRelease) {
  testutil::FakeTree tree;
  tree.Write("/boot/config-6.1.0", "CONFIG_HZ=100\n");
  tree.Write("/boot/config-6.12.0", "CONFIG_HZ=250\n");
  const auto loaded = LoadKernelConfig(tree.Root(), "6.12.0");
  ASSERT_TRUE(loaded.has_value());
  EXPECT_EQ(loaded->source, "/boot/config-6.12.0");
  EXPECT_EQ(loaded->config.Get("HZ"), "250");
}

TEST(LoadKernelConfigTest, CorruptGzipIsReportedAndTheBootFileUsed) {
  testutil::FakeTree tree;
  tree.Write("/proc/config.gz", "CONFIG_HZ=1000\n");  // not gzip
  tree.Write("/boot/config-6.12.0", "CONFIG_HZ=250\n");
  const auto loaded = LoadKernelConfig(tree.Root(), "6.12.0");
  ASSERT_TRUE(loaded.has_value());
  EXPECT_EQ(loaded->source, "/boot/config-6.12.0");

  testutil::FakeTree only_corrupt;
  only_corrupt.Write("/proc/config.gz", "junk");
  std::string problem;
  EXPECT_FALSE(LoadKernelConfig(only_corrupt.Root(), "6.12.0", &problem).has_value());
  EXPECT_NE(problem.find("/proc/config.gz: not valid gzip"), std::string::npos) << problem;
  EXPECT_NE(problem.find("/boot/config-6.12.0"), std::string::npos) << problem;
}

TEST(LoadKernelConfigTest, NothingToRead) {
  testutil::FakeTree tree;
  std::string problem;
  EXPECT_FALSE(LoadKernelConfig(tree.Root(), "6.12.0", &problem).has_value());
  EXPECT_EQ(problem, "neither /proc/config.gz nor /boot/config-6.12.0 is readable");
}

}  // namespace
}  // namespace rtpulse::sys
