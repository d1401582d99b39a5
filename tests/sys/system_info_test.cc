// ProbeSystem's preemption detection: uname -v, the kernel config, /sys/kernel/realtime.

#include "sys/system_info.h"

#include <gtest/gtest.h>

#include "core/gzip.h"
#include "sys/fake_machine.h"

namespace rtpulse::sys {
namespace {

SystemInfo Probe(testutil::FakeTree& tree, const std::string& version) {
  tree.Write("/proc/sys/kernel/version", version + "\n");
  tree.Write("/proc/sys/kernel/osrelease", "6.12.0\n");
  tree.Write("/proc/sys/kernel/arch", "aarch64\n");
  return ProbeSystem(tree.Root());
}

bool Mentions(const SystemInfo& info, const std::string& text) {
  for (const auto& e : info.preemption_evidence) {
    if (e.find(text) != std::string::npos) return true;
  }
  return false;
}

TEST(PreemptionTest, UnameSaysRt) {
  testutil::FakeTree tree;
  const auto info = Probe(tree, "#1 SMP PREEMPT_RT Fri Oct 17 09:12:44 BST 2025");
  EXPECT_TRUE(info.preempt_rt);
  EXPECT_EQ(info.preemption_model, "PREEMPT_RT");
  EXPECT_EQ(info.machine, "aarch64") << "from /proc/sys/kernel/arch of the tree";
  EXPECT_FALSE(info.kernel_config.has_value());
}

TEST(PreemptionTest, OldRtPatchesWroteTwoWords) {
  testutil::FakeTree tree;
  EXPECT_TRUE(Probe(tree, "#1 SMP PREEMPT RT Mon Jan 1 00:00:00 UTC 2018").preempt_rt);
}

TEST(PreemptionTest, ConfigRevealsRtWhenUnameShowsDynamic) {
  testutil::FakeTree tree;
  tree.Write("/proc/config.gz", *Gzip("CONFIG_PREEMPT_RT=y\nCONFIG_PREEMPT_DYNAMIC=y\n"));
  const auto info = Probe(tree, "#1 SMP PREEMPT_DYNAMIC Thu Jan 1 00:00:00 UTC 2025");
  EXPECT_TRUE(info.preempt_rt);
  EXPECT_TRUE(Mentions(info, "CONFIG_PREEMPT_RT=y in /proc/config.gz"));
  EXPECT_TRUE(Mentions(info, "disagree"));
}

TEST(PreemptionTest, RealtimeSysfsIsEvidenceButNotRequired) {
  testutil::FakeTree with;
  with.Write("/sys/kernel/realtime", "1\n");
  const auto patched = Probe(with, "#1 SMP Thu Jan 1 00:00:00 UTC 2025");
  EXPECT_TRUE(patched.preempt_rt);
  EXPECT_TRUE(patched.realtime_sysfs);
  EXPECT_TRUE(Mentions(patched, "/sys/kernel/realtime = 1"));

  testutil::FakeTree mainline;
  const auto rt = Probe(mainline, "#1 SMP PREEMPT_RT Thu Jan 1 00:00:00 UTC 2025");
  EXPECT_TRUE(rt.preempt_rt);
  EXPECT_FALSE(rt.realtime_sysfs);
}

TEST(PreemptionTest, DynamicModeFromConfigDefaultThenBootParameterThenDebugfs) {
  testutil::FakeTree tree;
  tree.Write("/boot/config-6.12.0", "CONFIG_PREEMPT_DYNAMIC=y\nCONFIG_PREEMPT_NONE=y\n");
  const std::string version = "#1 SMP PREEMPT_DYNAMIC @0";
  auto info = Probe(tree, version);
  EXPECT_EQ(info.preemption_model, "PREEMPT_DYNAMIC");
  EXPECT_EQ(info.preempt_dynamic_mode, "none");
  EXPECT_FALSE(info.preempt_rt);

  tree.Write("/proc/cmdline", "quiet preempt=full\n");
  EXPECT_EQ(Probe(tree, version).preempt_dynamic_mode, "full");

  tree.Write("/sys/kernel/debug/sched/preempt", "none (voluntary) full lazy\n");
  info = Probe(tree, version);
  EXPECT_EQ(info.preempt_dynamic_mode, "voluntary");
  EXPECT_TRUE(Mentions(info, "/sys/kernel/debug/sched/preempt"));
}

TEST(PreemptionTest, OtherModels) {
  testutil::FakeTree preempt;
  EXPECT_EQ(Probe(preempt, "#1 SMP PREEMPT Debian 1:6.12.47-1+rpt1").preemption_model, "PREEMPT");
  testutil::FakeTree voluntary;
  voluntary.Write("/boot/config-6.12.0", "CONFIG_PREEMPT_VOLUNTARY=y\n");
  EXPECT_EQ(Probe(voluntary, "#1 SMP Debian 6.12.0-1").preemption_model, "PREEMPT_VOLUNTARY");
  testutil::FakeTree none;
  EXPECT_EQ(Probe(none, "#1 SMP Debian 6.1.0-28").preemption_model, "none");
}

TEST(EnvironmentWarningsTest, NamesTheModeAndTheVm) {
  SystemInfo info;
  info.preemption_model = "PREEMPT_DYNAMIC";
  info.preempt_dynamic_mode = "none";
  info.hypervisor = "KVM";
  info.governors = {"performance", "schedutil"};
  const auto warnings = EnvironmentWarnings(info);
  ASSERT_EQ(warnings.size(), 3u);
  EXPECT_NE(warnings[0].find("PREEMPT_DYNAMIC, mode none"), std::string::npos) << warnings[0];
  EXPECT_NE(warnings[1].find("KVM"), std::string::npos);
  EXPECT_NE(warnings[2].find("schedutil"), std::string::npos);

  SystemInfo rt;
  rt.preempt_rt = true;
  rt.preemption_model = "PREEMPT_RT";
  rt.governors = {"performance"};
  EXPECT_TRUE(EnvironmentWarnings(rt).empty());
}

TEST(HypervisorTest, KvmClockNamesTheHypervisorBehindTheCpuFlag) {
  testutil::FakeTree tree;
  tree.Write("/proc/cpuinfo", "flags\t\t: fpu tsc hypervisor lahf_lm\n");
  tree.Write("/sys/devices/system/clocksource/clocksource0/available_clocksource",
             "tsc kvm-clock \n");
  EXPECT_EQ(Probe(tree, "#1 SMP").hypervisor, "KVM (cpuinfo flag, kvm-clock)");
  testutil::FakeTree bare;
  bare.Write("/proc/cpuinfo", "flags\t\t: fpu tsc lahf_lm\n");
  EXPECT_EQ(Probe(bare, "#1 SMP").hypervisor, "");
}

}  // namespace
}  // namespace rtpulse::sys
