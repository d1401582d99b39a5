// rtpulse suite's plan (suite/suite_plan.h): every option check on a machine made of files
// (CPUs 0-1 online, as few as any machine running the tests has). Nothing runs, nothing is
// written.
#include "suite/suite_plan.h"

#include <gtest/gtest.h>

#include <string>

#include "core/clock.h"
#include "support/plan_test.h"

namespace rtpulse::suite {
namespace {

class SuitePlanTest
    : public testutil::PlanTest<SuiteRequest, LatencySuitePlan, &BuildLatencySuitePlan> {
 protected:
  SuitePlanTest() {
    tree_.Write("/sys/devices/system/cpu/online", "0-1\n");
    request_.out = tree_.path() + "/run";
  }
};

TEST_F(SuitePlanTest, DefaultsAreTheBuiltInScenariosOnEveryOnlineCpu) {
  auto plan = BuildPlan();
  ASSERT_TRUE(plan) << plan.error().message;
  const SuitePlan& p = plan->suite;
  EXPECT_EQ(p.config.source, "built-in");
  ASSERT_EQ(p.config.scenarios.size(), 5u);
  EXPECT_EQ(p.config.scenarios.front().name, "idle");
  EXPECT_EQ(p.cpus, (std::vector<int>{0, 1}));
  EXPECT_EQ(p.checkpoint_ns, 10 * kNsPerSec);
  EXPECT_EQ(p.out_dir, request_.out);
  EXPECT_EQ(plan->latency.cpus, p.cpus);
  EXPECT_EQ(plan->latency.priority, 80);
  EXPECT_EQ(plan->latency.interval_ns, kNsPerMs);
  EXPECT_FALSE(plan->latency.explain);
}

TEST_F(SuitePlanTest, ScenariosAndTimesOverrideTheSuites) {
  request_.scenarios = "heavy,idle";
  request_.quick = true;
  request_.settle = "0";
  request_.interval = "250";  // microseconds
  request_.priority = 90;
  auto plan = BuildPlan();
  ASSERT_TRUE(plan) << plan.error().message;
  const SuiteConfig& c = plan->suite.config;
  ASSERT_EQ(c.scenarios.size(), 2u);
  EXPECT_EQ(c.scenarios[0].name, "heavy");
  EXPECT_EQ(c.duration_ns, 8 * kNsPerSec);  // --quick
  EXPECT_EQ(c.settle_ns, 0);                // --settle over --quick's 2 s
  EXPECT_EQ(plan->latency.interval_ns, 250 * kNsPerUs);
  EXPECT_EQ(plan->latency.priority, 90);
  request_.scenarios = "noisy";
  EXPECT_NE(Refusal().find("noisy"), std::string::npos);
}

// --wake with timerlat: the tracer after the list's other paths (or alone), as in `latency`;
// --explain with it, and --samples with it alone, are refused before the tracer is looked for;
// a kernel without the timerlat tracer (this VM's) is exit 3 before anything runs.
TEST_F(SuitePlanTest, WakeTimerlatRunsTheTracerAfterTheOtherPaths) {
  request_.wake = "timerlat";
  request_.explain = trace::ExplainPlan{};
  EXPECT_NE(Refusal().find("--explain with --wake timerlat"), std::string::npos);
  request_.explain.reset();
  request_.samples = true;
  EXPECT_NE(Refusal().find("--samples with --wake timerlat alone"), std::string::npos);
  request_.samples = false;
  request_.wake = "abs,timerlat,rel";
  auto plan = BuildPlan();
  if (!plan) {
    // No timerlat tracer here: the resource error names it, and the rest was planned first.
    EXPECT_EQ(plan.error().code, ExitCode::kResource) << plan.error().message;
    EXPECT_NE(plan.error().message.find("timerlat"), std::string::npos) << plan.error().message;
    return;
  }
  EXPECT_EQ(plan->suite.config.wake,
            (std::vector<measure::WakePath>{measure::WakePath::kAbs, measure::WakePath::kRel}));
  EXPECT_TRUE(plan->suite.config.timerlat);
  ASSERT_TRUE(plan->latency.timerlat);
  EXPECT_EQ(plan->latency.timerlat->cpus, (std::vector<int>{0, 1}));
  EXPECT_EQ(plan->latency.timerlat->period_ns, kNsPerMs);
  EXPECT_EQ(plan->latency.timerlat->priority, 80);
}

TEST_F(SuitePlanTest, TimesCpusAndIntervalAreChecked) {
  request_.duration = "0s";
  EXPECT_EQ(Refusal(), "--duration '0s' must be greater than 0 (e.g. 10s, 5m)");
  request_.duration = "";
  request_.checkpoint_interval = "11s";
  EXPECT_NE(Refusal().find("--checkpoint-interval '11s' is above 10s"), std::string::npos);
  request_.checkpoint_interval = "10s";
  request_.interval = "5us";
  EXPECT_EQ(Refusal(), "--interval '5us' is below 10us; give e.g. 1000 (us) or 1ms");
  request_.interval = "";
  request_.cpus = "1,3";
  EXPECT_EQ(Refusal(), "--cpus '1,3': CPU 3 is not online (online: 0-1)");
  request_.cpus = "1";
  auto plan = BuildPlan();
  ASSERT_TRUE(plan) << plan.error().message;
  EXPECT_EQ(plan->latency.cpus, std::vector<int>{1});
}

TEST_F(SuitePlanTest, TuningOptionsThatCannotWorkTogetherAreRefused) {
  request_.rt_throttling_off = true;
  EXPECT_NE(Refusal().find("--no-rt-throttling is a tuning: add --tune"), std::string::npos);
  request_.tune = true;
  request_.tune_ab = true;
  EXPECT_NE(Refusal().find("--tune and --tune-ab exclude each other"), std::string::npos);
  request_.tune = false;
  request_.tune_ab = false;
  request_.rt_throttling_off = false;
  request_.ab_pairs = 4;
  EXPECT_EQ(Refusal(), "--ab-pairs needs --tune-ab");
  request_.tune_ab = true;
  request_.ab_pairs = 0;
  EXPECT_NE(Refusal().find("--ab-pairs 0 must be between 1 and 1000"), std::string::npos);
  request_.ab_pairs = 6;
  request_.wake = "abs,timerfd";
  EXPECT_NE(Refusal().find("--tune-ab compares one wake path per block"), std::string::npos);
  request_.wake = "abs";
  auto plan = BuildPlan();
  ASSERT_TRUE(plan) << plan.error().message;
}

TEST_F(SuitePlanTest, BudgetAndResultsFolderAreCheckedBeforeAnythingRuns) {
  request_.budget = "fast";
  EXPECT_EQ(Refusal().rfind("--budget: ", 0), 0u);
  request_.budget = "100us@p99.9";
  tree_.Write("/run/result.json", "{}");
  EXPECT_NE(Refusal().find("already holds files"), std::string::npos);
  request_.out = tree_.path() + "/run2";
  auto plan = BuildPlan();
  ASSERT_TRUE(plan) << plan.error().message;
  ASSERT_TRUE(plan->suite.budget);
}

TEST_F(SuitePlanTest, ExplainTracesTheMeasuredCpusAndPriorityIsCheckedByTheProbesPlan) {
  trace::ExplainPlan explain;
  explain.threshold_ns = 300 * kNsPerUs;
  request_.explain = explain;
  request_.cpus = "0";
  auto plan = BuildPlan();
  ASSERT_TRUE(plan) << plan.error().message;
  ASSERT_TRUE(plan->latency.explain);
  EXPECT_EQ(plan->latency.explain->session.cpus, std::vector<int>{0});
  EXPECT_EQ(plan->latency.explain->threshold_ns, 300 * kNsPerUs);
  request_.priority = 100;
  EXPECT_NE(Refusal(), "");
}

}  // namespace
}  // namespace rtpulse::suite
