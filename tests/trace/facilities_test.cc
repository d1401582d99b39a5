// DetectFacilities on fixture trees (a kernel with timerlat, one without, no tracefs, no
// root) and on this machine, checked against what the machine's files say.
#include "trace/facilities.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "support/fake_tree.h"
#include "support/tracefs.h"

namespace rtpulse::trace {
namespace {

const std::vector<std::string> kFacilityOrder = {"permission",     "tracefs",
                                                 "instances",      "trace_clock mono",
                                                 "sched events",   "irq events",
                                                 "softirq events", "hrtimer events",
                                                 "ipi events",     "workqueue events",
                                                 "syscall events", "timerlat tracer",
                                                 "osnoise tracer", "timerlat user-space interface"};

const Facility& Find(const std::vector<Facility>& all, const std::string& name) {
  for (const Facility& f : all) {
    if (f.name == name) return f;
  }
  static const Facility kNone{"(none)", false, "not reported"};
  ADD_FAILURE() << "no facility " << name;
  return kNone;
}

std::vector<std::string> Names(const std::vector<Facility>& all) {
  std::vector<std::string> names;
  for (const Facility& f : all) names.push_back(f.name);
  return names;
}

constexpr const char* kT = "/sys/kernel/tracing";

/// A tracefs with every event group; `tracers` is available_tracers.
testutil::FakeTree KernelTree(const std::string& tracers, bool timerlat_fd) {
  testutil::FakeTree tree;
  tree.Write("/proc/mounts",
             "sysfs /sys sysfs rw 0 0\ntracefs /sys/kernel/tracing tracefs rw 0 0\n")
      .Write("/proc/filesystems", "nodev\tsysfs\nnodev\ttracefs\n")
      .Write(std::string(kT) + "/tracing_on", "1\n")
      .Write(std::string(kT) + "/trace_clock",
             "[local] global counter uptime perf mono mono_raw boot\n")
      .Write(std::string(kT) + "/available_tracers", tracers + "\n");
  std::filesystem::create_directories(tree.path() + kT + "/instances");
  for (const char* event :
       {"sched/sched_switch", "sched/sched_waking", "sched/sched_wakeup", "irq/irq_handler_entry",
        "irq/irq_handler_exit", "irq/softirq_raise", "irq/softirq_entry", "irq/softirq_exit",
        "timer/hrtimer_start", "timer/hrtimer_expire_entry", "timer/hrtimer_expire_exit",
        "ipi/ipi_raise", "ipi/ipi_entry", "workqueue/workqueue_execute_start",
        "workqueue/workqueue_execute_end", "raw_syscalls/sys_enter", "raw_syscalls/sys_exit"}) {
    tree.Write(std::string(kT) + "/events/" + event + "/format", "name: x\n");
  }
  if (timerlat_fd) tree.Write(std::string(kT) + "/osnoise/per_cpu/cpu0/timerlat_fd", "");
  return tree;
}

TEST(FacilitiesTest, KernelWithTimerlatHasEverything) {
  const auto tree = KernelTree("timerlat osnoise function nop", true);
  const auto all = DetectFacilities(tree.Root(), "", true);
  EXPECT_EQ(Names(all), kFacilityOrder);
  for (const Facility& f : all) EXPECT_TRUE(f.present) << f.name << ": " << f.detail;
  EXPECT_EQ(Find(all, "tracefs").detail, "mounted at /sys/kernel/tracing");
  EXPECT_NE(Find(all, "ipi events").detail.find("ipi:ipi_raise"), std::string::npos);
  EXPECT_NE(Find(all, "timerlat user-space interface").detail.find("timerlat_fd"),
            std::string::npos);
}

TEST(FacilitiesTest, KernelWithoutTimerlatSaysWhichOptionIsMissing) {
  auto tree = KernelTree("function nop", false);
  // No mono clock, no syscall tracepoints either.
  tree.Write(std::string(kT) + "/trace_clock", "[local] global counter\n");
  std::filesystem::remove_all(tree.path() + kT + "/events/raw_syscalls");
  const auto all = DetectFacilities(tree.Root(), "", true);
  EXPECT_EQ(Names(all), kFacilityOrder);
  EXPECT_TRUE(Find(all, "tracefs").present);
  EXPECT_TRUE(Find(all, "sched events").present);
  const Facility& timerlat = Find(all, "timerlat tracer");
  EXPECT_FALSE(timerlat.present);
  EXPECT_NE(timerlat.detail.find("kernel built without CONFIG_TIMERLAT_TRACER"), std::string::npos)
      << timerlat.detail;
  EXPECT_NE(Find(all, "osnoise tracer").detail.find("CONFIG_OSNOISE_TRACER"), std::string::npos);
  const Facility& user = Find(all, "timerlat user-space interface");
  EXPECT_FALSE(user.present);
  EXPECT_NE(user.detail.find("CONFIG_TIMERLAT_TRACER"), std::string::npos) << user.detail;
  const Facility& mono = Find(all, "trace_clock mono");
  EXPECT_FALSE(mono.present);
  EXPECT_NE(mono.detail.find("[local] global counter"), std::string::npos) << mono.detail;
  const Facility& syscalls = Find(all, "syscall events");
  EXPECT_FALSE(syscalls.present);
  EXPECT_NE(syscalls.detail.find("raw_syscalls:sys_enter"), std::string::npos) << syscalls.detail;
  EXPECT_NE(syscalls.detail.find("CONFIG_FTRACE_SYSCALLS"), std::string::npos) << syscalls.detail;
}

TEST(FacilitiesTest, TimerlatWithoutTheUserSpaceInterfaceNamesLinux66) {
  const auto tree = KernelTree("timerlat osnoise nop", false);
  const auto all = DetectFacilities(tree.Root(), "", true);
  EXPECT_TRUE(Find(all, "timerlat tracer").present);
  const Facility& user = Find(all, "timerlat user-space interface");
  EXPECT_FALSE(user.present);
  EXPECT_NE(user.detail.find("6.6"), std::string::npos) << user.detail;
}

TEST(FacilitiesTest, AnIpiEventOfEitherArchitectureIsEnough) {
  auto tree = KernelTree("nop", false);
  std::filesystem::remove_all(tree.path() + kT + "/events/ipi");
  const auto without = DetectFacilities(tree.Root(), "", true);
  EXPECT_FALSE(Find(without, "ipi events").present);
  tree.Write(std::string(kT) + "/events/ipi/ipi_send_cpu/format", "name: ipi_send_cpu\n");
  const auto with = DetectFacilities(tree.Root(), "", true);
  const Facility& ipi = Find(with, "ipi events");
  EXPECT_TRUE(ipi.present);
  EXPECT_EQ(ipi.detail, "ipi:ipi_send_cpu");
}

TEST(FacilitiesTest, NoTracefsNamesTheMountCommandAndEverythingElseNeedsIt) {
  testutil::FakeTree tree;
  tree.Write("/proc/mounts", "sysfs /sys sysfs rw 0 0\n")
      .Write("/proc/filesystems", "nodev\tsysfs\nnodev\ttracefs\n");
  const auto all = DetectFacilities(tree.Root(), "", true);
  EXPECT_EQ(Names(all), kFacilityOrder);
  const Facility& tracefs = Find(all, "tracefs");
  EXPECT_FALSE(tracefs.present);
  EXPECT_NE(tracefs.detail.find("mount -t tracefs nodev /sys/kernel/tracing"), std::string::npos)
      << tracefs.detail;
  for (const Facility& f : all) {
    if (f.name == "permission" || f.name == "tracefs") continue;
    EXPECT_FALSE(f.present) << f.name;
    EXPECT_EQ(f.detail, "needs tracefs") << f.name;
  }
}

TEST(FacilitiesTest, KernelWithoutTracefsNamesCONFIG_FTRACE) {
  testutil::FakeTree tree;
  tree.Write("/proc/mounts", "sysfs /sys sysfs rw 0 0\n")
      .Write("/proc/filesystems", "nodev\tsysfs\nnodev\tproc\n");
  const auto all = DetectFacilities(tree.Root(), "", true);
  const Facility& tracefs = Find(all, "tracefs");
  EXPECT_FALSE(tracefs.present);
  EXPECT_NE(tracefs.detail.find("CONFIG_FTRACE"), std::string::npos) << tracefs.detail;
}

TEST(FacilitiesTest, AGivenFolderWithoutTracefsIsNamed) {
  const auto tree = KernelTree("nop", false);
  const auto all = DetectFacilities(tree.Root(), "/mnt/nothing", true);
  const Facility& tracefs = Find(all, "tracefs");
  EXPECT_FALSE(tracefs.present);
  EXPECT_NE(tracefs.detail.find("/mnt/nothing"), std::string::npos) << tracefs.detail;
}

TEST(FacilitiesTest, WithoutRootSaysSoInsteadOfGuessing) {
  // tracefs is mode 0700: a user sees it in /proc/mounts and nothing inside.
  testutil::FakeTree tree;
  tree.Write("/proc/mounts", "tracefs /sys/kernel/tracing tracefs rw 0 0\n")
      .Write("/proc/filesystems", "nodev\ttracefs\n");
  std::filesystem::create_directories(tree.path() + kT);
  const auto all = DetectFacilities(tree.Root(), "", false);
  EXPECT_EQ(Names(all), kFacilityOrder);
  const Facility& permission = Find(all, "permission");
  EXPECT_FALSE(permission.present);
  EXPECT_NE(permission.detail.find("not root and no CAP_SYS_ADMIN"), std::string::npos);
  const Facility& tracefs = Find(all, "tracefs");
  EXPECT_TRUE(tracefs.present);
  EXPECT_NE(tracefs.detail.find("root only"), std::string::npos) << tracefs.detail;
  for (const Facility& f : all) {
    if (f.name == "permission" || f.name == "tracefs") continue;
    EXPECT_FALSE(f.present) << f.name;
    EXPECT_NE(f.detail.find("cannot tell without root"), std::string::npos) << f.name;
  }
  // Readable (a fixture) but not privileged: instances are not ours to create.
  const auto readable = KernelTree("nop", false);
  const auto unprivileged = DetectFacilities(readable.Root(), "", false);
  const Facility& instances = Find(unprivileged, "instances");
  EXPECT_FALSE(instances.present);
  EXPECT_NE(instances.detail.find("root"), std::string::npos) << instances.detail;
}

std::string ReadReal(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

TEST(FacilitiesTest, ThisMachineMatchesItsOwnFiles) {
  // As root, tracefs is mounted first (whatever ran before), so the rest is checked here.
  (void)testutil::TracefsUnavailable();
  const auto all = DetectFacilities(FsRoot(""));
  EXPECT_EQ(Names(all), kFacilityOrder);
  EXPECT_EQ(Find(all, "permission").present, geteuid() == 0 || Find(all, "permission").present);
  const std::string mounts = ReadReal("/proc/mounts");
  const bool mounted = mounts.find(" tracefs ") != std::string::npos;
  const bool readable = std::filesystem::exists("/sys/kernel/tracing/tracing_on") ||
                        std::filesystem::exists("/sys/kernel/debug/tracing/tracing_on");
  EXPECT_EQ(Find(all, "tracefs").present, mounted || readable) << Find(all, "tracefs").detail;
  if (!readable) GTEST_SKIP() << "tracefs is not readable here: " << Find(all, "tracefs").detail;
  const std::string dir = std::filesystem::exists("/sys/kernel/tracing/tracing_on")
                              ? "/sys/kernel/tracing"
                              : "/sys/kernel/debug/tracing";
  const std::string tracers = ReadReal(dir + "/available_tracers");
  const bool has_timerlat = tracers.find("timerlat") != std::string::npos;
  EXPECT_EQ(Find(all, "timerlat tracer").present, has_timerlat) << tracers;
  EXPECT_EQ(Find(all, "osnoise tracer").present, tracers.find("osnoise") != std::string::npos);
  EXPECT_EQ(Find(all, "timerlat user-space interface").present,
            std::filesystem::exists(dir + "/osnoise/per_cpu/cpu0/timerlat_fd"));
  EXPECT_EQ(Find(all, "trace_clock mono").present,
            ReadReal(dir + "/trace_clock").find(" mono ") != std::string::npos ||
                ReadReal(dir + "/trace_clock").find("[mono]") != std::string::npos);
  EXPECT_EQ(Find(all, "sched events").present,
            std::filesystem::exists(dir + "/events/sched/sched_switch/format") &&
                std::filesystem::exists(dir + "/events/sched/sched_waking/format") &&
                std::filesystem::exists(dir + "/events/sched/sched_wakeup/format"));
  EXPECT_EQ(Find(all, "syscall events").present,
            std::filesystem::exists(dir + "/events/raw_syscalls/sys_enter/format") &&
                std::filesystem::exists(dir + "/events/raw_syscalls/sys_exit/format"));
}

}  // namespace
}  // namespace rtpulse::trace
