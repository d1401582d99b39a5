// Proves the stages around inference allocate nothing per frame once prepared: the counting
// operator new (support/alloc_counter.h) counts what Preprocessor::Run, Postprocessor::Run
// and SetReferences (same number of points, as the synthetic source gives each frame) do.
#include <gtest/gtest.h>

#include <cmath>

#include "e2e/processing.h"
#include "support/alloc_counter.h"

namespace rtpulse::e2e {
namespace {

TEST(ProcessingAlloc, FramesAfterPrepareAllocateNothing) {
  ModelShape shape;
  shape.in_channels = 3;
  shape.in_width = shape.in_height = 256;
  shape.out_channels = 1;
  shape.out_width = shape.out_height = 256;
  PreprocessSpec pspec;
  pspec.crop = {0.05, 0.1, 0.95, 1.0};
  Preprocessor pre;
  ASSERT_TRUE(pre.Prepare(pspec, 1242, 375, shape));
  std::vector<ReferencePoint> refs;
  for (int i = 0; i < 40; ++i) refs.push_back({100.0 + 25 * i, 200.0 + 4 * i, 2.0 + 0.2 * i});
  Postprocessor post;
  ASSERT_TRUE(post.Prepare(DecisionSpec{}, shape, pre, refs));
  Image frame;
  frame.Reshape(1242, 375);
  Tensor input, depth;
  depth.shape = {1, 1, 256, 256};
  depth.data.assign(256 * 256, 0.5f);
  Decision d;
  // The first frame sizes the caller's tensor; what follows is the steady state.
  ASSERT_TRUE(pre.Run(frame, input));
  testutil::ResetCountedAllocations();
  testutil::CountAllocationsInThisThread(true);
  bool all_ok = true;
  for (int k = 0; k < 60; ++k) {
    for (size_t i = 0; i < frame.bgr.size(); i += 97)
      frame.bgr[i] = static_cast<uint8_t>(i + static_cast<size_t>(k));
    for (size_t i = 0; i < depth.data.size(); ++i) {
      depth.data[i] = static_cast<float>(0.5 + 0.4 * std::sin(0.001 * static_cast<double>(i) + k));
    }
    if (k % 10 == 3) depth.data.assign(depth.data.size(), NAN);  // the no-fit path too
    for (ReferencePoint& r : refs) r.depth_m += 0.01;
    all_ok = all_ok && pre.Run(frame, input) && post.SetReferences(pre, refs) && post.Run(depth, d);
  }
  testutil::CountAllocationsInThisThread(false);
  EXPECT_TRUE(all_ok);
  EXPECT_EQ(testutil::CountedAllocations(), 0u) << "allocations in the per-frame stages";
}

}  // namespace
}  // namespace rtpulse::e2e
