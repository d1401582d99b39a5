// The synthetic source's steady-state Read allocates nothing (the frame's buffer keeps its
// size): the counting operator new of support/alloc_counter.h. Its own executable, so not in
// sanitizer builds (whose allocators own operator new).
#include <gtest/gtest.h>

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
