// rtpulse hwlat's plan (suite/hwlat_plan.h): hwlatdetect's options checked and turned into busy
// loops with the kernel trace, on a machine made of files (CPUs 0-3, RT throttling off).
// Nothing runs, nothing is written.
#include "suite/hwlat_plan.h"

#include <gtest/gtest.h>

#include <string>

#include "support/plan_test.h"

namespace rtpulse::suite {
namespace {

class HwlatPlanTest : public testutil::PlanTest<HwlatRequest, HwlatPlanned, &BuildHwlatPlan> {
 protected:
  HwlatPlanTest() {
    tree_.Write("/sys/devices/system/cpu/online", "0-3\n")
        .Write("/proc/sys/kernel/sched_rt_runtime_us", "-1\n")
        .Write("/proc/sys/kernel/sched_rt_period_us", "1000000\n");
  }
};

TEST_F(HwlatPlanTest, HwlatdetectsDefaultsBecomeLoopsWithTheTraceRequired) {
  auto planned = BuildPlan();
  ASSERT_TRUE(planned) << planned.error().message;
  const measure::NoisePlan& loops = planned->noise.plan;
  EXPECT_EQ(loops.cpus, (std::vector<int>{1, 2, 3}));
  EXPECT_EQ(loops.duration_ns, 120'000'000'000) << "hwlatdetect's 2 minutes";
  EXPECT_EQ(planned->threshold_ns, 10'000) << "a bare number is us, as hwlatdetect reads it";
  EXPECT_EQ(planned->hardlimit_ns, 10'000) << "no --hardlimit: the threshold";
  EXPECT_EQ(loops.threshold_ns, 10'000) << "the loops' events are the gaps that can hold a sample";
  ASSERT_TRUE(planned->noise.explain);
  EXPECT_TRUE(planned->noise.explain_required);
  EXPECT_EQ(planned->noise.explain->session.cpus, loops.cpus);
  EXPECT_EQ(planned->mode_reason,
            "tracefs is not mounted yet, so the hwlat tracer was not looked for");
}

TEST_F(HwlatPlanTest, UnitsHardLimitCpusAndWhyLoopModeRan) {
  tree_.Write("/sys/kernel/tracing/available_tracers", "blk function nop\n");
  request_.cpus = "2";
  request_.duration = "30s";
  request_.threshold = "500ns";
  request_.hardlimit = "2ms";
  request_.mode = "loop";
  auto planned = BuildPlan();
  ASSERT_TRUE(planned) << planned.error().message;
  EXPECT_EQ(planned->noise.plan.cpus, (std::vector<int>{2}));
  EXPECT_EQ(planned->noise.plan.duration_ns, 30'000'000'000);
  EXPECT_EQ(planned->threshold_ns, 500);
  EXPECT_EQ(planned->hardlimit_ns, 2'000'000);
  EXPECT_EQ(planned->mode_reason, "the kernel has no hwlat tracer (CONFIG_HWLAT_TRACER)");
  tree_.Write("/sys/kernel/tracing/available_tracers", "hwlat blk function nop\n");
  planned = BuildPlan();
  ASSERT_TRUE(planned) << planned.error().message;
  EXPECT_EQ(planned->mode_reason, "the kernel has the hwlat tracer; rtpulse does not drive it yet");
}

TEST_F(HwlatPlanTest, EachBadValueIsNamedWithItsFix) {
  struct Case {
    void (*set)(HwlatRequest&);
    std::vector<std::string> named;
  };
  const Case cases[] = {
      {[](HwlatRequest& r) { r.mode = "tracer"; }, {"--mode tracer", "--mode loop"}},
      {[](HwlatRequest& r) { r.threshold = "0"; }, {"--threshold 0", "10us"}},
      {[](HwlatRequest& r) { r.threshold = "fast"; }, {"--threshold fast"}},
      {[](HwlatRequest& r) { r.hardlimit = "-5"; }, {"--hardlimit -5"}},
      {[](HwlatRequest& r) { r.duration = "0"; }, {"--duration 0", "MTBF"}},
      {[](HwlatRequest& r) { r.duration = "soon"; }, {"--duration soon"}},
      {[](HwlatRequest& r) { r.cpus = "7"; }, {"--cpu-list 7", "not online"}},
      {[](HwlatRequest& r) { r.policy = "fifo:0"; }, {"--policy fifo:0"}},
      {[](HwlatRequest& r) { r.explain_max = 0; }, {"--explain-max 0"}},
  };
  for (const Case& c : cases) {
    request_ = HwlatRequest{};
    c.set(request_);
    const std::string why = Refusal();
    for (const std::string& word : c.named) {
      EXPECT_NE(why.find(word), std::string::npos) << "'" << word << "' not in: " << why;
    }
  }
}

}  // namespace
}  // namespace rtpulse::suite
