#include <gtest/gtest.h>

#include "load/cpu_stat.h"
#include "load/stress_ng.h"

namespace rtpulse::load {
namespace {

TEST(StressNgMetrics, SumsTheRealTimeRateOfEveryStressor) {
  const std::string out =
      "stress-ng: info:  [8752] dispatching hogs: 1 cpu, 1 vm\n"
      "stress-ng: metrc: [8752] stressor       bogo ops real time  usr time  sys time   bogo "
      "ops/s     bogo ops/s\n"
      "stress-ng: metrc: [8752]                           (secs)    (secs)    (secs)   (real "
      "time) (usr+sys time)\n"
      "stress-ng: metrc: [8752] cpu                 208      1.00      0.18      0.00       "
      "207.18        1118.64\n"
      "stress-ng: metrc: [8752] vm                 1000      2.00      1.00      0.50       "
      "500.00         666.67\n"
      "stress-ng: info:  [8752] successful run completed in 1.02s\n";
  const auto m = ParseStressNgMetrics(out);
  EXPECT_EQ(m.stressors, 2);
  EXPECT_EQ(m.bogo_ops, 1208u);
  EXPECT_DOUBLE_EQ(m.bogo_ops_per_second, 707.18);
}

TEST(StressNgMetrics, NoTableMeansNoStressors) {
  EXPECT_EQ(ParseStressNgMetrics("").stressors, 0);
  EXPECT_EQ(ParseStressNgMetrics("stress-ng: error: [1] unknown option\n").stressors, 0);
}

TEST(ProcStat, BusyExcludesIdleAndIowait) {
  const auto before = ParseProcStat(
      "cpu  1 1 1 1 1 1 1 1 0 0\ncpu0 100 0 100 700 100 0 0 0 0 0\n"
      "cpu1 0 0 0 1000 0 0 0 0 0 0\nintr 5\n");
  const auto after = ParseProcStat(
      "cpu  9 9 9 9 9 9 9 9 0 0\ncpu0 150 0 150 800 200 0 100 0 0 0\n"
      "cpu1 0 0 0 1000 0 0 0 0 0 0\n");
  ASSERT_EQ(before.size(), 2u);  // The aggregate "cpu" line is not a CPU.
  const auto use = CpuUseBetween(before, after, {0, 1, 7});
  ASSERT_EQ(use.size(), 3u);
  // cpu0: 400 jiffies, 200 idle+iowait -> 50% busy, 100 softirq -> 25%.
  EXPECT_DOUBLE_EQ(use[0].busy_percent, 50.0);
  EXPECT_DOUBLE_EQ(use[0].softirq_percent, 25.0);
  EXPECT_DOUBLE_EQ(use[1].busy_percent, 0.0);  // No time passed.
  EXPECT_EQ(use[2].cpu, 7);
  EXPECT_DOUBLE_EQ(use[2].busy_percent, 0.0);  // Missing CPU.
}

}  // namespace
}  // namespace rtpulse::load
