// rtpulse noise's plan (suite/noise_plan.h): every option check on a machine made of files (CPUs
// 0-3 online, RT throttling at the kernel's default). Nothing runs, nothing is written.
#include "suite/noise_plan.h"

#include <gtest/gtest.h>

#include <string>

#include "support/plan_test.h"

namespace rtpulse::suite {
namespace {

class NoisePlanTest : public testutil::PlanTest<NoiseRequest, NoisePlanned, &BuildNoisePlan> {
 protected:
  NoisePlanTest() {
    tree_.Write("/sys/devices/system/cpu/online", "0-3\n")
        .Write("/proc/sys/kernel/sched_rt_runtime_us", "950000\n")
        .Write("/proc/sys/kernel/sched_rt_period_us", "1000000\n");
  }
};

TEST_F(NoisePlanTest, DefaultsPollEveryCpuButCpu0AtFifo95AndSayWhatThrottlingDoes) {
  auto planned = BuildPlan();
  ASSERT_TRUE(planned) << planned.error().message;
  const measure::NoisePlan& p = planned->plan;
  EXPECT_EQ(p.cpus, (std::vector<int>{1, 2, 3}));
  EXPECT_EQ(p.policy, SchedPolicy::kFifo);
  EXPECT_EQ(p.priority, 95);
  EXPECT_EQ(p.duration_ns, 10'000'000'000);
  EXPECT_EQ(p.threshold_ns, 5000);
  EXPECT_EQ(p.bucket_width_ns, 1000);
  EXPECT_EQ(p.buckets, 32);
  EXPECT_EQ(p.stop_above_ns, 0);
  ASSERT_EQ(planned->notes.size(), 1u);
  EXPECT_NE(planned->notes[0].find("up to 50000 us every 1000000 us"), std::string::npos)
      << planned->notes[0];
}

TEST_F(NoisePlanTest, OslatsOptionsAndOtherPoliciesArePlannedAsGiven) {
  request_.cpus = "1,3";
  request_.duration = "2m";
  request_.rtprio = 10;
  request_.bucket_width = "500ns";
  request_.buckets = 64;
  request_.threshold = "20us";
  request_.stop_above = "100";
  auto planned = BuildPlan();
  ASSERT_TRUE(planned) << planned.error().message;
  EXPECT_EQ(planned->plan.cpus, (std::vector<int>{1, 3}));
  EXPECT_EQ(planned->plan.duration_ns, 120'000'000'000);
  EXPECT_EQ(planned->plan.priority, 10);
  EXPECT_EQ(planned->plan.bucket_width_ns, 500);
  EXPECT_EQ(planned->plan.buckets, 64);
  EXPECT_EQ(planned->plan.threshold_ns, 20'000);
  EXPECT_EQ(planned->plan.stop_above_ns, 100'000);
  request_ = NoiseRequest{};
  request_.policy = "other";
  request_.policy_given = true;
  planned = BuildPlan();
  ASSERT_TRUE(planned) << planned.error().message;
  EXPECT_EQ(planned->plan.policy, SchedPolicy::kOther);
  EXPECT_EQ(planned->plan.priority, 0);
  EXPECT_TRUE(planned->notes.empty()) << "throttling does not stop an other-policy poller";
}

TEST_F(NoisePlanTest, ExplainTracesThePolledCpusAndTakesEveryEventUpToItsCap) {
  EXPECT_FALSE(BuildPlan()->explain) << "no trace unless asked";
  request_.cpus = "1,3";
  request_.threshold = "20us";
  request_.explain = true;
  request_.explain_max = 50;
  auto planned = BuildPlan();
  ASSERT_TRUE(planned) << planned.error().message;
  ASSERT_TRUE(planned->explain);
  EXPECT_EQ(planned->explain->threshold_ns, 20'000) << "each event: a gap above --threshold";
  EXPECT_EQ(planned->explain->session.cpus, (std::vector<int>{1, 3}));
  EXPECT_EQ(planned->explain->max_explained, 100u) << "50 per CPU";
  EXPECT_EQ(planned->explain_max, 50u);
  EXPECT_TRUE(planned->explain->window_dir.empty()) << "no raw windows written";
}

TEST_F(NoisePlanTest, AllCpusRealTimeIsSaid) {
  request_.cpus = "0-3";
  auto planned = BuildPlan();
  ASSERT_TRUE(planned) << planned.error().message;
  ASSERT_EQ(planned->notes.size(), 2u);
  EXPECT_NE(planned->notes[1].find("every online CPU runs a real-time poller"), std::string::npos);
}

TEST_F(NoisePlanTest, EachBadValueIsNamedWithItsFix) {
  struct Case {
    void (*set)(NoiseRequest&);
    std::vector<std::string> named;
  };
  const Case cases[] = {
      {[](NoiseRequest& r) { r.cpus = "7"; }, {"-c 7", "CPU 7 is not online", "0-3"}},
      {[](NoiseRequest& r) { r.cpus = "1,x"; }, {"-c 1,x"}},
      {[](NoiseRequest& r) { r.duration = "ten"; }, {"-D ten"}},
      {[](NoiseRequest& r) { r.rtprio = 100; }, {"-f 100", "1..99"}},
      {[](NoiseRequest& r) {
         r.rtprio = 5;
         r.policy_given = true;
       },
       {"-f and --policy"}},
      {[](NoiseRequest& r) { r.policy = "fifo"; }, {"--policy fifo", "fifo:95"}},
      {[](NoiseRequest& r) { r.policy = "fast"; }, {"--policy fast", "other"}},
      {[](NoiseRequest& r) { r.policy = "other:3"; }, {"takes no priority"}},
      {[](NoiseRequest& r) { r.threshold = "5"; }, {"--threshold 5:", "unit"}},
      {[](NoiseRequest& r) { r.threshold = "0us"; }, {"--threshold 0us"}},
      {[](NoiseRequest& r) { r.bucket_width = "-1us"; }, {"-W -1us"}},
      {[](NoiseRequest& r) { r.buckets = 3; }, {"-b 3", "4..1024"}},
      {[](NoiseRequest& r) { r.buckets = 2000; }, {"-b 2000"}},
      {[](NoiseRequest& r) { r.stop_above = "0"; }, {"-T 0"}},
      {[](NoiseRequest& r) { r.stop_above = "5us"; }, {"-T 5us", "whole us"}},
      {[](NoiseRequest& r) {
         r.explain = true;
         r.explain_max = 0;
       },
       {"--explain-max 0", "e.g. 1000"}},
  };
  for (const Case& c : cases) {
    request_ = NoiseRequest{};
    c.set(request_);
    const std::string why = Refusal();
    for (const std::string& word : c.named) {
      EXPECT_NE(why.find(word), std::string::npos) << "'" << word << "' not in: " << why;
    }
  }
}

}  // namespace
}  // namespace rtpulse::suite
