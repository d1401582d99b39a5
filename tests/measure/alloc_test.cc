// Proves the probe loop allocates nothing: the counting operator new (support/alloc_counter.h)
// counts calls made by a thread while it is inside the measurement loop (LoopHooks mark it).
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <new>

#include "core/clock.h"
#include "core/cpus.h"
#include "measure/engine.h"
#include "measure/sample_log.h"
#include "support/alloc_counter.h"
#include "support/printers.h"
#include "support/subprocess.h"
#include "sys/system_info.h"

namespace rtpulse::measure {
namespace {

std::atomic<uint64_t> g_loops_entered{0};

class NullSink final : public SampleSink {
 public:
  Status Write(const SampleRecord*, size_t) override { return Status::Ok(); }
  Status Finish(uint64_t, bool) override { return Status::Ok(); }
};

/// Takes checkpoints during the run, so their live copies are proven to leave the loop
/// alone (the snapshot is allocated on the main thread, which is not counted).
class CheckpointCounter final : public RunObserver {
 public:
  int64_t CheckpointIntervalNs() const override { return 100 * kNsPerMs; }
  void OnCheckpoint(size_t, const PathRecord& snapshot) override {
    ++checkpoints;
    for (const auto& p : snapshot.probes) samples_seen += p.histogram.count();
  }
  int checkpoints = 0;
  uint64_t samples_seen = 0;
};

class AllocTest : public ::testing::TestWithParam<WakePath> {
 protected:
  void SetUp() override {
    if (!testutil::IsRoot()) GTEST_SKIP() << "needs root for SCHED_FIFO";
    BlockRunSignals();
    SetLoopHooks({[] {
                    testutil::CountAllocationsInThisThread(true);
                    g_loops_entered.fetch_add(1);
                  },
                  [] { testutil::CountAllocationsInThisThread(false); }});
  }
  void TearDown() override { SetLoopHooks({}); }
};

TEST_P(AllocTest, ProbeLoopAllocatesNothing) {
  LatencyPlan plan;
  for (int cpu : OnlineCpus(FsRoot::System())) {
    ThreadPlan t;
    t.index = static_cast<int>(plan.threads.size());
    t.cpu = cpu;
    t.interval_ns = 500 * kNsPerUs;
    plan.threads.push_back(t);
  }
  if (GetParam() == WakePath::kItimer) plan.threads.resize(1);
  plan.paths = {GetParam()};
  plan.duration_ns = 500 * kNsPerMs;
  // Every optional branch of the loop on: linear histogram with overflows, spikes beyond
  // their capacity, the sample ring.
  plan.linear_histogram_us = 5;
  plan.spike_ns = 1;
  plan.spike_nodes = 4;
  plan.sample_ring_capacity = 1 << 12;
  testutil::ResetCountedAllocations();
  g_loops_entered = 0;
  CheckpointCounter observer;
  auto run = RunLatency(plan, &observer, std::make_unique<NullSink>());
  ASSERT_TRUE(run.has_value()) << run.error().message;
  EXPECT_EQ(g_loops_entered.load(), plan.threads.size());
  uint64_t samples = 0;
  for (const auto& p : run->paths[0].probes) samples += p.histogram.count();
  EXPECT_GT(samples, 100u);
  EXPECT_EQ(testutil::CountedAllocations(), 0u) << "allocations inside the probe loop";
  // busy: FIFO threads spinning on every CPU starve the SCHED_OTHER main thread until RT
  // throttling's 50 ms gap at the end of each second, so a 500 ms run gets no checkpoint.
  if (GetParam() != WakePath::kBusy) {
    EXPECT_GE(observer.checkpoints, 3);  // 500 ms run, one every 100 ms
    EXPECT_GT(observer.samples_seen, 0u);
  }
}

TEST(AllocCounterTest, TheCounterSeesAnAllocationInsideTheMarkedRegion) {
  // Guards the guard: if operator new were not replaced, the test above could not fail.
  testutil::ResetCountedAllocations();
  testutil::CountAllocationsInThisThread(true);
  // Through a volatile pointer: a new/delete pair the compiler can see is otherwise removed
  // (-fallocation-dce) now that operator new is defined in another file.
  int* volatile p = new int(5);
  testutil::CountAllocationsInThisThread(false);
  delete p;
  EXPECT_EQ(testutil::CountedAllocations(), 1u);
}

INSTANTIATE_TEST_SUITE_P(AllPaths, AllocTest, ::testing::ValuesIn(kAllWakePaths),
                         [](const auto& param_info) {
                           return std::string(WakePathName(param_info.param));
                         });

}  // namespace
}  // namespace rtpulse::measure
