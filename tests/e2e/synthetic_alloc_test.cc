// The synthetic source's steady-state Read allocates nothing (the frame's buffer keeps its
// size): the counting operator new of support/alloc_counter.h. Its own executable, so not in
// sanitizer builds (whose allocators own operator new).
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "e2e/frame_source.h"
#include "support/alloc_counter.h"

namespace rtpulse::e2e {
namespace {

TEST(SyntheticAllocTest, SteadyStateReadAllocatesNothing) {
  auto source = MakeSource(*ParseSourceSpec("synthetic"));
  ASSERT_TRUE(source);
  ASSERT_TRUE((*source)->Open());
  CapturedFrame frame;
  ASSERT_TRUE(*(*source)->Read(frame));  // sizes the buffer
  testutil::ResetCountedAllocations();
  testutil::CountAllocationsInThisThread(true);
  uint64_t read = 0;
  for (int i = 0; i < 200; ++i) read += *(*source)->Read(frame) ? 1u : 0u;
  testutil::CountAllocationsInThisThread(false);
  EXPECT_EQ(testutil::CountedAllocations(), 0u) << "allocations inside Read()";
  EXPECT_EQ(read, 200u);
  EXPECT_EQ(frame.seq, 200u);
}

TEST(SyntheticAllocTest, FillReferencesAllocatesNothingOnceFilledAndMatchesReferences) {
  auto source = MakeSource(*ParseSourceSpec("synthetic"));
  ASSERT_TRUE(source);
  ASSERT_TRUE((*source)->Open());
  CapturedFrame frame;
  std::vector<ReferencePoint> points;
  ASSERT_TRUE(*(*source)->Read(frame));
  (*source)->FillReferences(points);  // sizes the vector
  testutil::ResetCountedAllocations();
  uint64_t counted = 0;
  for (int i = 0; i < 200; ++i) {
    ASSERT_TRUE(*(*source)->Read(frame));
    testutil::CountAllocationsInThisThread(true);
    (*source)->FillReferences(points);
    testutil::CountAllocationsInThisThread(false);
    counted += testutil::CountedAllocations();
    testutil::ResetCountedAllocations();
    // The same points as References() (which allocates its own vector), frame by frame.
    const std::vector<ReferencePoint> copy = (*source)->References();
    ASSERT_EQ(copy.size(), points.size()) << "frame " << frame.seq;
    for (size_t k = 0; k < copy.size(); ++k) {
      EXPECT_EQ(copy[k].x, points[k].x);
      EXPECT_EQ(copy[k].y, points[k].y);
      EXPECT_EQ(copy[k].depth_m, points[k].depth_m);
    }
    EXPECT_GE(points.size(), 3u);
    EXPECT_LE(points.size(), 32u);
  }
  EXPECT_EQ(counted, 0u) << "allocations inside FillReferences()";
}

TEST(SyntheticAllocTest, TheCounterSeesAnAllocationInARead) {
  // Guards the guard: a Read into a fresh frame must allocate its buffer, and be counted.
  auto source = MakeSource(*ParseSourceSpec("synthetic:64x48"));
  ASSERT_TRUE((*source)->Open());
  testutil::ResetCountedAllocations();
  testutil::CountAllocationsInThisThread(true);
  auto* frame = new CapturedFrame;
  const bool ok = *(*source)->Read(*frame);
  testutil::CountAllocationsInThisThread(false);
  delete frame;
  EXPECT_TRUE(ok);
  EXPECT_GE(testutil::CountedAllocations(), 2u);
}

}  // namespace
}  // namespace rtpulse::e2e
