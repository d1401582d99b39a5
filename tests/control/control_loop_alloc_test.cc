// Proves the control loop allocates nothing: the counting operator new (support/alloc_counter.h)
// counts calls made by the loop's thread between plan.before_loop (right before the first job) and
// plan.after_loop (right after the last).
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <new>

#include "control/control_loop.h"
#include "core/clock.h"
#include "support/alloc_counter.h"
#include "support/subprocess.h"

namespace rtpulse::control {
namespace {

class SumBody final : public JobBody {
 public:
  void Run(uint64_t k) override { sum_ = sum_ + k; }

 private:
  volatile uint64_t sum_ = 0;
};

class ControlAllocTest : public ::testing::TestWithParam<measure::WakePath> {
 protected:
  void SetUp() override {
    if (!testutil::IsRoot()) GTEST_SKIP() << "needs root for SCHED_FIFO";
  }
};

TEST_P(ControlAllocTest, LoopAllocatesNothing) {
  ControlLoopPlan plan;
  plan.path = GetParam();
  plan.policy = *ParsePolicySpec(
      plan.path == measure::WakePath::kDeadline ? "deadline:500us/2ms/2ms" : "fifo:50");
  plan.period_ns = 2 * kNsPerMs;
  plan.jobs = 200;
  // Overruns on: the skip path and the miss path run too.
  plan.inject_every = 25;
  plan.inject_ns = 3 * kNsPerMs;
  bool entered = false;
  plan.before_loop = [&] {
    entered = true;
    testutil::CountAllocationsInThisThread(true);
  };
  plan.after_loop = [] { testutil::CountAllocationsInThisThread(false); };
  testutil::ResetCountedAllocations();
  SumBody body;
  std::atomic<bool> stop{false};
  ControlLive live;
  auto run = RunControlLoop(plan, body, stop, &live);
  ASSERT_TRUE(run.has_value()) << run.error().message;
  EXPECT_TRUE(entered);
  EXPECT_EQ(run->jobs.size(), plan.jobs);
  EXPECT_GE(run->misses, plan.jobs / plan.inject_every);
  EXPECT_EQ(testutil::CountedAllocations(), 0u) << "allocations inside the control loop";
}

INSTANTIATE_TEST_SUITE_P(Paths, ControlAllocTest,
                         ::testing::Values(measure::WakePath::kAbs, measure::WakePath::kTimerfd,
                                           measure::WakePath::kDeadline),
                         [](const ::testing::TestParamInfo<measure::WakePath>& path_info) {
                           return std::string(WakePathName(path_info.param));
                         });

}  // namespace
}  // namespace rtpulse::control
