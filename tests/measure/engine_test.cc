// Real SCHED_FIFO runs of the measurement engine: every wake path, counts that add up,
// the ground-truth injector. Asserts structure and ground truth, never raw latency sizes
// (the VM host adds 4-15 ms stalls at random).
#include "measure/engine.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <map>
#include <mutex>

#include "core/clock.h"
#include "measure/sample_log.h"
#include "support/printers.h"
#include "support/subprocess.h"
#include "sys/system_info.h"

namespace rtpulse::measure {
namespace {

std::vector<int> Cpus() { return sys::OnlineCpus(FsRoot::System()); }

LatencyPlan PinnedPlan(int64_t interval_ns, int64_t duration_ns) {
  LatencyPlan plan;
  for (int cpu : Cpus()) {
    ThreadPlan t;
    t.index = static_cast<int>(plan.threads.size());
    t.cpu = cpu;
    t.policy = Policy::kFifo;
    t.priority = 80;
    t.interval_ns = interval_ns;
    plan.threads.push_back(t);
  }
  plan.duration_ns = duration_ns;
  plan.pm_qos_us = 0;
  return plan;
}

/// Collects every record the writer hands over.
class CollectingSink final : public SampleSink {
 public:
  explicit CollectingSink(std::vector<SampleRecord>* out, bool* finished)
      : out_(out), finished_(finished) {}
  Status Write(const SampleRecord* records, size_t count) override {
    out_->insert(out_->end(), records, records + count);
    return Status::Ok();
  }
  Status Finish(uint64_t, bool) override {
    *finished_ = true;
    return Status::Ok();
  }

 private:
  std::vector<SampleRecord>* out_;
  bool* finished_;
};

class EngineTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!testutil::IsRoot()) GTEST_SKIP() << "needs root for SCHED_FIFO and mlockall";
    BlockRunSignals();
  }
};

class WakePathTest : public EngineTest, public ::testing::WithParamInterface<WakePath> {};

TEST_P(WakePathTest, CountsAddUpAndHistogramHoldsEverySample) {
  const WakePath path = GetParam();
  constexpr int64_t kInterval = 1 * kNsPerMs;
  constexpr int64_t kDuration = 1 * kNsPerSec;
  LatencyPlan plan = PinnedPlan(kInterval, kDuration);
  if (path == WakePath::kItimer) plan.threads.resize(1);  // one ITIMER_REAL per process
  plan.paths = {path};
  plan.linear_histogram_us = 100;
  plan.sample_ring_capacity = 1 << 16;
  std::vector<SampleRecord> records;
  bool finished = false;

  auto run = RunLatency(plan, nullptr, std::make_unique<CollectingSink>(&records, &finished));
  ASSERT_TRUE(run.has_value()) << run.error().message;
  ASSERT_EQ(run->paths.size(), 1u);
  EXPECT_TRUE(finished);
  EXPECT_FALSE(run->interrupted);
  const auto& probes = run->paths[0].probes;
  ASSERT_EQ(probes.size(), plan.threads.size());
  uint64_t total_samples = 0;
  for (const auto& p : probes) {
    SCOPED_TRACE(::testing::Message() << "path " << p.wake << " thread " << p.index);
    EXPECT_EQ(p.wake, WakePathName(path));
    EXPECT_FALSE(p.degraded) << (p.notes.empty() ? "" : p.notes.front());
    const uint64_t samples = p.histogram.count();
    EXPECT_GT(samples, 100u);
    // Every period is either sampled, skipped, or (deadline only) restarted by the kernel.
    EXPECT_EQ(samples + p.skipped_periods + p.grid_restarts, p.periods_elapsed);
    EXPECT_LE(p.missed_activations, p.skipped_periods);
    EXPECT_EQ(p.missed_activations == 0, p.skipped_periods == 0);
    if (path != WakePath::kRel) {
      // Absolute grids: the periods elapsed match the wall time (1 s of 1 ms periods). The
      // deadline and itimer grids start when their thread, woken at the origin, arms the
      // kernel's period, so a late wake-up there (host stalls: up to 15 ms) shortens them.
      const bool self_anchored = path == WakePath::kDeadline || path == WakePath::kItimer;
      const uint64_t expected = static_cast<uint64_t>(kDuration / kInterval);
      EXPECT_GE(p.periods_elapsed, expected - (self_anchored ? 20u : 2u));
      // The run ends at the first wake-up at or after its end; a late one (a host stall)
      // legitimately adds the periods it skipped. So the upper bound is the wall time up to
      // that last wake-up, read from the sample log.
      const SampleRecord* first = nullptr;
      const SampleRecord* last = nullptr;
      for (const auto& r : records) {
        if (r.thread != p.index) continue;
        if (first == nullptr) first = &r;
        last = &r;
      }
      ASSERT_NE(first, nullptr);
      const uint64_t wall_periods =
          first->seq + 1 + static_cast<uint64_t>((last->actual_ns - first->expected_ns) / kInterval);
      // SCHED_DEADLINE: a wake-up that lags its deadline by more than a period makes the
      // kernel start a fresh period at once (replenish_dl_new_period), cutting the period
      // it was in short. Each such restart counts one deadline more than wall time holds.
      EXPECT_LE(p.periods_elapsed, wall_periods + 1 + p.grid_restarts)
          << "first seq " << first->seq << ", last wake " << last->actual_ns - first->expected_ns
          << " ns after the first deadline";
    }
    ASSERT_TRUE(p.linear.has_value());
    uint64_t linear_total = p.linear->overflows + p.linear->underflows;
    for (uint64_t c : p.linear->counts) linear_total += c;
    EXPECT_EQ(linear_total, samples);
    EXPECT_EQ(p.samples_logged, samples);
    EXPECT_EQ(p.samples_dropped, 0u);
    if (path != WakePath::kBusy && path != WakePath::kDeadline) {
      EXPECT_GE(p.histogram.min(), 0);
    }
    total_samples += samples;
  }
  // The per-sample log holds exactly the histogram's samples, with consistent fields.
  EXPECT_EQ(records.size(), total_samples);
  std::map<int, uint64_t> last_seq;
  for (const auto& r : records) {
    EXPECT_EQ(r.wake_path, static_cast<uint8_t>(path));
    auto it = last_seq.find(r.thread);
    if (it != last_seq.end()) {
      EXPECT_GT(r.seq, it->second);
    }
    last_seq[r.thread] = r.seq;
  }
}

