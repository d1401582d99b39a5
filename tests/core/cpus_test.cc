#include "core/cpus.h"

#include <gtest/gtest.h>
#include <pthread.h>
#include <sched.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <thread>

#include "core/rt_bandwidth.h"
#include "support/subprocess.h"

namespace rtpulse {
namespace {

TEST(CpusTest, OnlineCpusReadTheRootsListAndFallBackToSysconf) {
  testutil::TempDir dir;
  std::filesystem::create_directories(dir.File("sys/devices/system/cpu"));
  std::ofstream(dir.File("sys/devices/system/cpu/online")) << "0-1,4-5\n";
  EXPECT_EQ(OnlineCpus(FsRoot(dir.path())), (std::vector<int>{0, 1, 4, 5}));
  testutil::TempDir empty;
  EXPECT_EQ(OnlineCpus(FsRoot(empty.path())).size(),
            static_cast<size_t>(sysconf(_SC_NPROCESSORS_ONLN)));
}

TEST(CpusTest, RtBandwidthIsBothFilesOrUnknown) {
  testutil::TempDir dir;
  std::filesystem::create_directories(dir.File("proc/sys/kernel"));
  const FsRoot root(dir.path());
  auto write = [&](const char* runtime, const char* period) {
    std::ofstream(dir.File("proc/sys/kernel/sched_rt_runtime_us")) << runtime;
    std::ofstream(dir.File("proc/sys/kernel/sched_rt_period_us")) << period;
  };
  EXPECT_FALSE(ReadRtBandwidth(root)) << "no files";
  write("950000\n", "1000000\n");
  auto b = ReadRtBandwidth(root);
  ASSERT_TRUE(b);
  EXPECT_EQ(b->runtime_us, 950'000);
  EXPECT_EQ(b->period_us, 1'000'000);
  EXPECT_TRUE(b->Throttles());
  write("-1\n", "1000000\n");
  ASSERT_TRUE(ReadRtBandwidth(root));
  EXPECT_FALSE(ReadRtBandwidth(root)->Throttles()) << "-1: no limit";
  write("1000000\n", "1000000\n");
  EXPECT_FALSE(ReadRtBandwidth(root)->Throttles()) << "the whole period: nothing is stopped";
  write("950000\n", "0\n");
  EXPECT_FALSE(ReadRtBandwidth(root)) << "a period of 0";
  write("lots\n", "1000000\n");
  EXPECT_FALSE(ReadRtBandwidth(root)) << "not a number";
}

TEST(CpusTest, HousekeepingIsTheOnlineCpusWithoutAMeasuredOne) {
  EXPECT_EQ(HousekeepingCpus({0, 1, 2, 3}, {2, 3}), (std::vector<int>{0, 1}));
  EXPECT_EQ(HousekeepingCpus({0, 1, 2, 3}, {}), (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(HousekeepingCpus({0, 1}, {0, 1}), std::vector<int>{});
  EXPECT_EQ(HousekeepingCpus({0, 1}, {7}), (std::vector<int>{0, 1}));  // not online: ignored
}

TEST(CpusTest, AThreadLeavesTheMeasuredCpusAtSchedOther) {
  const std::vector<int> online = OnlineCpus(FsRoot());
  if (online.size() < 2) GTEST_SKIP() << "needs two online CPUs";
  const int measured = online.back();
  std::vector<int> moved_to;
  bool on_measured = true;
  int policy = -1;
  std::thread t([&] {
    moved_to = LeaveMeasuredCpus({measured});
    cpu_set_t set;
    CPU_ZERO(&set);
    pthread_getaffinity_np(pthread_self(), sizeof set, &set);
    on_measured = CPU_ISSET(static_cast<size_t>(measured), &set);
    sched_param param{};
    pthread_getschedparam(pthread_self(), &policy, &param);
  });
  t.join();
  EXPECT_EQ(moved_to, HousekeepingCpus(online, {measured}));
  EXPECT_FALSE(on_measured);
  EXPECT_EQ(policy, SCHED_OTHER);
  // Every CPU measured: the affinity stays, and it says so.
  std::vector<int> none_left = {0};
  std::thread all([&] { none_left = LeaveMeasuredCpus(online); });
  all.join();
  EXPECT_TRUE(none_left.empty());
}

}  // namespace
}  // namespace rtpulse
