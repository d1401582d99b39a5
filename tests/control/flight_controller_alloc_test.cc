// Proves the control job allocates nothing per step: the counting operator new
// (support/alloc_counter.h, plain and over-aligned) counts the calls made while Step() runs. Its
// own executable, so not in sanitizer builds (whose allocators own operator new).
#include <gtest/gtest.h>

#include <cstdlib>
#include <new>

#include "control/flight_controller.h"
#include "support/alloc_counter.h"

namespace rtpulse::control {
namespace {

class FlightControllerAllocTest : public ::testing::TestWithParam<WorkSetMode> {};

TEST_P(FlightControllerAllocTest, StepAllocatesNothing) {
  FlightController c(ControllerConfig::Defaults(0.004), 1);
  ASSERT_TRUE(c.SetWorkSet(256 * 1024, GetParam()).ok());
  c.SetExtraPasses(5);
  testutil::ResetCountedAllocations();
  testutil::CountAllocationsInThisThread(true);
  for (uint64_t k = 0; k < 3000; ++k) c.Step(k);
  testutil::CountAllocationsInThisThread(false);
  EXPECT_EQ(testutil::CountedAllocations(), 0u) << "allocations inside Step()";
  EXPECT_EQ(c.line_visits(0), 3000u);
}

INSTANTIATE_TEST_SUITE_P(BothModes, FlightControllerAllocTest,
                         ::testing::Values(WorkSetMode::kStreaming, WorkSetMode::kRandom),
                         [](const auto& param_info) {
                           return param_info.param == WorkSetMode::kStreaming ? "streaming"
                                                                              : "random";
                         });

TEST(FlightControllerAllocCounterTest, TheCounterSeesPlainAndAlignedAllocations) {
  // Guards the guard: the controller holds over-aligned types, so both forms of operator new
  // must be counted. (The work set itself is an mmap of its own, marked MADV_DONTFORK.)
  struct alignas(64) OverAligned {
    uint64_t word = 0;
  };
  testutil::ResetCountedAllocations();
  testutil::CountAllocationsInThisThread(true);
  OverAligned* volatile aligned = new OverAligned;
  // Through a volatile pointer: a new/delete pair the compiler can see is otherwise removed
  // (-fallocation-dce) now that operator new is defined in another file.
  int* volatile p = new int(5);
  testutil::CountAllocationsInThisThread(false);
  delete p;
  delete aligned;
  EXPECT_EQ(testutil::CountedAllocations(), 2u);
}

TEST(FlightControllerAllocCounterTest, AnImpossibleWorkSetIsAResourceError) {
  // Here rather than in the unit test program: sanitizer allocators abort on such a request
  // instead of throwing std::bad_alloc.
  FlightController c(ControllerConfig::Defaults(0.004), 1);
  Status s = c.SetWorkSet(size_t{1} << 60, WorkSetMode::kStreaming);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().code, ExitCode::kResource);
  EXPECT_NE(s.error().message.find(std::to_string(size_t{1} << 60)), std::string::npos)
      << s.error().message;
  EXPECT_EQ(c.work_set_bytes(), 0u);
}

}  // namespace
}  // namespace rtpulse::control
