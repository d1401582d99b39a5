// Proves the pipeline's steady state allocates nothing: the counting operator new
// (support/alloc_counter.h) counts what the capture and the inference thread allocate between
// their before_loop and after_loop hooks (the recorded frames, after the warm-up), with the
// real OpenCV backend on depth-tiny.onnx and the real pre/postprocessing stages. OpenCV DNN's
// forward() allocates on every call (its layers' internal buffers: about 200 per frame on
// depth-tiny, measured in a plain loop below), which is the backend's, not the pipeline's: the
// backend's Run is left out of the count by a wrapper, and everything else must be zero.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdio>
#include <string>

#include "e2e/pipeline.h"
#include "e2e/pipeline_support.h"
#include "support/alloc_counter.h"

namespace rtpulse::e2e {
namespace {

/// The real backend with counting off during its Run (what OpenCV allocates is counted apart).
class UncountedBackend final : public InferenceBackend {
 public:
  explicit UncountedBackend(InferenceBackend& real) : real_(real) {}
  Status Load(const std::string& path, int threads) override { return real_.Load(path, threads); }
  Status Run(const Tensor& input, Tensor& output) override {
    testutil::CountAllocationsInThisThread(false);
    Status s = real_.Run(input, output);
    testutil::CountAllocationsInThisThread(counting_.load());
    return s;
  }
  std::string name() const override { return real_.name(); }
  std::string why() const override { return real_.why(); }
  int threads() const override { return real_.threads(); }
  const ModelShape& shape() const override { return real_.shape(); }
  std::atomic<bool> counting_{false};  ///< Set when the recorded frames begin.

 private:
  InferenceBackend& real_;
};

/// Allocations per Run of the backend called directly in a plain loop (for the record).
double BackendAllocationsPerRun(InferenceBackend& backend) {
  Tensor input;
  const ModelShape& shape = backend.shape();
  input.shape = {1, shape.in_channels, shape.in_height, shape.in_width};
  input.data.assign(input.ElementCount(), 0.5F);
  Tensor output;
  EXPECT_TRUE(backend.Run(input, output));
  testutil::ResetCountedAllocations();
  testutil::CountAllocationsInThisThread(true);
  for (int i = 0; i < 20; ++i) EXPECT_TRUE(backend.Run(input, output));
  testutil::CountAllocationsInThisThread(false);
  return static_cast<double>(testutil::CountedAllocations()) / 20;
}

class PipelineAllocTest : public ::testing::TestWithParam<PipelineMode> {};

TEST_P(PipelineAllocTest, SteadyStateAllocatesNothing) {
  pipetest::RealStages real;
  real.Load(2);
  PipelineSettings settings;
  settings.mode = GetParam();
  settings.fps = 400;  // Periodic: faster than the work, so the drop path runs too.
  settings.frames = 60;
  settings.warmup_frames = 3;
  settings.threads_before_backend = real.threads_before;
  std::atomic<int> entered{0};
  UncountedBackend backend(*real.backend);
  settings.before_loop = [&entered, &backend] {
    ++entered;
    testutil::CountAllocationsInThisThread(true);
    backend.counting_ = true;
  };
  settings.after_loop = [] { testutil::CountAllocationsInThisThread(false); };
  PipelineStages stages = real.Stages(&backend);
  std::atomic<bool> stop{false};
  testutil::ResetCountedAllocations();
  auto result = RunPipeline(settings, stages, stop);
  ASSERT_TRUE(result.has_value()) << result.error().message;
  ASSERT_EQ(result->frames.size(), 60u);
  EXPECT_EQ(entered.load(), 2) << "both threads counted";
  EXPECT_EQ(testutil::CountedAllocations(), 0u)
      << "allocations in the capture and inference threads over 60 frames";
  const double per_run = BackendAllocationsPerRun(*real.backend);
  RecordProperty("opencv_allocations_per_run", std::to_string(per_run));
  std::printf("OpenCV DNN's own allocations per Run (plain loop, not the pipeline's): %.1f\n",
              per_run);
}

INSTANTIATE_TEST_SUITE_P(Modes, PipelineAllocTest,
                         ::testing::Values(PipelineMode::kBackToBack, PipelineMode::kPeriodic),
                         [](const ::testing::TestParamInfo<PipelineMode>& mode) {
                           return std::string(mode.param == PipelineMode::kPeriodic ? "Periodic"
                                                                                    : "BackToBack");
                         });

}  // namespace
}  // namespace rtpulse::e2e