INSTANTIATE_TEST_SUITE_P(AllPaths, WakePathTest, ::testing::ValuesIn(kAllWakePaths),
                         [](const auto& param_info) { return std::string(WakePathName(param_info.param)); });

TEST_F(EngineTest, InjectedDelaysShowUpAsOneSampleEach) {
  constexpr int64_t kDelay = 2 * kNsPerMs;
  LatencyPlan plan = PinnedPlan(kNsPerMs, 3 * kNsPerSec);
  plan.inject = InjectPlan{kDelay, 10.0};
  plan.sample_ring_capacity = 1 << 16;
  std::vector<SampleRecord> records;
  bool finished = false;
  auto run = RunLatency(plan, nullptr, std::make_unique<CollectingSink>(&records, &finished));
  ASSERT_TRUE(run.has_value()) << run.error().message;
  for (const auto& p : run->paths[0].probes) {
    SCOPED_TRACE(::testing::Message() << "thread " << p.index);
    // 3 s at 10 Hz, the last one at or before the end: 29 or 30 injections.
    EXPECT_GE(p.injections, 28u);
    EXPECT_LE(p.injections, 30u);
    // Each injection lands on deadline seq 100k-1 and delays that sample by >= 2 ms.
    uint64_t hit = 0;
    uint64_t noise = 0;
    for (const auto& r : records) {
      if (r.thread != p.index) continue;
      const int64_t latency = r.actual_ns - r.expected_ns;
      if (latency < kDelay) continue;
      if (r.seq % 100 == 99) {
        ++hit;
      } else {
        ++noise;  // a host stall of >= 2 ms, not ours
      }
    }
    // Allow a few injections to coincide with a host stall that skipped their deadline.
    EXPECT_GE(hit, p.injections * 9 / 10);
    EXPECT_LE(hit, p.injections);
    // Samples >= the delay match the injections, plus at most a little host noise.
    const uint64_t at_or_above = hit + noise;
    EXPECT_LE(at_or_above, p.injections + std::max<uint64_t>(3, p.injections / 5))
        << "host noise: " << noise;
  }
}

TEST_F(EngineTest, LoopsStopEachThreadAtItsCount) {
  LatencyPlan plan = PinnedPlan(500 * kNsPerUs, 0);
  plan.loops = 300;
  auto run = RunLatency(plan, nullptr, nullptr);
  ASSERT_TRUE(run.has_value()) << run.error().message;
  for (const auto& p : run->paths[0].probes) EXPECT_EQ(p.histogram.count(), 300u);
}

TEST_F(EngineTest, SeveralPathsRunInTurnUnderIdenticalSettings) {
  LatencyPlan plan = PinnedPlan(kNsPerMs, 300 * kNsPerMs);
  plan.paths = {WakePath::kAbs, WakePath::kTimerfd, WakePath::kXthread};
  auto run = RunLatency(plan, nullptr, nullptr);
  ASSERT_TRUE(run.has_value()) << run.error().message;
  ASSERT_EQ(run->paths.size(), 3u);
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(run->paths[i].wake, WakePathName(plan.paths[i]));
    ASSERT_EQ(run->paths[i].probes.size(), plan.threads.size());
    for (size_t t = 0; t < plan.threads.size(); ++t) {
      EXPECT_EQ(run->paths[i].probes[t].cpu, plan.threads[t].cpu);
      EXPECT_EQ(run->paths[i].probes[t].priority, 80);
      EXPECT_GT(run->paths[i].probes[t].histogram.count(), 100u);
    }
  }
}

TEST_F(EngineTest, SpikesAreKeptUpToTheirCapacityAndCountedBeyond) {
  LatencyPlan plan = PinnedPlan(kNsPerMs, 0);
  plan.threads.resize(1);
  plan.loops = 200;
  plan.spike_ns = 1;  // every sample is a spike
  plan.spike_nodes = 50;
  auto run = RunLatency(plan, nullptr, nullptr);
  ASSERT_TRUE(run.has_value());
  const auto& p = run->paths[0].probes[0];
  EXPECT_EQ(p.spikes.size(), 50u);
  EXPECT_EQ(p.spikes.size() + p.spikes_not_kept, p.histogram.CountAtOrAbove(2));
}

TEST_F(EngineTest, BreaktraceStopsTheRunAtTheFirstSampleAboveTheLimit) {
  LatencyPlan plan = PinnedPlan(kNsPerMs, 10 * kNsPerSec);
  plan.breaktrace_ns = 1;  // the first sample above 1 ns ends it
  auto run = RunLatency(plan, nullptr, nullptr);
  ASSERT_TRUE(run.has_value());
  ASSERT_TRUE(run->breaktrace.has_value());
  EXPECT_GT(run->breaktrace->latency_ns, 1);
  uint64_t samples = 0;
  for (const auto& p : run->paths[0].probes) samples += p.histogram.count();
  EXPECT_LE(samples, 2 * plan.threads.size());
}

}  // namespace
}  // namespace rtpulse::measure
