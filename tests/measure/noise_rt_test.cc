// Real SCHED_FIFO runs of the noise pollers (measure/noise.h) against ground truth: a thread of
// the test above the poller on its CPU takes it for known spans at known times, and each span
// must be found as one noise event that covers it. Asserts structure and ground truth, never
// raw noise sizes (the VM host adds 4-15 ms stalls at random).
#include <gtest/gtest.h>

#include <numeric>
#include <thread>

#include "core/clock.h"
#include "core/cpus.h"
#include "measure/noise.h"
#include "support/cpu_taker.h"
#include "support/subprocess.h"

namespace rtpulse::measure {
namespace {

using testutil::Span;
using testutil::TakeTheCpu;

TEST(NoiseRtTest, AHigherPriorityThreadsSpansAreFoundAsTheNoiseThatCoversThem) {
  if (!testutil::IsRoot()) GTEST_SKIP() << "SCHED_FIFO needs root";
  const int cpu = OnlineCpus(FsRoot::Live()).back();
  NoisePlan plan;
  plan.cpus = {cpu};
  plan.policy = SchedPolicy::kFifo;
  plan.priority = 50;
  plan.duration_ns = 1'300 * kNsPerMs;
  plan.lock_memory = false;
  constexpr int kSpans = 10;
  constexpr int64_t kSpin = 2 * kNsPerMs;
  std::vector<Span> spans;
  std::string error;
  const int64_t first = MonotonicNs() + 200 * kNsPerMs;
  std::thread taker(
      [&] { spans = TakeTheCpu(cpu, 60, first, 100 * kNsPerMs, kSpin, kSpans, &error); });
  const std::atomic<bool> stop{false};
  auto run = RunNoise(plan, stop);
  taker.join();
  ASSERT_TRUE(error.empty()) << error;
  ASSERT_TRUE(run) << run.error().message;
  ASSERT_EQ(run->cpus.size(), 1u);
  const NoiseCpuRecord& r = run->cpus[0];
  EXPECT_EQ(r.cpu, cpu);
  EXPECT_FALSE(run->interrupted);
  // Every gap is in the histogram once; the events and their sum are those kept.
  EXPECT_EQ(std::accumulate(r.histogram.begin(), r.histogram.end(), uint64_t{0}), r.reads);
  ASSERT_EQ(r.kept.size(), r.events) << "nothing was dropped in 1.3 s";
  int64_t sum = 0;
  for (size_t i = 0; i < r.kept.size(); ++i) {
    sum += r.kept[i].gap_ns;
    EXPECT_GT(r.kept[i].gap_ns, plan.threshold_ns);
    if (i > 0) {
      EXPECT_GE(r.kept[i].start_ns, r.kept[i - 1].start_ns + r.kept[i - 1].gap_ns);
    }
  }
  EXPECT_EQ(sum, r.noise_ns);
  EXPECT_GE(r.max_gap_ns, kSpin);
  EXPECT_LE(r.min_gap_ns, plan.bucket_width_ns);
  // From its first read, taken once it was released, to the common end.
  EXPECT_GE(r.end_ns - r.start_ns, plan.duration_ns * 9 / 10);
  // Each span: one event covers it (the poller's last read before it, its first read after);
  // what the event adds to it is the switches in and out, unless the host stalled there too.
  ASSERT_EQ(spans.size(), static_cast<size_t>(kSpans));
  int tight = 0;
  for (const Span& s : spans) {
    const auto covering = std::find_if(r.kept.begin(), r.kept.end(), [&](const NoiseEvent& e) {
      return e.start_ns <= s.start_ns && e.start_ns + e.gap_ns >= s.end_ns;
    });
    ASSERT_NE(covering, r.kept.end()) << "no event covers the span at " << s.start_ns;
    const int64_t excess = covering->gap_ns - (s.end_ns - s.start_ns);
    if (excess < 500 * kNsPerUs) ++tight;
  }
  EXPECT_GE(tight, kSpans * 8 / 10) << "spans found with an event within 500 us of their length";
}

TEST(NoiseRtTest, AGapAboveTheStopLimitEndsTheRunAndIsMarked) {
  if (!testutil::IsRoot()) GTEST_SKIP() << "SCHED_FIFO needs root";
  const int cpu = OnlineCpus(FsRoot::Live()).back();
  NoisePlan plan;
  plan.cpus = {cpu};
  plan.priority = 50;
  plan.duration_ns = 5 * kNsPerSec;
  plan.stop_above_ns = 1 * kNsPerMs;
  plan.lock_memory = false;
  std::string error;
  std::thread taker([&] {
    TakeTheCpu(cpu, 60, MonotonicNs() + 300 * kNsPerMs, kNsPerSec, 3 * kNsPerMs, 1, &error);
  });
  const std::atomic<bool> stop{false};
  auto run = RunNoise(plan, stop);
  taker.join();
  ASSERT_TRUE(error.empty()) << error;
  ASSERT_TRUE(run) << run.error().message;
  const NoiseCpuRecord& r = run->cpus[0];
  EXPECT_TRUE(r.stopped_above);
  EXPECT_LT(r.end_ns - r.start_ns, 4 * kNsPerSec) << "the 3 ms span (or a host stall) stopped it";
  ASSERT_FALSE(r.kept.empty());
  EXPECT_GT(r.kept.back().gap_ns, plan.stop_above_ns) << "the last event is the one that stopped";
  EXPECT_EQ(r.kept.back().start_ns + r.kept.back().gap_ns, r.end_ns);
}

TEST(NoiseRtTest, StopEndsTheRunEarlyWithWhatWasMeasured) {
  NoisePlan plan;
  plan.cpus = {OnlineCpus(FsRoot::Live()).back()};
  plan.policy = SchedPolicy::kOther;
  plan.priority = 0;
  plan.duration_ns = 0;  // until stopped
  plan.lock_memory = false;
  std::atomic<bool> stop{false};
  std::thread stopper([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    stop.store(true);
  });
  auto run = RunNoise(plan, stop);
  stopper.join();
  ASSERT_TRUE(run) << run.error().message;
  EXPECT_TRUE(run->interrupted);
  EXPECT_GT(run->cpus[0].reads, 0u);
  EXPECT_GT(run->cpus[0].end_ns, run->cpus[0].start_ns);
}

TEST(NoiseRtTest, ABadPlanIsAUsageErrorAndRunsNothing) {
  NoisePlan plan;
  plan.cpus = {0};
  plan.buckets = 2;
  const std::atomic<bool> stop{false};
  auto run = RunNoise(plan, stop);
  ASSERT_FALSE(run);
  EXPECT_EQ(run.error().code, ExitCode::kUsage);
  EXPECT_NE(run.error().message.find("2 buckets"), std::string::npos) << run.error().message;
}

}  // namespace
}  // namespace rtpulse::measure
