// rtpulse control's plan (suite/control_plan.h): every option check on a machine made of files
// (4 online CPUs, 1 GiB available, an 8 MiB last-level cache). Nothing runs, nothing is written.
#include "suite/control_plan.h"

#include <gtest/gtest.h>

#include <string>

#include "core/clock.h"
#include "support/plan_test.h"

namespace rtpulse::suite {
namespace {

using control::PolicySpec;

class ControlPlanTest : public testutil::PlanTest<ControlRequest, ControlPlan, &BuildControlPlan> {
 protected:
  ControlPlanTest() {
    tree_.Write("/sys/devices/system/cpu/online", "0-3\n")
        .Write("/proc/meminfo", "MemTotal: 2097152 kB\nMemAvailable: 1048576 kB\n")
        .Write("/sys/devices/system/cpu/cpu0/cache/index0/size", "32K\n")
        .Write("/sys/devices/system/cpu/cpu0/cache/index3/size", "8192K\n");
    request_.out = tree_.path() + "/run";
  }
};

TEST_F(ControlPlanTest, DefaultsAreOneFifoConfigurationWithAndWithoutTheStudysLoad) {
  auto plan = BuildPlan();
  ASSERT_TRUE(plan) << plan.error().message;
  const ControlSettings& s = plan->settings;
  EXPECT_EQ(s.period_ns, 4 * kNsPerMs);
  EXPECT_EQ(s.jobs, 10'000u);
  EXPECT_EQ(s.cpu, 3);  // the last online CPU
  ASSERT_EQ(s.configurations.size(), 2u);
  EXPECT_EQ(s.configurations[0].scenario, "fifo-99");
  EXPECT_FALSE(s.configurations[0].loaded);
  EXPECT_EQ(s.configurations[1].scenario, "fifo-99-stress");
  EXPECT_EQ(s.configurations[1].configuration, "fifo:99, stress");
  ASSERT_EQ(s.load_specs.size(), 1u);
  EXPECT_EQ(s.load_specs[0], StudyStressSpec(4));
  const SuiteConfig& c = plan->suite.config;
  ASSERT_EQ(c.scenarios.size(), 2u);
  EXPECT_EQ(c.duration_ns, 10'000 * 4 * kNsPerMs);
  EXPECT_EQ(c.scenarios[0].settle_ns, 0);
  EXPECT_EQ(c.scenarios[1].settle_ns, kNsPerSec);
  EXPECT_EQ(plan->suite.cpus, std::vector<int>{3});
  EXPECT_EQ(plan->suite.out_dir, request_.out);
  EXPECT_FALSE(plan->interference);
}

TEST_F(ControlPlanTest, PaperSweepIsTheStudysEightConfigurationsTwice) {
  request_.sweep = "paper";
  request_.no_stress = true;
  auto plan = BuildPlan();
  ASSERT_TRUE(plan) << plan.error().message;
  ASSERT_EQ(plan->settings.configurations.size(), 8u);
  const PolicySpec& last = plan->settings.configurations.back().policy;
  EXPECT_EQ(last.kind, PolicySpec::Kind::kDeadline);
  EXPECT_EQ(last.runtime_ns, 800 * kNsPerUs);  // 20 % of 4 ms
  EXPECT_TRUE(plan->settings.load_specs.empty());
  request_.no_stress = false;
  request_.out = tree_.path() + "/run2";
  auto loaded = BuildPlan();
  ASSERT_TRUE(loaded) << loaded.error().message;
  EXPECT_EQ(loaded->settings.configurations.size(), 16u);
}

TEST_F(ControlPlanTest, PathsSweepNamesEachPathAndRefusesADeadlinePolicy) {
  request_.sweep = "paths";
  request_.no_stress = true;
  auto plan = BuildPlan();
  ASSERT_TRUE(plan) << plan.error().message;
  ASSERT_EQ(plan->settings.configurations.size(), 3u);
  EXPECT_EQ(plan->settings.configurations[1].scenario, "fifo-99-timerfd");
  EXPECT_EQ(plan->settings.configurations[1].policy_path, "fifo:99, timerfd");
  request_.policy = "deadline:400us/4ms/4ms";
  EXPECT_NE(Refusal().find("--sweep paths with a deadline policy"), std::string::npos);
}

TEST_F(ControlPlanTest, TimesNeedAUnitAndAPositiveValue) {
  request_.period = "4";
  EXPECT_NE(Refusal().find("--period '4' needs a unit: e.g. 4ms"), std::string::npos);
  request_.period = "0ms";
  EXPECT_NE(Refusal().find("--period '0ms' must be greater than 0"), std::string::npos);
  request_.period = "4ms";
  request_.checkpoint = "11s";
  EXPECT_NE(Refusal().find("--checkpoint '11s' is above 10s"), std::string::npos);
  request_.checkpoint = "1s";
  request_.settle = "0";  // zero is a settle time
  EXPECT_TRUE(BuildPlan());
  EXPECT_EQ(ControlTime("--x", "250us", false).value(), 250 * kNsPerUs);
}

TEST_F(ControlPlanTest, DeadlinePeriodMustBeTheControlPeriodAndTheFixIsNamed) {
  request_.policy = "deadline:400us/2ms/2ms";
  const std::string message = Refusal();
  EXPECT_NE(message.find("its period 2000 us differs from --period 4ms (4000 us)"),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("--period 2000us"), std::string::npos) << message;
}

TEST_F(ControlPlanTest, JobsCpuAndWorkSetAreCheckedAgainstTheMachine) {
  request_.jobs = 0;
  EXPECT_NE(Refusal().find("--jobs 0: give 1.."), std::string::npos);
  request_.jobs = 100;
  request_.cpu = 7;
  EXPECT_NE(Refusal().find("--cpu 7: CPU 7 is not online (online: 0-3)"), std::string::npos);
  request_.cpu = 1;
  request_.work_set = "2G";  // MemAvailable is 1 GiB
  EXPECT_NE(Refusal().find("larger than the memory available"), std::string::npos);
  request_.work_set = "64Q";
  EXPECT_NE(Refusal().find("unknown unit 'Q'"), std::string::npos);
  request_.work_set = "64M";
  request_.work_set_mode = "backwards";
  EXPECT_NE(Refusal().find("--work-set-mode 'backwards'"), std::string::npos);
  request_.work_set_mode = "random";
  auto plan = BuildPlan();
  ASSERT_TRUE(plan) << plan.error().message;
  EXPECT_EQ(plan->settings.cpu, 1);
  EXPECT_EQ(plan->settings.work_set_bytes, 64u << 20);
  EXPECT_EQ(plan->settings.work_set_mode, control::WorkSetMode::kRandom);
}

TEST_F(ControlPlanTest, ExecAndInjectedOverrunsAreParsedOrRefused) {
  request_.exec = "5ms";
  EXPECT_NE(Refusal().find("below the period (4000 us)"), std::string::npos);
  request_.exec = "400";  // microseconds
  request_.inject_exec = "50";
  EXPECT_NE(Refusal().find("give EVERY:EXTRA"), std::string::npos);
  request_.inject_exec = "0:6ms";
  EXPECT_NE(Refusal().find("EVERY must be at least 1"), std::string::npos);
  request_.inject_exec = "50:6ms";
  auto plan = BuildPlan();
  ASSERT_TRUE(plan) << plan.error().message;
  EXPECT_EQ(plan->settings.exec_ns, 400 * kNsPerUs);
  EXPECT_FALSE(plan->settings.calibration);  // calibrating runs the job: not the plan's part
  EXPECT_EQ(plan->settings.inject_every, 50u);
  EXPECT_EQ(plan->settings.inject_ns, 6 * kNsPerMs);
}

TEST_F(ControlPlanTest, LoadsSweepsAndRepetitionsThatCannotWorkTogetherAreRefused) {
  request_.no_stress = true;
  request_.load = {"cpu"};
  EXPECT_NE(Refusal().find("--load with --no-stress"), std::string::npos);
  request_.load = {};
  request_.no_stress = false;
  request_.sweep = "random";
  EXPECT_NE(Refusal().find("--sweep 'random': use paper or paths"), std::string::npos);
  request_.sweep = "";
  request_.wake = "abs,timerfd";
  EXPECT_NE(Refusal().find("give one path (or --sweep paths)"), std::string::npos);
  request_.wake = "abs";
  request_.repetitions = 3;
  EXPECT_NE(Refusal().find("--repetitions needs --interference"), std::string::npos);
}

TEST_F(ControlPlanTest, ResultsFolderThatHoldsFilesIsRefused) {
  tree_.Write("/run/old.txt", "x");
  EXPECT_NE(Refusal().find("already holds files"), std::string::npos);
}

TEST_F(ControlPlanTest, InterferenceSizesItsWorkSetFromTheCacheAndUsesTheOtherCpus) {
  request_.interference = true;
  request_.no_stress = true;
  auto plan = BuildPlan();
  ASSERT_TRUE(plan) << plan.error().message;
  ASSERT_TRUE(plan->interference);
  EXPECT_EQ(plan->interference->cpu, 3);
  EXPECT_EQ(plan->interference->other_cpus, (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(plan->interference->llc_bytes, 8u << 20);
  EXPECT_EQ(plan->interference->work_set_bytes, 16u << 20);  // twice the cache
  request_.work_set = "4M";
  EXPECT_NE(Refusal().find("below twice the last-level cache (8192 KiB here)"), std::string::npos);
  request_.work_set = "";
  request_.repetitions = 1;
  EXPECT_NE(Refusal().find("--repetitions 1: give 2..100"), std::string::npos);
  request_.repetitions = 5;
  request_.sweep = "paper";
  EXPECT_NE(Refusal().find("drop --sweep"), std::string::npos);
  request_.sweep = "";
  request_.explain = trace::ExplainPlan{};
  EXPECT_NE(Refusal().find("drop --explain"), std::string::npos);
  request_.explain.reset();
  tree_.Write("/sys/devices/system/cpu/online", "3\n");
  EXPECT_NE(Refusal(ExitCode::kResource).find("needs a second online CPU"), std::string::npos);
}

TEST_F(ControlPlanTest, ExplainRunsOnTheJobsCpu) {
  trace::ExplainPlan explain;
  explain.threshold_ns = 200 * kNsPerUs;
  request_.explain = explain;
  request_.cpu = 2;
  auto plan = BuildPlan();
  ASSERT_TRUE(plan) << plan.error().message;
  ASSERT_TRUE(plan->settings.explain);
  EXPECT_EQ(plan->settings.explain->threshold_ns, 200 * kNsPerUs);
  EXPECT_EQ(plan->settings.explain->session.cpus, std::vector<int>{2});
}

TEST(StudyStressSpecTest, ScalesThePerCpuStressorsAndHalvesTheOthers) {
  EXPECT_EQ(StudyStressSpec(4),
            "stress-ng:--cpu 4 --cpu-method matrixprod --vm 2 --vm-bytes 75% --hdd 1 --pipe 4 "
            "--mq 2 --sock 2 --switch 2");
  EXPECT_EQ(StudyStressSpec(1),
            "stress-ng:--cpu 1 --cpu-method matrixprod --vm 1 --vm-bytes 75% --hdd 1 --pipe 1 "
            "--mq 1 --sock 1 --switch 1");
}

}  // namespace
}  // namespace rtpulse::suite
