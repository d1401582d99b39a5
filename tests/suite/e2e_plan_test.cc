// rtpulse e2e's plan (suite/e2e_plan.h): every option check on a machine made of files (4
// online CPUs) with a model file that is only checked, not loaded; then PrecheckE2e on a real
// image folder and model. Nothing runs, nothing is written.
#include "suite/e2e_plan.h"

#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "core/clock.h"
#include "e2e/inference.h"
#include "support/plan_test.h"
#include "support/test_paths.h"

namespace rtpulse::suite {
namespace {

class E2ePlanTest : public testutil::PlanTest<E2eRequest, E2ePlan, &BuildE2ePlan> {
 protected:
  void SetUp() override {
    if (!e2e::BackendCompiledIn(e2e::BackendKind::kOpenCv)) {
      GTEST_SKIP() << "built without the OpenCV backend (RTPULSE_INFERENCE=OFF)";
    }
    tree_.Write("/sys/devices/system/cpu/online", "0-3\n").Write("/m/model.onnx", "not a model");
    request_.model = tree_.path() + "/m/model.onnx";
    request_.out = tree_.path() + "/run";
  }
};

TEST_F(E2ePlanTest, DefaultsAreOneBackToBackBaselineOnOneThread) {
  auto plan = BuildPlan();
  ASSERT_TRUE(plan) << plan.error().message;
  const E2eSettings& s = plan->settings;
  EXPECT_EQ(s.pipeline.frames, 1000u);
  EXPECT_EQ(s.pipeline.warmup_frames, 10u);
  EXPECT_EQ(s.pipeline.mode, e2e::PipelineMode::kBackToBack);
  EXPECT_EQ(s.pipeline.deadline_ns, 0);
  EXPECT_EQ(s.backend, e2e::BackendKind::kOpenCv);
  ASSERT_EQ(s.configurations.size(), 1u);
  EXPECT_EQ(s.configurations[0].scenario, "baseline");
  EXPECT_EQ(s.configurations[0].threads, 1);
  EXPECT_FALSE(plan->sweep);
  EXPECT_EQ(plan->suite.out_dir, request_.out);
}

TEST_F(E2ePlanTest, NumbersThatAreNoNumbersAreNamedWithAnExample) {
  request_.threads = "two";
  EXPECT_EQ(Refusal(), "--threads 'two' is not a whole number: give e.g. --threads 2");
  request_.threads = "";
  request_.near_m = "close";
  EXPECT_EQ(Refusal(),
            "--near 'close' is not a number: give a distance in metres, e.g. --near 1.0");
  request_.near_m = "";
  request_.frames = "0";
  EXPECT_NE(Refusal().find("--frames 0: give 1..10000000"), std::string::npos);
  request_.frames = "5";
  request_.warmup = "-1";
  EXPECT_NE(Refusal().find("--warmup -1: give 0..100000"), std::string::npos);
}

TEST_F(E2ePlanTest, PeriodicModeTakesItsDeadlineFromTheFrameRate) {
  request_.fps = "fast";
  EXPECT_NE(Refusal().find("--fps 'fast': give a frame rate above 0"), std::string::npos);
  request_.fps = "10";
  auto plan = BuildPlan();
  ASSERT_TRUE(plan) << plan.error().message;
  EXPECT_EQ(plan->settings.pipeline.mode, e2e::PipelineMode::kPeriodic);
  EXPECT_EQ(plan->settings.pipeline.deadline_ns, 100 * kNsPerMs);
  request_.deadline = "100";
  EXPECT_NE(Refusal().find("--deadline '100' needs a unit"), std::string::npos);
  request_.deadline = "50ms";
  request_.out = tree_.path() + "/run2";
  auto given = BuildPlan();
  ASSERT_TRUE(given) << given.error().message;
  EXPECT_EQ(given->settings.pipeline.deadline_ns, 50 * kNsPerMs);
}

TEST_F(E2ePlanTest, ThreadPoliciesAndCpusAreCheckedAgainstTheMachine) {
  request_.capture_policy = "deadline";
  EXPECT_NE(Refusal().find("give other, fifo:PRIO or rr:PRIO"), std::string::npos);
  request_.capture_policy = "fifo:0";
  EXPECT_NE(Refusal().find("the priority must be 1..99 (e.g. fifo:80)"), std::string::npos);
  request_.capture_policy = "rr:70";
  request_.inference_cpus = "2,7";
  EXPECT_NE(Refusal().find("--inference-cpus '2,7': CPU 7 is not online (online: 0-3)"),
            std::string::npos);
  request_.inference_cpus = "2-3";
  auto plan = BuildPlan();
  ASSERT_TRUE(plan) << plan.error().message;
  EXPECT_EQ(plan->settings.pipeline.capture.policy, "rr");
  EXPECT_EQ(plan->settings.pipeline.capture.priority, 70);
  EXPECT_EQ(plan->suite.cpus, (std::vector<int>{2, 3}));
}

TEST_F(E2ePlanTest, ThreadSweepTriesOneToTheInferenceCpusWithAndWithoutTheLoad) {
  request_.sweep = "threads";
  request_.threads = "2";
  EXPECT_NE(Refusal().find("drop --threads"), std::string::npos);
  request_.threads = "";
  request_.inference_cpus = "1-3";
  request_.load = {"cpu"};
  auto plan = BuildPlan();
  ASSERT_TRUE(plan) << plan.error().message;
  EXPECT_TRUE(plan->sweep);
  ASSERT_EQ(plan->settings.configurations.size(), 6u);
  EXPECT_EQ(plan->settings.configurations[0].scenario, "threads-1");
  EXPECT_EQ(plan->settings.configurations[5].scenario, "threads-3-loaded");
  EXPECT_EQ(plan->settings.configurations[5].configuration, "threads 3, loaded");
  EXPECT_EQ(plan->suite.config.scenarios[5].settle_ns, kNsPerSec);
  request_.sweep = "cpus";
  EXPECT_EQ(Refusal(), "--sweep 'cpus': the only sweep is 'threads'");
}

TEST_F(E2ePlanTest, NearAndClearKeepTheirHysteresis) {
  request_.near_m = "2";
  auto plan = BuildPlan();
  ASSERT_TRUE(plan) << plan.error().message;
  EXPECT_DOUBLE_EQ(plan->settings.decision.near_m, 2.0);
  EXPECT_DOUBLE_EQ(plan->settings.decision.clear_m, 2.5);  // --near x 1.25
  request_.clear_m = "1";
  EXPECT_NE(Refusal().find("--clear 1: give a distance in metres at least --near (2)"),
            std::string::npos);
}

TEST_F(E2ePlanTest, OutputsThatWouldCollideAreRefused) {
  request_.loopback = "gpio:gpiochip0:3";
  EXPECT_NE(Refusal().find("--loopback needs --alert gpio:CHIP:LINE"), std::string::npos);
  request_.loopback = "";
  request_.csv = "-";
  EXPECT_NE(Refusal().find("--csv -: the seed's CSV goes to a file"), std::string::npos);
  request_.csv = "";
  request_.json = "-";
  request_.alert = "stdout";
  EXPECT_NE(Refusal().find("--alert stdout with --json -"), std::string::npos);
  request_.alert = "none";
  request_.json = tree_.path() + "/no/such/folder/summary.json";
  EXPECT_EQ(Refusal().rfind("--json: ", 0), 0u);
}

TEST_F(E2ePlanTest, ModelAndBackendMustAgree) {
  request_.backend = "armnn";
  auto plan = BuildPlan();
  ASSERT_FALSE(plan);
  EXPECT_EQ(plan.error().code, ExitCode::kUsage) << plan.error().message;
  EXPECT_NE(plan.error().message.find("--backend armnn cannot run"), std::string::npos)
      << plan.error().message;
  request_.backend = "";
  request_.model = tree_.path() + "/m/absent.onnx";
  EXPECT_NE(Refusal().find("--model: model "), std::string::npos);
}

TEST_F(E2ePlanTest, AFiniteSourceTheWarmupWouldUseUpIsRefusedBeforeAnythingIsWritten) {
  const std::string models = RTPULSE_MODELS_DIR;
  if (models.empty()) GTEST_SKIP() << "no generated models in this build";
  const std::string frame = std::string("P6\n4 4\n255\n") + std::string(4 * 4 * 3, '\x40');
  tree_.Write("/frames/a.ppm", frame)
      .Write("/frames/b.ppm", frame)
      .Write("/ref.csv", "1,1,3.0\n2,3,1.5\n");
  request_.source = "images:" + tree_.path() + "/frames";
  request_.reference = tree_.path() + "/ref.csv";
  request_.model = models + "/depth-tiny.onnx";
  request_.warmup = "10";
  auto plan = BuildPlan();
  ASSERT_TRUE(plan) << plan.error().message;
  const Status checked = PrecheckE2e(*plan);
  ASSERT_FALSE(checked);
  EXPECT_EQ(checked.error().code, ExitCode::kUsage);
  EXPECT_NE(checked.error().message.find("has 2 frame(s) and --warmup 10 runs 10 before "
                                         "recording: nothing would be recorded; give --warmup 1 "
                                         "or less"),
            std::string::npos)
      << checked.error().message;
  request_.warmup = "1";
  request_.out = tree_.path() + "/run2";
  auto fits = BuildPlan();
  ASSERT_TRUE(fits) << fits.error().message;
  const Status ok = PrecheckE2e(*fits);
  EXPECT_TRUE(ok) << ok.error().message;
}

}  // namespace
}  // namespace rtpulse::suite
