// The wake-path table (measure/wake_path.h) and the plan checks that read it (plan.h).
#include "measure/wake_path.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <iterator>
#include <set>
#include <string>
#include <vector>

#include "measure/plan.h"
#include "measure/rt_setup.h"
#include "measure/wake_clock.h"

namespace rtpulse::measure {
namespace {

TEST(WakePathTableTest, EveryPathHasOneRowAndItsNameRoundTrips) {
  std::set<std::string_view> names;
  for (const WakePathTraits& row : kWakePathTable) {
    EXPECT_TRUE(names.insert(row.name).second) << "name given twice: " << row.name;
    EXPECT_EQ(WakePathName(row.path), row.name);
  }
  EXPECT_EQ(names.size(), 10u);
  for (const WakePath p : kAllWakePaths) EXPECT_EQ(WakePathFromName(WakePathName(p)), p);
  EXPECT_EQ(WakePathName(static_cast<WakePath>(200)), "unknown") << "a corrupt file's value";
  EXPECT_EQ(FindWakePathTraits(static_cast<WakePath>(200)), nullptr);
}

TEST(WakePathTableTest, AllIsEveryPathThatNeedsNoDevice) {
  std::vector<WakePath> expected;
  for (const WakePathTraits& row : kWakePathTable) {
    if (!row.needs_device) expected.push_back(row.path);
  }
  EXPECT_EQ(std::vector<WakePath>(std::begin(kAllWakePaths), std::end(kAllWakePaths)), expected);
  EXPECT_FALSE(WakePathFromName("gpio")) << "gpio is given as gpio:CHIP:LINE, never by name";
}

TEST(WakePathTableTest, TraitsAreThoseDocsWakePathsDescribes) {
  std::set<std::string_view> periodic;
  std::set<std::string_view> one_per_process;
  std::set<std::string_view> own_policy;
  std::set<std::string_view> spin;
  for (const WakePathTraits& row : kWakePathTable) {
    if (IsKernelPeriodic(row.path)) periodic.insert(row.name);
    if (!row.one_per_process.empty()) one_per_process.insert(row.name);
    if (OwnsPolicy(row.path)) own_policy.insert(row.name);
    if (row.spins) spin.insert(row.name);
  }
  EXPECT_EQ(periodic, (std::set<std::string_view>{"timerfd", "posix", "itimer"}));
  EXPECT_EQ(one_per_process, (std::set<std::string_view>{"itimer"}));
  EXPECT_EQ(own_policy, (std::set<std::string_view>{"deadline"}));
  EXPECT_EQ(spin, (std::set<std::string_view>{"busy"}));
  std::vector<std::string_view> served;
  for (const WakePathTraits& row : kWakePathTable) {
    if (SuitsContinuousService(row)) served.push_back(row.name);
  }
  EXPECT_EQ(served,
            (std::vector<std::string_view>{"abs", "rel", "timerfd", "posix", "epoll", "xthread"}));
}

TEST(WakePlanTest, AllWithSeveralThreadsDropsItimerAndSaysSo) {
  auto paths = ParseWakeList("all");
  ASSERT_TRUE(paths);
  std::vector<std::string> notes;
  DropOnePerProcessPaths(*paths, 2, notes);
  EXPECT_EQ(paths->size(), std::size(kAllWakePaths) - 1);
  EXPECT_EQ(std::find(paths->begin(), paths->end(), WakePath::kItimer), paths->end());
  EXPECT_EQ(notes,
            std::vector<std::string>{
                "--wake all: itimer skipped (ITIMER_REAL is one per process; it needs -t 1)"});
  auto one = ParseWakeList("all");
  ASSERT_TRUE(one);
  notes.clear();
  DropOnePerProcessPaths(*one, 1, notes);
  EXPECT_EQ(one->size(), std::size(kAllWakePaths)) << "one thread keeps itimer";
  EXPECT_TRUE(notes.empty());
}

TEST(WakePlanTest, ItimerWithSeveralThreadsIsAUsageErrorNamingTheFix) {
  const std::vector<WakePath> paths = {WakePath::kAbs, WakePath::kItimer};
  EXPECT_TRUE(CheckOnePerProcess(paths, 1, "threads were asked for", "add -t 1").ok());
  EXPECT_TRUE(CheckOnePerProcess({WakePath::kAbs, WakePath::kPosix}, 4, "threads", "fix").ok());
  const Status s = CheckOnePerProcess(paths, 3, "CPUs are measured", "add --cpus N");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().code, ExitCode::kUsage);
  EXPECT_EQ(s.error().message,
            "--wake itimer needs a single thread (ITIMER_REAL is one per process), but 3 CPUs "
            "are measured: add --cpus N, or use --wake posix");
}

// --policy takes cyclictest's names: the scheduling-policy value's and "normal" for other.
TEST(ParsePolicyTest, TakesCyclictestsNamesAndNamesThemOnError) {
  for (const char* name : {"other", "batch", "idle", "fifo", "rr"}) {
    auto p = ParsePolicy(name);
    ASSERT_TRUE(p) << name;
    EXPECT_EQ(SchedPolicyName(*p), name);
  }
  auto normal = ParsePolicy("normal");
  ASSERT_TRUE(normal);
  EXPECT_EQ(*normal, SchedPolicy::kOther);
  auto bad = ParsePolicy("deadline");
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().code, ExitCode::kUsage);
  EXPECT_EQ(bad.error().message,
            "unknown policy 'deadline': use one of other, normal, batch, idle, fifo, rr");
}

// The CPUs a plan measures on (--explain's trace, --wake timerlat, --deepest-idle-state):
// pinned threads' CPUs sorted and each once; every online CPU when a thread is not pinned.
TEST(MeasuredCpusTest, PinnedCpusOnceInOrderOrEveryOnlineCpuForAFreeThread) {
  std::vector<ThreadPlan> threads(4);
  const int pinned[] = {3, 1, 3, 2};
  for (size_t i = 0; i < threads.size(); ++i) threads[i].cpu = pinned[i];
  EXPECT_EQ(MeasuredCpus(threads, {0, 1, 2, 3}), (std::vector<int>{1, 2, 3}));
  for (auto& t : threads) t.cpu = -1;
  EXPECT_EQ(MeasuredCpus(threads, {0, 1, 2, 3}), (std::vector<int>{0, 1, 2, 3}));
}

// -R: a clock that never moved or steps by more than a microsecond is a warning naming the
// clock and the step; a finer step (a read's own cost) is none.
TEST(ClockResolutionTest, OnlyAFrozenOrCoarseClockIsAWarning) {
  EXPECT_FALSE(ClockResolutionWarning({1, 25, 40000}, "monotonic"));
  EXPECT_FALSE(ClockResolutionWarning({1, 1000, 40000}, "monotonic"));
  const auto frozen = ClockResolutionWarning({1, 0, 100000}, "realtime");
  ASSERT_TRUE(frozen);
  EXPECT_NE(frozen->find("realtime clock returned the same time for 100000 consecutive reads"),
            std::string::npos)
      << *frozen;
  const auto coarse = ClockResolutionWarning({4000000, 1200, 300}, "monotonic");
  ASSERT_TRUE(coarse);
  EXPECT_NE(coarse->find("steps by about 4000000 ns (the kernel reports 4000000 ns)"),
            std::string::npos)
      << *coarse;
  const auto measured = ClockResolutionWarning({1, 1001, 900}, "monotonic");
  ASSERT_TRUE(measured);
  EXPECT_NE(measured->find("about 1001 ns (the kernel reports 1 ns)"), std::string::npos)
      << *measured;
}

}  // namespace
}  // namespace rtpulse::measure
