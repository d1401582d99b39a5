// The checks one by one, on small fixture trees built in the test: thresholds, edge cases and
// every status a check can give. The end-to-end golden tests cover the four full fixtures.

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <set>

#include "sys/check.h"
#include "sys/fake_machine.h"

namespace rtpulse::sys {
namespace {

using testutil::FakeCommands;
using testutil::FakeTree;
using testutil::RootProcess;

constexpr CheckStatus kPass = CheckStatus::kPass;
constexpr CheckStatus kWarn = CheckStatus::kWarn;
constexpr CheckStatus kFail = CheckStatus::kFail;
constexpr CheckStatus kInfo = CheckStatus::kInfo;

CheckResult RunCheck(const FakeTree& tree, const std::string& id, const FakeCommands& commands = {},
                     const ProcessFacts& process = RootProcess()) {
  const FsRoot root = tree.Root();
  const CheckContext context(root, commands, process);
  for (const auto& check : AllChecks()) {
    if (check.id == id) return check.run(context);
  }
  ADD_FAILURE() << "no check " << id;
  return {};
}

bool Has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

/// A 4-CPU machine with CPUs 2-3 isolated (and nothing else).
FakeTree FourCpus(const std::string& isolated = "2-3", const std::string& cmdline = "") {
  FakeTree tree;
  tree.Write("/sys/devices/system/cpu/online", "0-3\n")
      .Write("/sys/devices/system/cpu/possible", "0-3\n")
      .Write("/sys/devices/system/cpu/isolated", isolated + "\n")
      .Write("/proc/cmdline", cmdline + "\n");
  return tree;
}

TEST(CheckRegistryTest, IdsAreUniqueAndAreasKnown) {
  std::set<std::string> ids;
  const std::set<std::string> areas = {"kernel",   "isolation", "cpu",    "memory",
                                       "platform", "tools",     "process"};
  for (const auto& check : AllChecks()) {
    EXPECT_TRUE(ids.insert(check.id).second) << check.id;
    EXPECT_TRUE(areas.count(check.area)) << check.area;
    EXPECT_EQ(std::string(check.id).rfind(std::string(check.area) + ".", 0), 0u) << check.id;
    EXPECT_NE(AreaTitle(check.area), check.area);
    EXPECT_EQ(check.process_scope, std::string(check.area) == "process");
  }
  for (const char* required : {"kernel.preemption",
                               "kernel.hz",
                               "kernel.nohz_full",
                               "kernel.hrtimers",
                               "isolation.isolcpus",
                               "isolation.irqs",
                               "cpu.governor",
                               "cpu.idle",
                               "cpu.smt",
                               "memory.rt_throttling",
                               "memory.thp",
                               "memory.swap",
                               "kernel.clocksource",
                               "platform.virtualization",
                               "platform.steal",
                               "platform.board",
                               "platform.throttling",
                               "tools.stress_ng",
                               "tools.cyclictest",
                               "process.privileges",
                               "process.memlock"}) {
    EXPECT_TRUE(ids.count(required)) << required;
  }
}

TEST(CheckRegistryTest, AnEmptyTreeFailsNothingAndExplainsEverything) {
  FakeTree empty;
  const FsRoot root = empty.Root();
  const FakeCommands commands;
  const CheckContext context(root, commands, RootProcess());
  const auto results = RunChecks(context);
  ASSERT_EQ(results.size(), AllChecks().size());
  for (const auto& r : results) {
    EXPECT_NE(r.status, kFail) << r.id << ": " << r.found;
    EXPECT_FALSE(r.found.empty()) << r.id;
    EXPECT_FALSE(r.why.empty()) << r.id;
    EXPECT_FALSE(r.title.empty()) << r.id;
    if (r.status == kWarn) {
      EXPECT_FALSE(r.fix.empty()) << r.id << " warns without a fix";
    }
  }
}

// --------------------------------------------------------------------------- kernel

TEST(PreemptionCheckTest, FixDependsOnTheMachine) {
  FakeTree debian;
  debian.Write("/proc/sys/kernel/version", "#1 SMP PREEMPT_DYNAMIC @0\n")
      .Write("/proc/sys/kernel/arch", "x86_64\n")
      .Write("/etc/os-release", "ID=debian\n")
      .Write("/etc/default/grub", "GRUB_CMDLINE_LINUX=\"\"\n")
      .Write("/sys/kernel/debug/sched/preempt", "(none) voluntary full lazy\n");
  auto r = RunCheck(debian, "kernel.preemption");
  EXPECT_EQ(r.status, kWarn);
  EXPECT_TRUE(Has(r.found, "PREEMPT_DYNAMIC running in mode 'none'")) << r.found;
  EXPECT_TRUE(Has(r.fix, "apt install linux-image-rt-amd64")) << r.fix;
  EXPECT_TRUE(Has(r.fix, "'preempt=full' to GRUB_CMDLINE_LINUX")) << r.fix;

  FakeTree pi;
  pi.Write("/proc/sys/kernel/version", "#1 SMP PREEMPT Debian 1:6.12.47-1+rpt1\n")
      .Write("/proc/device-tree/model", std::string("Raspberry Pi 4 Model B Rev 1.4\0", 31))
      .Write("/boot/cmdline.txt", "console=tty1\n");
  r = RunCheck(pi, "kernel.preemption");
  EXPECT_EQ(r.status, kWarn);
  EXPECT_TRUE(Has(r.fix, "raspberrypi/linux")) << r.fix;
  EXPECT_FALSE(Has(r.fix, "preempt=full")) << "not a PREEMPT_DYNAMIC kernel";

  FakeTree rt;
  rt.Write("/proc/sys/kernel/version", "#1 SMP PREEMPT_RT @0\n");
  EXPECT_EQ(RunCheck(rt, "kernel.preemption").status, kPass);
}

TEST(BootParamFixTest, PiOldImagesUseBootCmdlineTxt) {
  FakeTree pi;
  pi.Write("/proc/device-tree/model", std::string("Raspberry Pi 4 Model B Rev 1.4\0", 31))
      .Write("/boot/cmdline.txt", "console=tty1\n")
      .Write("/sys/kernel/mm/transparent_hugepage/enabled", "[always] madvise never\n");
  const auto r = RunCheck(pi, "memory.thp");
  EXPECT_TRUE(Has(r.fix, "single line of /boot/cmdline.txt")) << r.fix;
  pi.Write("/boot/firmware/cmdline.txt", "console=tty1\n");
  EXPECT_TRUE(Has(RunCheck(pi, "memory.thp").fix, "single line of /boot/firmware/cmdline.txt"));
}

TEST(TickCheckTest, Thresholds) {
  const auto hz = [](const std::string& value) {
    FakeTree tree;
    tree.Write("/proc/sys/kernel/osrelease", "6.12.0\n")
        .Write("/boot/config-6.12.0", "CONFIG_HZ=" + value + "\n");
    return RunCheck(tree, "kernel.hz").status;
  };
  EXPECT_EQ(hz("100"), kWarn);
  EXPECT_EQ(hz("250"), kInfo);
  EXPECT_EQ(hz("300"), kInfo);
  EXPECT_EQ(hz("1000"), kPass);
  FakeTree none;
  EXPECT_EQ(RunCheck(none, "kernel.hz").status, kInfo);
}

TEST(HighResTimersCheckTest, ConfigCommandLineAndTimerList) {
  FakeTree on;
  on.Write("/proc/sys/kernel/osrelease", "6.12.0\n")
      .Write("/boot/config-6.12.0", "CONFIG_HIGH_RES_TIMERS=y\n");
  EXPECT_EQ(RunCheck(on, "kernel.hrtimers").status, kPass);
  on.Write("/proc/cmdline", "quiet highres=off\n");
  EXPECT_EQ(RunCheck(on, "kernel.hrtimers").status, kFail);

  FakeTree off;
  off.Write("/proc/sys/kernel/osrelease", "6.12.0\n")
      .Write("/boot/config-6.12.0", "# CONFIG_HIGH_RES_TIMERS is not set\n");
  EXPECT_EQ(RunCheck(off, "kernel.hrtimers").status, kFail);

  FakeTree timer_list;
  timer_list.Write("/proc/timer_list",
                   "cpu: 0\n  .hres_active    : 1\ncpu: 1\n  .hres_active    : 0\n");
  const auto r = RunCheck(timer_list, "kernel.hrtimers");
  EXPECT_EQ(r.status, kFail);
  EXPECT_TRUE(Has(r.found, "hres_active on 1 of 2 CPUs")) << r.found;
}

TEST(NoHzFullSupportCheckTest, SysfsFileIsEvidenceWithoutConfig) {
  FakeTree with = FourCpus();
  with.Write("/sys/devices/system/cpu/nohz_full", "(null)\n");
  EXPECT_EQ(RunCheck(with, "kernel.nohz_full").status, kPass);
  FakeTree without = FourCpus();
  EXPECT_EQ(RunCheck(without, "kernel.nohz_full").status, kWarn) << "isolated CPUs keep the tick";
  FakeTree plain = FourCpus("");
  EXPECT_EQ(RunCheck(plain, "kernel.nohz_full").status, kInfo);
}

TEST(ClocksourceCheckTest, FastSlowAndJiffies) {
  const auto check = [](const std::string& current, const std::string& available) {
    FakeTree tree;
    tree.Write("/sys/devices/system/clocksource/clocksource0/current_clocksource", current + "\n")
        .Write("/sys/devices/system/clocksource/clocksource0/available_clocksource",
               available + " \n");
    return RunCheck(tree, "kernel.clocksource");
  };
  EXPECT_EQ(check("tsc", "tsc hpet acpi_pm").status, kPass);
  EXPECT_EQ(check("arch_sys_counter", "arch_sys_counter").status, kPass);
  auto hpet = check("hpet", "tsc hpet acpi_pm");
  EXPECT_EQ(hpet.status, kWarn);
  EXPECT_TRUE(Has(hpet.fix, "echo tsc > /sys/devices/system/clocksource/clocksource0/"));
  auto acpi = check("acpi_pm", "hpet acpi_pm");
  EXPECT_EQ(acpi.status, kWarn);
  EXPECT_TRUE(Has(acpi.fix, "rejected the TSC")) << acpi.fix;
  EXPECT_EQ(check("jiffies", "jiffies").status, kFail);
  EXPECT_EQ(check("mystery", "mystery").status, kInfo);
}

// --------------------------------------------------------------------------- isolation

TEST(IsolcpusCheckTest, AgreesWithSysfs) {
  FakeTree ok = FourCpus("2-3", "isolcpus=managed_irq,domain,2-3");
  EXPECT_EQ(RunCheck(ok, "isolation.isolcpus").status, kPass);
  FakeTree missing = FourCpus("2-3", "isolcpus=1-3");
  auto r = RunCheck(missing, "isolation.isolcpus");
  EXPECT_EQ(r.status, kFail);
  EXPECT_TRUE(Has(r.found, "the kernel did not isolate 1")) << r.found;
  FakeTree runtime = FourCpus("3", "");
  EXPECT_EQ(RunCheck(runtime, "isolation.isolcpus").status, kPass) << "cpuset isolation";
}

TEST(IsolcpusCheckTest, FlagsAndBadValues) {
  FakeTree no_domain = FourCpus("", "isolcpus=nohz,managed_irq,2-3");
  auto r = RunCheck(no_domain, "isolation.isolcpus");
  EXPECT_EQ(r.status, kInfo);
  EXPECT_TRUE(Has(r.fix, "isolcpus=domain,nohz,managed_irq,2-3")) << r.fix;
  FakeTree unknown = FourCpus("2-3", "isolcpus=domain,future,2-3");
  r = RunCheck(unknown, "isolation.isolcpus");
  EXPECT_EQ(r.status, kWarn);
  EXPECT_TRUE(Has(r.found, "future")) << r.found;
  FakeTree bad = FourCpus("", "isolcpus=2-7");
  EXPECT_EQ(RunCheck(bad, "isolation.isolcpus").status, kFail);
  FakeTree all = FourCpus("0-3", "isolcpus=0-3");
  EXPECT_EQ(RunCheck(all, "isolation.isolcpus").status, kWarn) << "no housekeeping CPU left";
}

TEST(IsolcpusCheckTest, SuggestsAnIsolationSetWhenThereIsNone) {
  FakeTree none = FourCpus("", "quiet");
  none.Write("/sys/devices/system/cpu/nohz_full", "(null)\n");
  const auto r = RunCheck(none, "isolation.isolcpus");
  EXPECT_EQ(r.status, kInfo);
  EXPECT_TRUE(
      Has(r.fix, "isolcpus=domain,managed_irq,2-3 nohz_full=2-3 rcu_nocbs=2-3 irqaffinity=0-1"))
      << r.fix;
  FakeTree one;
  one.Write("/sys/devices/system/cpu/online", "0\n");
  EXPECT_TRUE(RunCheck(one, "isolation.isolcpus").fix.empty());
}

TEST(NohzFullCheckTest, CommandLineAgainstSysfs) {
  FakeTree ignored = FourCpus("2-3", "nohz_full=2-3");
  auto r = RunCheck(ignored, "isolation.nohz_full");
  EXPECT_EQ(r.status, kFail);
  EXPECT_TRUE(Has(r.found, "ignores the parameter")) << r.found;

  FakeTree partial = FourCpus("2-3", "nohz_full=1-3");
  partial.Write("/sys/devices/system/cpu/nohz_full", "2-3\n");
  r = RunCheck(partial, "isolation.nohz_full");
  EXPECT_EQ(r.status, kFail);
  EXPECT_TRUE(Has(r.found, "left 1 ticking")) << r.found;

  FakeTree short_of_isolated = FourCpus("2-3", "nohz_full=3");
  short_of_isolated.Write("/sys/devices/system/cpu/nohz_full", "3\n");
  r = RunCheck(short_of_isolated, "isolation.nohz_full");
  EXPECT_EQ(r.status, kWarn);
  EXPECT_TRUE(Has(r.fix, "nohz_full=2-3")) << r.fix;

  FakeTree via_isolcpus = FourCpus("2-3", "isolcpus=nohz,domain,2-3");
  via_isolcpus.Write("/sys/devices/system/cpu/nohz_full", "2-3\n");
  EXPECT_EQ(RunCheck(via_isolcpus, "isolation.nohz_full").status, kPass);

  FakeTree not_asked = FourCpus("2-3", "");
  not_asked.Write("/sys/devices/system/cpu/nohz_full", "(null)\n");
  EXPECT_EQ(RunCheck(not_asked, "isolation.nohz_full").status, kWarn);
}

TEST(RcuNocbsCheckTest, IsolatedCpusNeedOffloading) {
  FakeTree partial = FourCpus("2-3", "rcu_nocbs=3");
  partial.Write("/sys/devices/system/cpu/nohz_full", "(null)\n");
  auto r = RunCheck(partial, "isolation.rcu_nocbs");
  EXPECT_EQ(r.status, kWarn);
  EXPECT_TRUE(Has(r.found, "isolated CPUs 2 run their own")) << r.found;
  EXPECT_TRUE(Has(r.fix, "rcu_nocbs=2-3")) << r.fix;

  FakeTree by_nohz = FourCpus("2-3", "nohz_full=2-3");
  by_nohz.Write("/sys/devices/system/cpu/nohz_full", "2-3\n");
  EXPECT_EQ(RunCheck(by_nohz, "isolation.rcu_nocbs").status, kPass);

  FakeTree unsupported = FourCpus("2-3", "rcu_nocbs=2-3");
  unsupported.Write("/proc/sys/kernel/osrelease", "6.12.0\n")
      .Write("/boot/config-6.12.0", "# CONFIG_RCU_NOCB_CPU is not set\n");
  EXPECT_EQ(RunCheck(unsupported, "isolation.rcu_nocbs").status, kFail);
}

TEST(IrqAffinityCheckTest, DefaultAffinityAndParameter) {
  FakeTree overlap = FourCpus("2-3", "irqaffinity=0-2");
  EXPECT_EQ(RunCheck(overlap, "isolation.irqaffinity").status, kFail);
  FakeTree by_default = FourCpus("2-3", "");
  by_default.Write("/proc/irq/default_smp_affinity", "f\n");
  const auto r = RunCheck(by_default, "isolation.irqaffinity");
  EXPECT_EQ(r.status, kWarn);
  EXPECT_TRUE(Has(r.fix, "irqaffinity=0-1")) << r.fix;
  EXPECT_TRUE(Has(r.fix, "echo 3 > /proc/irq/default_smp_affinity")) << r.fix;
  FakeTree good = FourCpus("2-3", "");
  good.Write("/proc/irq/default_smp_affinity", "3\n");
  EXPECT_EQ(RunCheck(good, "isolation.irqaffinity").status, kPass);
}

TEST(KthreadCpusCheckTest, MustStayOffIsolatedCpus) {
  FakeTree overlap = FourCpus("2-3", "kthread_cpus=0-3");
  EXPECT_EQ(RunCheck(overlap, "isolation.kthread_cpus").status, kFail);
  FakeTree good = FourCpus("2-3", "kthread_cpus=0-1");
  EXPECT_EQ(RunCheck(good, "isolation.kthread_cpus").status, kPass);
  FakeTree absent = FourCpus("2-3", "");
  EXPECT_EQ(RunCheck(absent, "isolation.kthread_cpus").status, kInfo);
}

constexpr const char* kInterrupts =
    "           CPU0       CPU1       CPU2       CPU3       \n"
    " 11:     412337      98213      10021      10020     GICv2  30 Level     arch_timer\n"
    " 29:       5604          0          0          0     GICv2 305 Level     mmc0\n"
    " 31:          0          0      48211          0     GICv2 189 Level     eth0\n"
    " 39:      30221          0          0          0  BRCM STB PCIe MSI 524288 Edge      "
    "xhci_hcd\n"
    "IPI0:      4125       3908        212        201       Rescheduling interrupts\n"
    "Err:          0\n";

TEST(DeviceIrqCheckTest, ReportsSharedIrqsOnIsolatedCpusAndSkipsPerCpuOnes) {
  FakeTree tree = FourCpus("2-3", "");
  tree.Write("/proc/interrupts", kInterrupts)
      .Write("/proc/irq/11/effective_affinity_list", "0-3\n")  // per-CPU timer: not movable
      .Write("/proc/irq/29/effective_affinity_list", "0\n")
      .Write("/proc/irq/31/effective_affinity_list", "2\n")
      .Write("/proc/irq/39/smp_affinity_list", "1-3\n");  // no effective: fall back
  const auto r = RunCheck(tree, "isolation.irqs");
  EXPECT_EQ(r.status, kWarn);
  EXPECT_TRUE(Has(r.found, "2 of 3 device IRQs")) << r.found;
  EXPECT_TRUE(Has(r.found, "31 (eth0) -> CPU 2")) << r.found;
  EXPECT_TRUE(Has(r.found, "39 (xhci_hcd) -> CPU 1-3")) << r.found;
  EXPECT_FALSE(Has(r.found, "arch_timer")) << r.found;
  EXPECT_TRUE(Has(r.fix, "for irq in 31 39; do echo 0-1 > /proc/irq/$irq/smp_affinity_list"))
      << r.fix;
}

TEST(DeviceIrqCheckTest, LongListsAreCut) {
  FakeTree tree = FourCpus("2-3", "");
  std::string interrupts = "           CPU0       CPU1       CPU2       CPU3       \n";
  for (int irq = 40; irq < 52; ++irq) {
    interrupts += fmt::format(" {}:  0  0  0  0  IO-APIC {}-edge dev{}\n", irq, irq, irq);
    tree.Write(fmt::format("/proc/irq/{}/effective_affinity_list", irq), "3\n");
  }
  tree.Write("/proc/interrupts", interrupts);
  const auto r = RunCheck(tree, "isolation.irqs");
  EXPECT_TRUE(Has(r.found, "12 of 12 device IRQs")) << r.found;
  EXPECT_TRUE(Has(r.found, "and 4 more")) << r.found;
  EXPECT_TRUE(Has(r.found, "40 (dev40) -> CPU 3")) << r.found;
}

TEST(DeviceIrqCheckTest, NoIsolationAndNoIrqsOnIsolatedCpus) {
  FakeTree none = FourCpus("", "");
  none.Write("/proc/interrupts", kInterrupts);
  EXPECT_EQ(RunCheck(none, "isolation.irqs").status, kInfo);
  FakeTree clean = FourCpus("2-3", "");
  clean.Write("/proc/interrupts", kInterrupts)
      .Write("/proc/irq/29/effective_affinity_list", "0\n")
      .Write("/proc/irq/31/effective_affinity_list", "1\n")
      .Write("/proc/irq/39/effective_affinity_list", "0\n");
  EXPECT_EQ(RunCheck(clean, "isolation.irqs").status, kPass);
}

// --------------------------------------------------------------------------- cpu

TEST(GovernorCheckTest, PoliciesAndPerCpuFallback) {
  FakeTree mixed = FourCpus("");
  mixed.Write("/sys/devices/system/cpu/cpufreq/policy0/scaling_governor", "performance\n")
      .Write("/sys/devices/system/cpu/cpufreq/policy0/affected_cpus", "0 1\n")
      .Write("/sys/devices/system/cpu/cpufreq/policy2/scaling_governor", "schedutil\n")
      .Write("/sys/devices/system/cpu/cpufreq/policy2/affected_cpus", "2 3\n");
  auto r = RunCheck(mixed, "cpu.governor");
  EXPECT_EQ(r.status, kWarn);
  EXPECT_EQ(r.found, "performance on CPUs 0-1; schedutil on CPUs 2-3");
  EXPECT_TRUE(Has(r.fix, "cpufreq.default_governor=performance")) << r.fix;

  FakeTree per_cpu;
  per_cpu.Write("/sys/devices/system/cpu/online", "0-1\n");
  for (int cpu : {0, 1}) {
    per_cpu.Write(fmt::format("/sys/devices/system/cpu/cpu{}/cpufreq/scaling_governor", cpu),
                  "performance\n");
  }
  r = RunCheck(per_cpu, "cpu.governor");
  EXPECT_EQ(r.status, kPass);
  EXPECT_EQ(r.found, "performance on CPUs 0-1");
}

TEST(FrequencyCheckTest, CappedMaximumWarns) {
  FakeTree tree = FourCpus("");
  const std::string p = "/sys/devices/system/cpu/cpufreq/policy0/";
  tree.Write(p + "scaling_governor", "performance\n")
      .Write(p + "affected_cpus", "0 1 2 3\n")
      .Write(p + "cpuinfo_min_freq", "600000\n")
      .Write(p + "cpuinfo_max_freq", "1800000\n")
      .Write(p + "scaling_min_freq", "600000\n")
      .Write(p + "scaling_max_freq", "1500000\n");
  auto r = RunCheck(tree, "cpu.frequency");
  EXPECT_EQ(r.status, kWarn);
  EXPECT_TRUE(Has(r.found, "600-1500 MHz allowed (hardware 600-1800 MHz)")) << r.found;
  EXPECT_EQ(r.fix, "echo 1800000 > " + p + "scaling_max_freq");
  tree.Write(p + "scaling_max_freq", "1800000\n");
  EXPECT_EQ(RunCheck(tree, "cpu.frequency").status, kPass);
}

TEST(IdleCheckTest, ExitLatencyThresholdAndDisabledStates) {
  const auto idle = [](int latency_us, int disabled) {
    FakeTree tree;
    tree.Write("/sys/devices/system/cpu/online", "0\n");
    const std::string s = "/sys/devices/system/cpu/cpu0/cpuidle/";
    tree.Write(s + "state0/name", "WFI\n").Write(s + "state0/latency", "1\n");
    tree.Write(s + "state1/name", "deep\n")
        .Write(s + "state1/latency", fmt::format("{}\n", latency_us))
        .Write(s + "state1/disable", fmt::format("{}\n", disabled));
    return RunCheck(tree, "cpu.idle");
  };
  EXPECT_EQ(idle(10, 0).status, kPass) << "10 us is the limit, not above it";
  const auto deep = idle(11, 0);
  EXPECT_EQ(deep.status, kWarn);
  EXPECT_TRUE(Has(deep.found, "deep (11 us) on CPUs 0")) << deep.found;
  EXPECT_TRUE(Has(deep.fix, "cpupower idle-set -D 10")) << deep.fix;
  const auto disabled = idle(400, 1);
  EXPECT_EQ(disabled.status, kPass);
  EXPECT_TRUE(Has(disabled.found, "disabled: deep (400 us)")) << disabled.found;
}

TEST(SmtCheckTest, ActiveOffAndTopologyFallback) {
  FakeTree on;
  on.Write("/sys/devices/system/cpu/smt/active", "1\n")
      .Write("/sys/devices/system/cpu/smt/control", "on\n");
  EXPECT_EQ(RunCheck(on, "cpu.smt").status, kWarn);
  FakeTree off;
  off.Write("/sys/devices/system/cpu/smt/active", "0\n")
      .Write("/sys/devices/system/cpu/smt/control", "off\n");
  EXPECT_EQ(RunCheck(off, "cpu.smt").status, kPass);
  FakeTree siblings;
  siblings.Write("/sys/devices/system/cpu/cpu0/topology/thread_siblings_list", "0,4\n");
  EXPECT_EQ(RunCheck(siblings, "cpu.smt").status, kWarn);
  FakeTree single;
  single.Write("/sys/devices/system/cpu/cpu0/topology/thread_siblings_list", "0\n");
  EXPECT_EQ(RunCheck(single, "cpu.smt").status, kPass);
  FakeTree unknown;
  EXPECT_EQ(RunCheck(unknown, "cpu.smt").status, kInfo);
}

// --------------------------------------------------------------------------- memory

TEST(RtThrottlingCheckTest, OnOffUnknown) {
  FakeTree on;
  on.Write("/proc/sys/kernel/sched_rt_runtime_us", "950000\n")
      .Write("/proc/sys/kernel/sched_rt_period_us", "1000000\n");
  auto r = RunCheck(on, "memory.rt_throttling");
  EXPECT_EQ(r.status, kWarn);
  EXPECT_TRUE(Has(r.found, "(95% of each period)")) << r.found;
  EXPECT_TRUE(Has(r.fix, "sysctl -w kernel.sched_rt_runtime_us=-1")) << r.fix;
  FakeTree off;
  off.Write("/proc/sys/kernel/sched_rt_runtime_us", "-1\n");
  EXPECT_EQ(RunCheck(off, "memory.rt_throttling").status, kPass);
  FakeTree unknown;
  EXPECT_EQ(RunCheck(unknown, "memory.rt_throttling").status, kInfo);
}

TEST(ThpCheckTest, OnlyAlwaysWarns) {
  const auto thp = [](const std::string& text) {
    FakeTree tree;
    tree.Write("/sys/kernel/mm/transparent_hugepage/enabled", text + "\n");
    return RunCheck(tree, "memory.thp").status;
  };
  EXPECT_EQ(thp("[always] madvise never"), kWarn);
  EXPECT_EQ(thp("always [madvise] never"), kPass);
  EXPECT_EQ(thp("always madvise [never]"), kPass);
  EXPECT_EQ(thp("garbled"), kInfo);
  FakeTree absent;
  EXPECT_EQ(RunCheck(absent, "memory.thp").status, kPass);
}

TEST(SwapCheckTest, ActiveSwapWarnsWithTheRightFix) {
  FakeTree tree;
  tree.Write("/proc/swaps",
             "Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n"
             "/dev/zram0                              partition\t2097148\t\t0\t\t100\n");
  auto r = RunCheck(tree, "memory.swap");
  EXPECT_EQ(r.status, kWarn);
  EXPECT_TRUE(Has(r.found, "/dev/zram0 (partition, 2048 MiB, 0 KiB used)")) << r.found;
  EXPECT_TRUE(Has(r.fix, "zram")) << r.fix;
  EXPECT_FALSE(Has(r.fix, "dphys-swapfile")) << r.fix;
  FakeTree none;
  none.Write("/proc/swaps", "Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n");
  EXPECT_EQ(RunCheck(none, "memory.swap").status, kPass);
}

// --------------------------------------------------------------------------- platform

TEST(StealCheckTest, WarnsFromOneTenthOfAPercent) {
  const auto steal = [](int stolen) {
    FakeTree tree;
    tree.Write("/proc/stat", fmt::format("cpu  {} 0 0 0 0 0 0 {} 0 0\ncpu0 {} 0 0 0 0 0 0 {} 0 0\n",
                                         10000 - stolen, stolen, 10000 - stolen, stolen));
    return RunCheck(tree, "platform.steal");
  };
  EXPECT_EQ(steal(0).status, kPass);
  EXPECT_EQ(steal(9).status, kPass);
  const auto r = steal(10);
  EXPECT_EQ(r.status, kWarn);
  EXPECT_TRUE(Has(r.found, "0.10% of CPU time since boot (10 of 10000 ticks)")) << r.found;
  FakeTree old_kernel;
  old_kernel.Write("/proc/stat", "cpu  1 2 3 4\n");
  EXPECT_EQ(RunCheck(old_kernel, "platform.steal").status, kInfo);
}

TEST(ThrottlingCheckTest, EveryOutcomeOfVcgencmd) {
  FakeTree pi;
  pi.Write("/proc/device-tree/model", std::string("Raspberry Pi 5 Model B Rev 1.0\0", 31));
  FakeTree pc;

  EXPECT_EQ(RunCheck(pc, "platform.throttling").status, kInfo);
  auto r = RunCheck(pi, "platform.throttling");
  EXPECT_EQ(r.status, kWarn);
  EXPECT_TRUE(Has(r.fix, "raspi-utils")) << r.fix;

  const auto with = [&](CommandOutput output) {
    FakeCommands commands;
    commands.Install("vcgencmd").Answer("vcgencmd get_throttled", std::move(output));
    return RunCheck(pi, "platform.throttling", commands);
  };
  EXPECT_EQ(with({0, false, "throttled=0x0\n", "", 0}).status, kPass);
  r = with({0, false, "throttled=0x50000\n", "", 0});
  EXPECT_EQ(r.status, kWarn);
  EXPECT_TRUE(Has(r.found, "since boot: under-voltage, throttled")) << r.found;
  r = with({0, false, "throttled=0x50005\n", "", 0});
  EXPECT_EQ(r.status, kFail);
  EXPECT_TRUE(Has(r.found, "now: under-voltage, throttled")) << r.found;
  EXPECT_TRUE(Has(r.fix, "27 W USB-C PD supply")) << r.fix;
  EXPECT_TRUE(Has(r.fix, "cooling")) << r.fix;
  r = with({0, false, "throttled=0x80008\n", "", 0});
  EXPECT_EQ(r.status, kFail);
  EXPECT_FALSE(Has(r.fix, "USB-C")) << "heat only: " << r.fix;
  r = with({255, false, "", "VCHI initialization failed\n", 0});
  EXPECT_EQ(r.status, kWarn);
  EXPECT_TRUE(Has(r.found, "VCHI initialization failed")) << r.found;
  r = with({-1, true, "", "", 0});
  EXPECT_EQ(r.status, kWarn);
  EXPECT_TRUE(Has(r.found, "timed out")) << r.found;
  EXPECT_EQ(with({0, false, "error=1\n", "", 0}).status, kWarn);

  FakeTree pi4;
  pi4.Write("/proc/device-tree/model", std::string("Raspberry Pi 4 Model B Rev 1.4\0", 31));
  FakeCommands commands;
  commands.Install("vcgencmd")
      .Answer("vcgencmd get_throttled", {0, false, "throttled=0x1\n", "", 0});
  r = RunCheck(pi4, "platform.throttling", commands);
  EXPECT_EQ(r.status, kFail);
  EXPECT_TRUE(Has(r.fix, "15.3 W USB-C supply")) << r.fix;
}

TEST(ToolsCheckTest, FoundWithVersionOrMissing) {
  FakeTree tree;
  FakeCommands none;
  EXPECT_EQ(RunCheck(tree, "tools.stress_ng", none).status, kWarn);
  EXPECT_EQ(RunCheck(tree, "tools.cyclictest", none).status, kInfo);
  FakeCommands both;
  both.Install("stress-ng")
      .Install("cyclictest")
      .Answer("stress-ng --version", {0, false, "stress-ng, version 0.17.06\n", "", 0})
      .Answer("cyclictest --help", {2, false, "", "cyclictest V 2.80\nUsage:\n", 0});
  auto r = RunCheck(tree, "tools.stress_ng", both);
  EXPECT_EQ(r.status, kPass);
  EXPECT_EQ(r.found, "/fake/bin/stress-ng (stress-ng, version 0.17.06)");
  r = RunCheck(tree, "tools.cyclictest", both);
  EXPECT_EQ(r.status, kPass);
  EXPECT_EQ(r.found, "/fake/bin/cyclictest (cyclictest V 2.80)");
}

// --------------------------------------------------------------------------- process

ProcessFacts User(std::optional<uint64_t> rtprio, std::optional<uint64_t> memlock) {
  ProcessFacts p;
  p.euid = 1000;
  p.cap_effective = 0;
  p.rtprio_soft = p.rtprio_hard = rtprio;
  p.memlock_soft_bytes = p.memlock_hard_bytes = memlock;
  return p;
}

TEST(PrivilegeCheckTest, CapabilityOrRtprioLimit) {
  FakeTree tree;
  EXPECT_EQ(RunCheck(tree, "process.privileges", {}, RootProcess()).status, kPass);
  EXPECT_EQ(RunCheck(tree, "process.privileges", {}, User(0, 0)).status, kWarn);
  const auto low = RunCheck(tree, "process.privileges", {}, User(50, 0));
  EXPECT_EQ(low.status, kWarn);
  EXPECT_TRUE(Has(low.fix, "rtpulse latency -p 50")) << low.fix;
  EXPECT_EQ(RunCheck(tree, "process.privileges", {}, User(79, 0)).status, kWarn);
  EXPECT_EQ(RunCheck(tree, "process.privileges", {}, User(80, 0)).status, kPass);
  EXPECT_EQ(RunCheck(tree, "process.privileges", {}, User(std::nullopt, 0)).status, kPass);
  ProcessFacts nice_user = User(0, 0);
  nice_user.cap_effective = uint64_t{1} << ProcessFacts::kCapSysNice;
  EXPECT_EQ(RunCheck(tree, "process.privileges", {}, nice_user).status, kPass);
  ProcessFacts container_root = User(0, 0);
  container_root.euid = 0;
  const auto r = RunCheck(tree, "process.privileges", {}, container_root);
  EXPECT_EQ(r.status, kWarn);
  EXPECT_TRUE(Has(r.found, "container")) << r.found;
}

TEST(MemlockCheckTest, LimitThresholdAndCapability) {
  FakeTree tree;
  constexpr uint64_t kMiB = 1 << 20;
  EXPECT_EQ(RunCheck(tree, "process.memlock", {}, User(0, 8 * kMiB)).status, kWarn);
  EXPECT_EQ(RunCheck(tree, "process.memlock", {}, User(0, 255 * kMiB)).status, kWarn);
  EXPECT_EQ(RunCheck(tree, "process.memlock", {}, User(0, 256 * kMiB)).status, kPass);
  EXPECT_EQ(RunCheck(tree, "process.memlock", {}, User(0, std::nullopt)).status, kPass);
  ProcessFacts locker = User(0, 8 * kMiB);
  locker.cap_effective = uint64_t{1} << ProcessFacts::kCapIpcLock;
  const auto r = RunCheck(tree, "process.memlock", {}, locker);
  EXPECT_EQ(r.status, kPass);
  EXPECT_TRUE(Has(r.found, "RLIMIT_MEMLOCK 8 MiB (hard 8 MiB) does not apply")) << r.found;
  locker.injected = true;
  EXPECT_TRUE(Has(RunCheck(tree, "process.memlock", {}, locker).found, "RTPULSE_CHECK_PROCESS"));
}

}  // namespace
}  // namespace rtpulse::sys
