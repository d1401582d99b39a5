// Real SCHED_FIFO runs of the measurement engine: every wake path, counts that add up,
// the ground-truth injector. Asserts structure and ground truth, never raw latency sizes
// (the VM host adds 4-15 ms stalls at random).
#include "measure/engine.h"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <iterator>
#include <map>
#include <mutex>

#include "core/clock.h"
#include "core/cpus.h"
#include "measure/sample_log.h"
#include "support/printers.h"
#include "support/subprocess.h"
#include "sys/system_info.h"

namespace rtpulse::measure {
namespace {

std::vector<int> Cpus() {
  return OnlineCpus(FsRoot::System());
}

LatencyPlan PinnedPlan(int64_t interval_ns, int64_t duration_ns) {
  LatencyPlan plan;
  for (int cpu : Cpus()) {
    ThreadPlan t;
    t.index = static_cast<int>(plan.threads.size());
    t.cpu = cpu;
    t.policy = SchedPolicy::kFifo;
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
      if (!self_anchored) {
        EXPECT_GE(p.periods_elapsed, expected - 2u);
      }
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
          first->seq + 1 +
          static_cast<uint64_t>((last->actual_ns - first->expected_ns) / kInterval);
      // SCHED_DEADLINE: a wake-up that lags its deadline by more than a period makes the
      // kernel start a fresh period at once (replenish_dl_new_period), cutting the period
      // it was in short. Each such restart counts one deadline more than wall time holds.
      EXPECT_LE(p.periods_elapsed, wall_periods + 1 + p.grid_restarts)
          << "first seq " << first->seq << ", last wake " << last->actual_ns - first->expected_ns
          << " ns after the first deadline";
      if (self_anchored) {
        // Their grid starts where the thread armed it, so wall time since the origin says
        // nothing; the log does: every period from the first deadline to the last wake-up
        // is counted, less at most one per kernel grid restart (the restarted period is cut
        // short) and the partial periods at either end.
        EXPECT_GE(p.periods_elapsed + 2 + p.grid_restarts, wall_periods)
            << "first seq " << first->seq << ", last wake " << last->actual_ns - first->expected_ns
            << " ns after the first deadline";
      }
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
                         [](const auto& param_info) {
                           return std::string(WakePathName(param_info.param));
                         });

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
    // Each injection lands on deadline seq 100k-1 and delays that sample by >= 2 ms. One
    // injection must make exactly one late sample: the next sample (after the periods it
    // skipped) is on time again. Anything else >= 2 ms is a host stall, whose rate this VM
    // does not bound (CI saw 41 in 3 s on one CPU), so the bounds below are structural: an
    // injection counted twice spills after nearly every hit, and a probe knocked off its grid
    // makes nearly every sample late.
    uint64_t hit = 0;
    uint64_t spill = 0;
    uint64_t noise = 0;
    uint64_t samples = 0;
    bool after_hit = false;
    for (const auto& r : records) {
      if (r.thread != p.index) continue;
      ++samples;
      const int64_t latency = r.actual_ns - r.expected_ns;
      const bool late = latency >= kDelay;
      if (late && r.seq % 100 == 99) {
        ++hit;
      } else if (late && after_hit) {
        ++spill;
      } else if (late) {
        ++noise;
      }
      after_hit = late && r.seq % 100 == 99;
    }
    // The probe's own record of the samples on an injection's deadline (inside a 2 ms spin
    // from each 100 ms of the grid: seq s with (s + 1) % 100 < 2), against the log's.
    ASSERT_TRUE(p.injected_histogram.has_value());
    // Counted from a bucket's lower edge, where the histogram's count is exact.
    const int64_t edge =
        Histogram::MagnitudeRange(Histogram::IndexOf(static_cast<uint64_t>(kDelay))).lo;
    uint64_t in_spin = 0, in_spin_late = 0;
    for (const auto& r : records) {
      if (r.thread != p.index || (r.seq + 1) % 100 >= 2) continue;
      ++in_spin;
      in_spin_late += r.actual_ns - r.expected_ns >= edge ? 1 : 0;
    }
    EXPECT_EQ(p.injected_histogram->count(), in_spin);
    EXPECT_EQ(p.injected_histogram->CountAtOrAbove(edge), in_spin_late);
    // Every injection is accounted for, one by one: its deadline (seq 100k-1) is either in the
    // log at least the delay late, or a stall's wake-up before it had already passed it (the
    // probe records a late wake-up once and counts the deadlines it swallowed as skipped, so
    // that deadline has no record), or, rarely, recorded on time. ci stop 45 saw 4 of 29 taken
    // the second way, which the earlier share-of-hits bound called a failure. The injector and
    // the probe share that CPU and that deadline, so the probe cannot stamp its wake-up before
    // the injector's spin has ended once the injector sleeps for it; under TSan (ci54) both
    // probes recorded the first injection on time, the injector's thread not yet asleep for it.
    // So on-time ones are counted, and held to the bound the hits had before (a tenth): an
    // injection the probe misses always (the bug this test is for) still fails it.
    std::map<uint64_t, const SampleRecord*> by_seq;
    for (const auto& r : records) {
      if (r.thread == p.index) by_seq[r.seq] = &r;
    }
    ASSERT_FALSE(by_seq.empty());
    const SampleRecord& first = *by_seq.begin()->second;
    uint64_t injected_late = 0;
    uint64_t swallowed = 0;
    uint64_t on_time = 0;
    for (uint64_t k = 1; k <= p.injections; ++k) {
      const uint64_t seq = 100 * k - 1;
      const int64_t deadline = first.expected_ns + static_cast<int64_t>(seq - first.seq) * kNsPerMs;
      const auto at = by_seq.find(seq);
      if (at != by_seq.end()) {
        EXPECT_EQ(at->second->expected_ns, deadline) << "seq " << seq;
        if (LatencyNs(*at->second) >= kDelay) {
          ++injected_late;
        } else {
          ++on_time;
          std::printf("thread %d: injection %llu (seq %llu) recorded %lld ns late\n", p.index,
                      static_cast<unsigned long long>(k), static_cast<unsigned long long>(seq),
                      static_cast<long long>(LatencyNs(*at->second)));
        }
        continue;
      }
      // No record: the wake-up before it must have come at or after this deadline (the
      // injections counted are those within the periods the probe covered, the last wake-up's
      // swallowed ones included).
      const auto after = by_seq.upper_bound(seq);
      ASSERT_NE(after, by_seq.begin()) << "seq " << seq;
      const SampleRecord& before = *std::prev(after)->second;
      EXPECT_GE(before.actual_ns, deadline)
          << "injection " << k << " (seq " << seq << ") has no record, yet the wake-up before it"
          << " (seq " << before.seq << ") came " << deadline - before.actual_ns
          << " ns before its deadline";
      ++swallowed;
    }
    EXPECT_EQ(injected_late + swallowed + on_time, p.injections);
    EXPECT_LE(on_time * 10, p.injections) << on_time << " injections recorded on time";
    EXPECT_EQ(hit, injected_late);
    // A spill would be an injection counted twice: that bug spills after every hit. The host
    // stalls right after the 2 ms spin more often than its overall rate (CI saw 8 spills
    // after 27 hits in one run), so the bound is three quarters.
    EXPECT_LE(spill * 4, hit * 3) << "samples right after an injection that were also >= 2 ms: "
                                  << spill << " of " << hit;
    // Host stalls stay a small share of the samples (41 is 1.4 % of 3000).
    EXPECT_LE(noise * 10, samples)
        << "late samples outside the injections: " << noise << " of " << samples;
  }
}

TEST_F(EngineTest, LoopsStopEachThreadAtItsCount) {
  LatencyPlan plan = PinnedPlan(500 * kNsPerUs, 0);
  plan.loops = 300;
  auto run = RunLatency(plan, nullptr, nullptr);
  ASSERT_TRUE(run.has_value()) << run.error().message;
  for (const auto& p : run->paths[0].probes) EXPECT_EQ(p.histogram.count(), 300u);
}

bool HasReadinessWarning(const RunRecord& run) {
  return std::any_of(run.warnings.begin(), run.warnings.end(), [](const std::string& w) {
    return w.find("had not finished their real-time set-up") != std::string::npos;
  });
}

TEST_F(EngineTest, AReadinessTimeoutIsRecordedAsAWarningAndTheRunGoesOn) {
  LatencyPlan plan = PinnedPlan(kNsPerMs, 200 * kNsPerMs);
  // Every probe stalls 600 ms after its set-up; the engine gives up waiting after 50 ms.
  SetLoopHooks({.before_ready = [] { ::usleep(600'000); }, .ready_timeout_ns = 50 * kNsPerMs});
  auto run = RunLatency(plan, nullptr, nullptr);
  SetLoopHooks({});
  ASSERT_TRUE(run.has_value()) << run.error().message;
  ASSERT_TRUE(HasReadinessWarning(*run)) << ::testing::PrintToString(run->warnings);
  const std::string expected = fmt::format("abs: {} of {} threads had not finished",
                                           plan.threads.size(), plan.threads.size());
  EXPECT_TRUE(std::any_of(run->warnings.begin(), run->warnings.end(), [&](const std::string& w) {
    return w.rfind(expected, 0) == 0;
  })) << ::testing::PrintToString(run->warnings);
  // The late probes still measured (their first activations late: not asserted).
  ASSERT_EQ(run->paths.size(), 1u);
  for (const auto& p : run->paths[0].probes) EXPECT_GT(p.histogram.count(), 0u);
}

TEST_F(EngineTest, NoReadinessWarningWhenEveryThreadIsReadyInTime) {
  LatencyPlan plan = PinnedPlan(kNsPerMs, 100 * kNsPerMs);
  auto run = RunLatency(plan, nullptr, nullptr);
  ASSERT_TRUE(run.has_value()) << run.error().message;
  EXPECT_FALSE(HasReadinessWarning(*run)) << ::testing::PrintToString(run->warnings);
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

/// Keeps a copy of every checkpoint (the engine reuses its snapshot between calls).
class CheckpointRecorder final : public RunObserver {
 public:
  CheckpointRecorder(int64_t interval_ns, bool wants_ticks)
      : interval_ns_(interval_ns), wants_ticks_(wants_ticks) {}
  bool WantsTicks() const override { return wants_ticks_; }
  int64_t CheckpointIntervalNs() const override { return interval_ns_; }
  void OnCheckpoint(size_t path_index, const PathRecord& snapshot) override {
    path_indices.push_back(path_index);
    snapshots.push_back(snapshot);
  }
  std::vector<size_t> path_indices;
  std::vector<PathRecord> snapshots;

 private:
  int64_t interval_ns_;
  bool wants_ticks_;
};

uint64_t BucketSum(const Histogram& h) {
  uint64_t total = 0;
  h.ForEachBucket([&](Histogram::Range, uint64_t c) { total += c; });
  return total;
}

/// Checks one path's checkpoints against each other and against the path's final result.
void ExpectCheckpointsConsistent(const std::vector<const PathRecord*>& snapshots,
                                 const PathRecord& final_run, const LatencyPlan& plan) {
  for (size_t i = 0; i < snapshots.size(); ++i) {
    const PathRecord& s = *snapshots[i];
    SCOPED_TRACE(::testing::Message() << "checkpoint " << i << " of " << final_run.wake);
    EXPECT_EQ(s.wake, final_run.wake);
    EXPECT_EQ(s.start_realtime_ns, final_run.start_realtime_ns);
    EXPECT_GT(s.duration_ns, 0);
    ASSERT_EQ(s.probes.size(), plan.threads.size());
    for (size_t t = 0; t < s.probes.size(); ++t) {
      const ProbeRecord& p = s.probes[t];
      const ProbeRecord& end = final_run.probes[t];
      SCOPED_TRACE(::testing::Message() << "thread " << t);
      EXPECT_EQ(p.index, plan.threads[t].index);
      EXPECT_EQ(p.cpu, plan.threads[t].cpu);
      EXPECT_EQ(p.tid, end.tid);
      EXPECT_EQ(p.policy, end.policy);
      EXPECT_EQ(p.priority, end.priority);
      EXPECT_EQ(p.interval_ns, plan.threads[t].interval_ns);
      EXPECT_EQ(p.wake, end.wake);
      EXPECT_GT(p.histogram.count(), 0u);
      EXPECT_EQ(p.histogram.count(), BucketSum(p.histogram));
      EXPECT_TRUE(p.histogram.approximate_moments());
      EXPECT_LE(p.histogram.min(), p.histogram.max());
      // Nothing the final result holds can have been seen earlier than it happened.
      EXPECT_LE(p.histogram.count(), end.histogram.count());
      EXPECT_LE(p.periods_elapsed, end.periods_elapsed);
      EXPECT_LE(p.missed_activations, end.missed_activations);
      EXPECT_LE(p.skipped_periods, end.skipped_periods);
      EXPECT_LE(p.samples_logged + p.samples_dropped, end.samples_logged + end.samples_dropped);
      if (i == 0) continue;
      const ProbeRecord& before = snapshots[i - 1]->probes[t];
      EXPECT_GE(p.histogram.count(), before.histogram.count());
      EXPECT_GE(p.histogram.negative_count(), before.histogram.negative_count());
      EXPECT_GE(p.periods_elapsed, before.periods_elapsed);
      EXPECT_GE(p.missed_activations, before.missed_activations);
      EXPECT_GE(p.skipped_periods, before.skipped_periods);
      EXPECT_GE(p.samples_logged + p.samples_dropped,
                before.samples_logged + before.samples_dropped);
    }
    if (i > 0) {
      EXPECT_GT(s.duration_ns, snapshots[i - 1]->duration_ns);
      EXPECT_GE(s.end_realtime_ns, snapshots[i - 1]->end_realtime_ns);
    }
  }
}

TEST_F(EngineTest, CheckpointsComeEveryIntervalAndNeverCountBackwards) {
  LatencyPlan plan = PinnedPlan(kNsPerMs, 2500 * kNsPerMs);
  // Quiet mode (-q): checkpoints must not depend on the live view's ticks.
  CheckpointRecorder recorder(500 * kNsPerMs, /*wants_ticks=*/false);
  auto run = RunLatency(plan, &recorder, nullptr);
  ASSERT_TRUE(run.has_value()) << run.error().message;
  ASSERT_EQ(run->paths.size(), 1u);
  // At 0.5, 1.0, 1.5 and 2.0 s (host stalls only delay each by a few ms); maybe 2.5 s.
  EXPECT_GE(recorder.snapshots.size(), 4u);
  EXPECT_LE(recorder.snapshots.size(), 5u);
  for (size_t index : recorder.path_indices) EXPECT_EQ(index, 0u);
  std::vector<const PathRecord*> snapshots;
  for (const auto& s : recorder.snapshots) snapshots.push_back(&s);
  ExpectCheckpointsConsistent(snapshots, run->paths[0], plan);
}

TEST_F(EngineTest, EveryPathGetsItsOwnCheckpointsWithTheSampleLogOn) {
  LatencyPlan plan = PinnedPlan(kNsPerMs, 1100 * kNsPerMs);
  plan.paths = {WakePath::kAbs, WakePath::kTimerfd};
  plan.sample_ring_capacity = 1 << 16;
  std::vector<SampleRecord> records;
  bool finished = false;
  CheckpointRecorder recorder(300 * kNsPerMs, /*wants_ticks=*/true);
  auto run = RunLatency(plan, &recorder, std::make_unique<CollectingSink>(&records, &finished));
  ASSERT_TRUE(run.has_value()) << run.error().message;
  ASSERT_EQ(run->paths.size(), 2u);
  for (size_t path = 0; path < 2; ++path) {
    std::vector<const PathRecord*> snapshots;
    for (size_t i = 0; i < recorder.snapshots.size(); ++i) {
      if (recorder.path_indices[i] == path) snapshots.push_back(&recorder.snapshots[i]);
    }
    EXPECT_GE(snapshots.size(), 3u) << "path " << path;
    ExpectCheckpointsConsistent(snapshots, run->paths[path], plan);
    for (const auto* s : snapshots) {
      for (const auto& p : s->probes) EXPECT_GT(p.samples_logged, 0u);
    }
  }
  // Paths run in turn: all of path 0's checkpoints come before path 1's.
  EXPECT_TRUE(std::is_sorted(recorder.path_indices.begin(), recorder.path_indices.end()));
}

TEST_F(EngineTest, NoCheckpointsUnlessAnIntervalIsAsked) {
  LatencyPlan plan = PinnedPlan(kNsPerMs, 600 * kNsPerMs);
  CheckpointRecorder recorder(0, /*wants_ticks=*/false);
  auto run = RunLatency(plan, &recorder, nullptr);
  ASSERT_TRUE(run.has_value()) << run.error().message;
  EXPECT_TRUE(recorder.snapshots.empty());
}

}  // namespace
}  // namespace rtpulse::measure
