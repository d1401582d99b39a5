#include "sys/boot_params.h"

#include <gtest/gtest.h>

namespace rtpulse::sys {
namespace {

using Cpus = std::vector<int>;

TEST(BootParamsTest, SplitsOnWhitespaceAndKeepsValues) {
  const auto p = BootParams::Parse("console=ttyS0 quiet  isolcpus=domain,2-3\n");
  EXPECT_EQ(p.params().size(), 3u);
  EXPECT_EQ(p.Get("console"), "ttyS0");
  EXPECT_EQ(p.Get("quiet"), "");
  EXPECT_TRUE(p.Has("quiet"));
  EXPECT_EQ(p.Get("isolcpus"), "domain,2-3");
  EXPECT_FALSE(p.Has("nohz_full"));
  EXPECT_EQ(p.Get("nohz_full"), std::nullopt);
}

TEST(BootParamsTest, StopsAtDoubleDashBecauseTheRestBelongsToInit) {
  const auto p = BootParams::Parse("rdinit=/sbin/init -- --firecracker-init isolcpus=1");
  EXPECT_TRUE(p.Has("rdinit"));
  EXPECT_FALSE(p.Has("isolcpus"));
  EXPECT_FALSE(p.Has("--firecracker-init"));
}

TEST(BootParamsTest, QuotesGroupAndAreDropped) {
  const auto p = BootParams::Parse(R"(dyndbg="file foo.c +p" "quoted=a b" last=1)");
  EXPECT_EQ(p.Get("dyndbg"), "file foo.c +p");
  EXPECT_EQ(p.Get("quoted"), "a b");
  EXPECT_EQ(p.Get("last"), "1");
}

TEST(BootParamsTest, DashesAndUnderscoresAreTheSameAndTheLastValueWins) {
  const auto p = BootParams::Parse("rcu-nocbs=1 nohz_full=1 nohz-full=2-3");
  EXPECT_EQ(p.Get("rcu_nocbs"), "1");
  EXPECT_EQ(p.Get("nohz_full"), "2-3");
  EXPECT_EQ(p.Get("nohz-full"), "2-3");
}

TEST(BootParamsTest, EmptyCommandLine) {
  EXPECT_TRUE(BootParams::Parse("").params().empty());
  EXPECT_TRUE(BootParams::Parse("   \n").params().empty());
}

TEST(KernelCpuListTest, PlainListsRangesAndSpecialWords) {
  EXPECT_EQ(*ParseKernelCpuList("2-3", 3), (Cpus{2, 3}));
  EXPECT_EQ(*ParseKernelCpuList("0,2-3,1", 3), (Cpus{0, 1, 2, 3}));
  EXPECT_EQ(*ParseKernelCpuList("all", 3), (Cpus{0, 1, 2, 3}));
  EXPECT_EQ(*ParseKernelCpuList("1-N", 3), (Cpus{1, 2, 3}));
  EXPECT_EQ(*ParseKernelCpuList("N", 7), (Cpus{7}));
}

TEST(KernelCpuListTest, StridesUsedOverGroupSize) {
  // Documentation/admin-guide/kernel-parameters.rst: 0-7:2/4 is 0,1,4,5.
  EXPECT_EQ(*ParseKernelCpuList("0-7:2/4", 7), (Cpus{0, 1, 4, 5}));
  EXPECT_EQ(*ParseKernelCpuList("1-7:1/2", 7), (Cpus{1, 3, 5, 7}));
}

TEST(KernelCpuListTest, RejectsWhatTheKernelRejects) {
  for (const char* bad : {"", "3-1", "x", "1-", "-1", "4", "0-4", "0-7:3/2", "0-7:0/2", "1,,2"}) {
    EXPECT_FALSE(ParseKernelCpuList(bad, 3).has_value()) << bad;
  }
}

TEST(IsolcpusTest, NoFlagsMeansDomain) {
  const auto p = ParseIsolcpus("2-3", 3);
  ASSERT_TRUE(p.has_value());
  EXPECT_TRUE(p->flags.empty());
  EXPECT_TRUE(p->domain);
  EXPECT_EQ(p->cpus, (Cpus{2, 3}));
}

TEST(IsolcpusTest, FlagsBeforeTheList) {
  const auto p = ParseIsolcpus("managed_irq,domain,1,3", 3);
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(p->flags, (std::vector<std::string>{"managed_irq", "domain"}));
  EXPECT_TRUE(p->domain);
  EXPECT_EQ(p->cpus, (Cpus{1, 3}));
}

TEST(IsolcpusTest, FlagsWithoutDomainDoNotIsolateFromTheScheduler) {
  const auto p = ParseIsolcpus("nohz,managed_irq,2-3", 3);
  ASSERT_TRUE(p.has_value());
  EXPECT_FALSE(p->domain);
  EXPECT_EQ(p->cpus, (Cpus{2, 3}));
}

TEST(IsolcpusTest, UnknownFlagsAreSkippedAsModernKernelsDo) {
  const auto p = ParseIsolcpus("domain,newflag,2", 3);
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(p->unknown_flags, (std::vector<std::string>{"newflag"}));
  EXPECT_EQ(p->cpus, (Cpus{2}));
}

TEST(IsolcpusTest, BadValues) {
  EXPECT_FALSE(ParseIsolcpus("domain", 3).has_value());
  EXPECT_FALSE(ParseIsolcpus("domain,", 3).has_value());
  EXPECT_FALSE(ParseIsolcpus("2-9", 3).has_value());
}

TEST(CpuSetTest, ComparingBootParametersWithSysfs) {
  const Cpus asked{1, 2, 3};
  const Cpus isolated{2, 3};
  EXPECT_EQ(CpusMinus(asked, isolated), (Cpus{1}));
  EXPECT_EQ(CpusMinus(isolated, asked), Cpus{});
  EXPECT_EQ(CpusIntersect(asked, Cpus{0, 3}), (Cpus{3}));
  EXPECT_EQ(CpusIntersect(Cpus{}, asked), Cpus{});
  EXPECT_EQ(CpusUnion(Cpus{0, 2}, Cpus{1, 2}), (Cpus{0, 1, 2}));
}

TEST(CpuMaskTest, HexMasksWithCommaGroups) {
  EXPECT_EQ(*ParseCpuMask("f"), (Cpus{0, 1, 2, 3}));
  EXPECT_EQ(*ParseCpuMask("3\n"), (Cpus{0, 1}));
  EXPECT_EQ(*ParseCpuMask("00000000,00000101"), (Cpus{0, 8}));
  EXPECT_EQ(*ParseCpuMask("1,00000000"), (Cpus{32}));
  EXPECT_EQ(*ParseCpuMask("0"), Cpus{});
  EXPECT_EQ(*ParseCpuMask("A"), (Cpus{1, 3}));
  EXPECT_FALSE(ParseCpuMask("").has_value());
  EXPECT_FALSE(ParseCpuMask("0x3").has_value());
  EXPECT_FALSE(ParseCpuMask("g").has_value());
}

}  // namespace
}  // namespace rtpulse::sys
