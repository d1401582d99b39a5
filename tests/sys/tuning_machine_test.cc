// Tuning on this machine's real /proc: RT throttling off and IRQs off CPU 1 for a moment, then
// every file exactly as before. Root only (ctest label rt: it changes the machine briefly).

#include <gtest/gtest.h>

#include <algorithm>
#include <iostream>
#include <map>
#include <string>

#include "core/fs_root.h"
#include "core/parse.h"
#include "support/subprocess.h"
#include "sys/tuning.h"

namespace rtpulse::sys {
namespace {

constexpr const char* kRtRuntime = "/proc/sys/kernel/sched_rt_runtime_us";

/// Every file --tune may write here (this VM has no cpufreq) and its content.
std::map<std::string, std::string> Snapshot(const FsRoot& root) {
  std::map<std::string, std::string> files;
  for (const char* path : {kRtRuntime, "/proc/irq/default_smp_affinity"}) {
    files[path] = root.Read(path).value_or("(unreadable)");
  }
  for (const auto& irq : root.List("/proc/irq")) {
    const std::string path = "/proc/irq/" + irq + "/smp_affinity_list";
    if (auto text = root.Read(path)) files[path] = *text;
  }
  return files;
}

TEST(TuningMachineTest, RtThrottlingAndIrqsComeBackExactly) {
  if (!testutil::IsRoot()) GTEST_SKIP() << "needs root to write /proc/sys/kernel and /proc/irq";
  const FsRoot root;
  const auto online = ParseCpuList(root.ReadLine("/sys/devices/system/cpu/online").value_or(""));
  if (!online || online->size() < 2 || (*online)[1] != 1) {
    GTEST_SKIP() << "needs CPUs 0 and 1 online";
  }
  const auto before = Snapshot(root);
  TuneOptions options;
  options.measured_cpus = {1};
  options.rt_throttling_off = true;
  auto tuning = Tuning::Apply(root, options);
  ASSERT_TRUE(tuning) << tuning.error().message;
  const std::string during_runtime = root.ReadLine(kRtRuntime).value_or("");
  int moved = 0;
  for (const auto& c : (*tuning)->changes()) {
    SCOPED_TRACE(c.what + " " + c.detail);
    if (c.status == TuneStatus::kRefused) {
      EXPECT_FALSE(c.detail.empty());
    }
    if (c.status != TuneStatus::kApplied || c.what.rfind("IRQ ", 0) != 0) continue;
    const auto now = ParseCpuList(root.ReadLine(c.path).value_or(""));
    ASSERT_TRUE(now);
    EXPECT_EQ(std::count(now->begin(), now->end(), 1), 0) << c.path;
    ++moved;
  }
  const std::string description = (*tuning)->Describe();
  const Status restored = (*tuning)->Restore();
  const auto after = Snapshot(root);

  EXPECT_EQ(during_runtime, "-1");
  EXPECT_GT(moved, 0) << description;
  ASSERT_TRUE(restored) << restored.error().message;
  EXPECT_EQ(after, before) << description;
  std::cout << description;
}

}  // namespace
}  // namespace rtpulse::sys
