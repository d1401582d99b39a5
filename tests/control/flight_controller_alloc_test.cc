// Proves the control job allocates nothing per step: global operator new (plain and
// over-aligned) is replaced here and counts the calls made while Step() runs. Its own
// executable, so not in sanitizer builds (whose allocators own operator new).
#include <gtest/gtest.h>

#include <cstdlib>
#include <new>

#include "control/flight_controller.h"

namespace {
bool g_fc_counting = false;
uint64_t g_fc_allocations = 0;

void* FcCountedAlloc(std::size_t size) {
  if (g_fc_counting) ++g_fc_allocations;
  void* p = std::malloc(size == 0 ? 1 : size);
  if (p == nullptr) throw std::bad_alloc();
  return p;
}
void* FcCountedAlignedAlloc(std::size_t size, std::align_val_t align) {
  if (g_fc_counting) ++g_fc_allocations;
  auto a = static_cast<std::size_t>(align);
  void* p = std::aligned_alloc(a, (size + a - 1) / a * a);
  if (p == nullptr) throw std::bad_alloc();
  return p;
}
}  // namespace

void* operator new(std::size_t size) {
  return FcCountedAlloc(size);
}
void* operator new[](std::size_t size) {
  return FcCountedAlloc(size);
}
void* operator new(std::size_t size, std::align_val_t align) {
  return FcCountedAlignedAlloc(size, align);
}
void* operator new[](std::size_t size, std::align_val_t align) {
  return FcCountedAlignedAlloc(size, align);
}
void operator delete(void* p) noexcept {
  std::free(p);
}
void operator delete[](void* p) noexcept {
  std::free(p);
}
void operator delete(void* p, std::size_t) noexcept {
  std::free(p);
}
void operator delete[](void* p, std::size_t) noexcept {
  std::free(p);
}
void operator delete(void* p, std::align_val_t) noexcept {
  std::free(p);
}
void operator delete[](void* p, std::align_val_t) noexcept {
  std::free(p);
}
void operator delete(void* p, std::size_t, std::align_val_t) noexcept {
  std::free(p);
}
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept {
  std::free(p);
}

namespace rtpulse::control {
namespace {

class FlightControllerAllocTest : public ::testing::TestWithParam<WorkSetMode> {};

TEST_P(FlightControllerAllocTest, StepAllocatesNothing) {
  FlightController c(ControllerConfig::Defaults(0.004), 1);
  ASSERT_TRUE(c.SetWorkSet(256 * 1024, GetParam()).ok());
  c.SetExtraPasses(5);
  g_fc_allocations = 0;
  g_fc_counting = true;
  for (uint64_t k = 0; k < 3000; ++k) c.Step(k);
  g_fc_counting = false;
  EXPECT_EQ(g_fc_allocations, 0u) << "allocations inside Step()";
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
  g_fc_allocations = 0;
  g_fc_counting = true;
  auto* aligned = new OverAligned;
  auto* p = new int(5);
  g_fc_counting = false;
  delete p;
  delete aligned;
  EXPECT_EQ(g_fc_allocations, 2u);
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
