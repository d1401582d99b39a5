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

TEST_P(PipelineAllocTest, TheSyntheticSourcesReferencesAllocateNothingPerFrame) {
  // The synthetic source gives each frame's ground references: the capture thread fills them
  // into the frame's slot (FrameSource::FillReferences) and the inference thread hands them
  // to the postprocessor, both without allocating in the steady state.
  pipetest::RealStages real;
  real.Load(2);
  auto made = MakeSource(*ParseSourceSpec("synthetic:320x96"));
  ASSERT_TRUE(made.has_value()) << made.error().message;
  FrameSource& source = **made;
  ASSERT_TRUE(source.Open());
  CapturedFrame first;
  ASSERT_TRUE(*source.Read(first));
  const std::vector<ReferencePoint> refs = source.References();
  ASSERT_GE(refs.size(), 3u);
  Preprocessor pre;
  ASSERT_TRUE(pre.Prepare(PreprocessSpec{}, 320, 96, real.backend->shape()));
  Postprocessor post;
  Status prepared = post.Prepare(DecisionSpec{}, real.backend->shape(), pre, refs);
  ASSERT_TRUE(prepared) << prepared.error().message;
  PipelineSettings settings;
  settings.mode = GetParam();
  settings.fps = 400;
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
  PipelineStages stages;
  stages.source = &source;
  stages.preprocess = &pre;
  stages.inference = &backend;
  stages.postprocess = &post;
  std::atomic<bool> stop{false};
  testutil::ResetCountedAllocations();
  auto result = RunPipeline(settings, stages, stop);
  ASSERT_TRUE(result.has_value()) << result.error().message;
  ASSERT_TRUE(result->error.empty()) << result->error;
  ASSERT_EQ(result->frames.size(), 60u);
  EXPECT_EQ(entered.load(), 2) << "both threads counted";
  EXPECT_EQ(testutil::CountedAllocations(), 0u)
      << "allocations in the capture and inference threads over 60 frames with references";
}

TEST(PipelineAllocGuardTest, TheDefaultFillReferencesAllocatesAndIsCounted) {
  // Guards the guard: a source that only has References() (the default FillReferences
  // copies a new vector) allocates per frame, and the counter sees it.
  class RefSource final : public FrameSource {
   public:
    Status Open() override { return Status::Ok(); }
    Expected<bool> Read(CapturedFrame&) override { return true; }
    TimestampSource timestamp_source() const override { return TimestampSource::kRead; }
    std::string Describe() const override { return "refs"; }
    std::vector<ReferencePoint> References() const override { return {{1, 2, 3.0}}; }
  };
  RefSource source;
  std::vector<ReferencePoint> out;
  out.reserve(8);
  testutil::ResetCountedAllocations();
  testutil::CountAllocationsInThisThread(true);
  source.FillReferences(out);
  testutil::CountAllocationsInThisThread(false);
  EXPECT_GE(testutil::CountedAllocations(), 1u);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].depth_m, 3.0);
}

INSTANTIATE_TEST_SUITE_P(Modes, PipelineAllocTest,
                         ::testing::Values(PipelineMode::kBackToBack, PipelineMode::kPeriodic),
                         [](const ::testing::TestParamInfo<PipelineMode>& mode) {
                           return std::string(mode.param == PipelineMode::kPeriodic ? "Periodic"
                                                                                    : "BackToBack");
                         });

}  // namespace
}  // namespace rtpulse::e2e
