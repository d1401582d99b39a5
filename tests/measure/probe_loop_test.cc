// The probe loop driven by scripted wake-ups and a scripted clock (Probe::RunLoop): no
// thread, no RT set-up, no root. Every expectation is computed by hand from the script:
// interval 1000 ns, grid origin 1'000'000 ns, so the first deadline is 1'001'000.
#include "measure/probe_loop.h"

#include <gtest/gtest.h>

#include <cerrno>
#include <cstdint>
#include <vector>

namespace rtpulse::measure {
namespace {

constexpr int64_t kInterval = 1000;
constexpr int64_t kOrigin = 1'000'000;

/// One scripted activation. `expected_ns` < 0 means "the deadline the loop asked for" (the
/// abs path); a periodic source reports its own.
struct Step {
  int64_t now_ns;
  int64_t expected_ns = -1;
  uint64_t expirations = 0;
  int error = 0;
  bool set_stop = false;  ///< Stop is asked for while this wait blocks.
  bool ended = false;     ///< The source ends the run without an activation (event sources).
};

/// A wake source that replays `steps` and remembers every deadline it was asked to wait for.
class ScriptedSource {
 public:
  ScriptedSource(std::vector<Step> steps, RunShared& shared)
      : steps_(std::move(steps)), shared_(shared) {}

  WakeResult Wait(int64_t deadline_ns) {
    deadlines_.push_back(deadline_ns);
    // Running past the script is a test bug: fail loudly and end the loop.
    if (next_ >= steps_.size()) {
      ADD_FAILURE() << "the loop waited more often than scripted";
      return {deadline_ns, 0, EIO};
    }
    const Step& step = steps_[next_++];
    now_ = step.now_ns;
    if (step.set_stop) shared_.stop.store(true);
    WakeResult r{step.expected_ns >= 0 ? step.expected_ns : deadline_ns, step.expirations,
                 step.error};
    r.ended = step.ended;
    return r;
  }
  int64_t GridOrigin(int64_t planned_ns) const {
    return grid_origin_ns >= 0 ? grid_origin_ns : planned_ns;
  }
  bool RestartsGridOnOverrun() const { return restarts_grid; }

  int64_t now() const { return now_; }
  const std::vector<int64_t>& deadlines() const { return deadlines_; }

  bool restarts_grid = false;
  int64_t grid_origin_ns = -1;

 private:
  std::vector<Step> steps_;
  RunShared& shared_;
  size_t next_ = 0;
  int64_t now_ = 0;
  std::vector<int64_t> deadlines_;
};

/// The time the source's last wake-up returned at.
struct ScriptedClock {
  const ScriptedSource* source;
  int64_t Now() const { return source->now(); }
};

class ProbeLoopTest : public ::testing::Test {
 protected:
  ProbeLoopTest() {
    thread_.index = 3;
    thread_.cpu = 1;
    thread_.interval_ns = kInterval;
    shared_.origin_ns.store(kOrigin);
  }

  /// Builds the probe (after the test has adjusted plan_) and runs `source` through it.
  ProbeRecord Run(ScriptedSource& source, WakePath path = WakePath::kAbs) {
    probe_ = std::make_unique<Probe>(plan_, thread_, path, shared_, ring_.get(), nullptr);
    probe_->RunLoop(source, ScriptedClock{&source});
    return probe_->TakeResult();
  }

  std::vector<SampleRecord> DrainRing() {
    std::vector<SampleRecord> out(ring_->capacity());
    out.resize(ring_->Drain(out.data(), out.size()));
    return out;
  }

  LatencyPlan plan_;
  ThreadPlan thread_;
  RunShared shared_;
  std::unique_ptr<SampleRing> ring_;
  std::unique_ptr<Probe> probe_;
};

TEST_F(ProbeLoopTest, OnTimeWakeUpsAreRecordedOnTheGrid) {
  plan_.loops = 3;
  ScriptedSource source({{1'001'010}, {1'002'020}, {1'003'005}}, shared_);
  const ProbeRecord r = Run(source);
  EXPECT_EQ(source.deadlines(), (std::vector<int64_t>{1'001'000, 1'002'000, 1'003'000}));
  EXPECT_EQ(r.histogram.count(), 3u);
  EXPECT_EQ(r.histogram.min(), 5);
  EXPECT_EQ(r.histogram.max(), 20);
  EXPECT_EQ(r.periods_elapsed, 3u);
  EXPECT_EQ(r.missed_activations, 0u);
  EXPECT_EQ(r.skipped_periods, 0u);
  EXPECT_EQ(r.grid_restarts, 0u);
  EXPECT_EQ(r.last_latency_ns, 5);
  EXPECT_EQ(probe_->last_wake_ns(), 1'003'005);
  EXPECT_EQ(r.index, 3);
  EXPECT_EQ(r.cpu, 1);
  EXPECT_FALSE(r.degraded);
}

TEST_F(ProbeLoopTest, AnEndedWaitStopsTheLoopWithoutRecordingASample) {
  // An event source (the gpio path) whose run ended while no edge came: nothing recorded
  // for that wait, no error, and the samples before it stand.
  ScriptedSource source({{1'001'010}, {1'002'020}, {1'500'000, -1, 0, 0, false, true}}, shared_);
  const ProbeRecord r = Run(source, WakePath::kGpio);
  EXPECT_EQ(source.deadlines().size(), 3u);
  EXPECT_EQ(r.histogram.count(), 2u);
  EXPECT_EQ(r.histogram.max(), 20);
  EXPECT_EQ(r.periods_elapsed, 2u);
  EXPECT_EQ(probe_->last_wake_ns(), 1'002'020);
  EXPECT_FALSE(r.degraded);
  EXPECT_EQ(r.wake, "gpio");
}

TEST_F(ProbeLoopTest, EdgeEventsAreMeasuredFromTheirOwnTimestampsAndNeverCountedAsMisses) {
  plan_.loops = 3;
  // The gpio path reports each edge's kernel timestamp as the expected time and one
  // expiration per edge: a sample 5000 ns late (five intervals) is one late edge, not five
  // skipped periods; an edge queued behind it is served next with its own latency.
  ScriptedSource source(
      {{1'010'000, 1'005'000, 1}, {1'010'300, 1'007'000, 1}, {1'020'100, 1'020'000, 1}}, shared_);
  const ProbeRecord r = Run(source, WakePath::kGpio);
  EXPECT_EQ(r.histogram.count(), 3u);
  EXPECT_EQ(r.histogram.max(), 5000);
  EXPECT_EQ(r.histogram.min(), 100);
  EXPECT_EQ(r.missed_activations, 0u);
  EXPECT_EQ(r.skipped_periods, 0u);
  EXPECT_EQ(r.periods_elapsed, 3u);
  EXPECT_EQ(r.last_latency_ns, 100);
}

TEST_F(ProbeLoopTest, SkippedPeriodsAreDerivedFromTheLatencyWhenTheKernelCannotTell) {
  plan_.loops = 4;
  // 2500 ns late: the deadlines 1'003'000 and 1'004'000 passed too -> 2 skipped, and the
  // next deadline asked for is 1'005'000. Then exactly 1000 ns late: 1 skipped.
  ScriptedSource source({{1'001'010}, {1'004'500}, {1'006'000}, {1'006'400}}, shared_);
  const ProbeRecord r = Run(source);
  EXPECT_EQ(source.deadlines(), (std::vector<int64_t>{1'001'000, 1'002'000, 1'005'000, 1'007'000}));
  EXPECT_EQ(r.histogram.count(), 4u);  // 10, 2500, 1000, -600: late ones are recorded too
  EXPECT_EQ(r.histogram.max(), 2500);
  EXPECT_EQ(r.histogram.min(), -600);
  EXPECT_EQ(r.missed_activations, 2u);
  EXPECT_EQ(r.skipped_periods, 3u);
  EXPECT_EQ(r.periods_elapsed, 7u);  // 4 samples + 3 skipped
  EXPECT_EQ(r.last_latency_ns, -600);
}

TEST_F(ProbeLoopTest, MissedActivationsCountWakeUpsAndSkippedPeriodsCountPeriods) {
  plan_.loops = 3;
  // 2000 late -> 2 skipped; 1200 late -> 1 skipped: two missed activations, three periods.
  ScriptedSource source({{1'003'000}, {1'005'200}, {1'006'000}}, shared_);
  const ProbeRecord r = Run(source);
  EXPECT_EQ(source.deadlines(), (std::vector<int64_t>{1'001'000, 1'004'000, 1'006'000}));
  EXPECT_EQ(r.missed_activations, 2u);
  EXPECT_EQ(r.skipped_periods, 3u);
  EXPECT_EQ(r.periods_elapsed, 6u);
  EXPECT_EQ(r.histogram.count(), 3u);
}

TEST_F(ProbeLoopTest, KernelExpirationCountsWinOverTheLatency) {
  plan_.loops = 3;
  // A periodic timer reports its own expected time and expiration count: 3 expirations are
  // 2 skipped periods even though the wake-up itself was early in its period, and 1
  // expiration is none skipped even 1500 ns late.
  ScriptedSource source(
      {{1'001'100, 1'001'000, 1}, {1'002'050, 1'002'000, 3}, {1'006'500, 1'005'000, 1}}, shared_);
  const ProbeRecord r = Run(source, WakePath::kTimerfd);
  EXPECT_EQ(r.histogram.count(), 3u);
  EXPECT_EQ(r.histogram.max(), 1500);
  EXPECT_EQ(r.missed_activations, 1u);
  EXPECT_EQ(r.skipped_periods, 2u);
  EXPECT_EQ(r.periods_elapsed, 5u);
  // The loop asks for the deadline after the kernel's count: 1'002'000 + 3 x 1000.
  EXPECT_EQ(source.deadlines(), (std::vector<int64_t>{1'001'000, 1'002'000, 1'005'000}));
}

TEST_F(ProbeLoopTest, PerPeriodLatenciesCountEverySkippedPeriodWithItsOwnLateness) {
  plan_.loops = 5;
  // Deadlines 1'001'000 ... (interval 1000). By hand:
  //  1: deadline 1'001'000, woke 1'001'010: 10 ns, nothing skipped.
  //  2: deadline 1'002'000, woke 1'005'300: 3300 ns; 1'003'000, 1'004'000 and 1'005'000 went
  //     by with no wake-up of their own (floor(3300 / 1000) = 3 skipped), late 2300, 1300
  //     and 300 ns when this wake-up came. Next deadline 1'006'000.
  //  3: deadline 1'006'000, woke 1'006'040: 40 ns.
  //  4: deadline 1'007'000, woke 1'009'500 with the kernel's count of 3 expirations: 2500
  //     ns, 2 skipped (1'008'000 late 1500, 1'009'000 late 500). Next deadline 1'010'000.
  //  5: deadline 1'010'000, woke 1'010'020: 20 ns.
  ScriptedSource source(
      {{1'001'010}, {1'005'300}, {1'006'040}, {1'009'500, 1'007'000, 3}, {1'010'020}}, shared_);
  const ProbeRecord r = Run(source);
  EXPECT_EQ(source.deadlines(),
            (std::vector<int64_t>{1'001'000, 1'002'000, 1'006'000, 1'007'000, 1'010'000}));
  EXPECT_EQ(r.missed_activations, 2u);
  EXPECT_EQ(r.skipped_periods, 5u);
  EXPECT_EQ(r.periods_elapsed, 10u);

  // Per wake-up (cyclictest): 10, 3300, 40, 2500, 20, untouched by the stalls' periods.
  EXPECT_EQ(r.histogram.count(), 5u);
  EXPECT_EQ(r.histogram.sum(), 10 + 3300 + 40 + 2500 + 20);
  EXPECT_EQ(r.histogram.min(), 10);
  EXPECT_EQ(r.histogram.max(), 3300);
  EXPECT_EQ(r.histogram.CountAtOrAbove(1000), 2u);
  EXPECT_EQ(r.histogram.Percentile(50.0), 40);  // rank 3 of 10, 20, 40, 2500, 3300

  // The skipped periods: 2300, 1300, 300, 1500, 500, one each.
  EXPECT_EQ(r.skipped_histogram.count(), r.skipped_periods);
  EXPECT_EQ(r.skipped_histogram.sum(), 2300 + 1300 + 300 + 1500 + 500);
  EXPECT_EQ(r.skipped_histogram.min(), 300);
  EXPECT_EQ(r.skipped_histogram.max(), 2300);

  // Per period: all ten, sorted 10 20 40 300 500 1300 1500 2300 2500 3300.
  Histogram per_period = r.histogram;
  per_period.Merge(r.skipped_histogram);
  EXPECT_EQ(per_period.count(), r.periods_elapsed);
  EXPECT_EQ(per_period.sum(), 11'770);
  EXPECT_EQ(per_period.min(), 10);
  EXPECT_EQ(per_period.max(), 3300);
  EXPECT_EQ(per_period.CountAtOrAbove(1000), 5u);  // half the periods were >= 1 us late
  EXPECT_EQ(per_period.Percentile(50.0), 500);     // rank 5 of 10 (exact below 512 ns)
  EXPECT_EQ(per_period.Percentile(30.0), 40);      // rank 3
  EXPECT_EQ(per_period.CountAtOrAbove(2000), 3u);  // 2300, 2500, 3300
  EXPECT_EQ(per_period.CountAtOrAbove(301), 6u);   // 300 is the 4th smallest of ten
}

TEST_F(ProbeLoopTest, NoStallLeavesThePerPeriodHistogramEmpty) {
  plan_.loops = 2;
  ScriptedSource source({{1'001'900}, {1'002'100}}, shared_);  // 900 ns late: no skip
  const ProbeRecord r = Run(source);
  EXPECT_EQ(r.skipped_periods, 0u);
  EXPECT_EQ(r.skipped_histogram.count(), 0u);
  EXPECT_EQ(r.histogram.count(), 2u);
}

TEST_F(ProbeLoopTest, SequenceNumbersJumpOverSkippedPeriods) {
  ring_ = std::make_unique<SampleRing>(16);
  plan_.loops = 4;
  ScriptedSource source({{1'001'010}, {1'004'500}, {1'005'100}, {1'006'000}}, shared_);
  const ProbeRecord r = Run(source);
  const std::vector<SampleRecord> records = DrainRing();
  ASSERT_EQ(records.size(), 4u);
  const uint64_t seqs[] = {0, 1, 4, 5};
  const int64_t expected[] = {1'001'000, 1'002'000, 1'005'000, 1'006'000};
  const int64_t actual[] = {1'001'010, 1'004'500, 1'005'100, 1'006'000};
  const uint8_t flags[] = {0, SampleRecord::kMissed, 0, 0};
  for (size_t i = 0; i < records.size(); ++i) {
    SCOPED_TRACE(i);
    EXPECT_EQ(records[i].seq, seqs[i]);
    EXPECT_EQ(records[i].expected_ns, expected[i]);
    EXPECT_EQ(records[i].actual_ns, actual[i]);
    EXPECT_EQ(records[i].flags, flags[i]);
    EXPECT_EQ(records[i].thread, 3);
    EXPECT_EQ(records[i].cpu, 1);
    EXPECT_EQ(records[i].wake_path, static_cast<uint8_t>(WakePath::kAbs));
  }
  EXPECT_EQ(r.periods_elapsed, 6u);
  EXPECT_EQ(r.samples_logged, 4u);
  EXPECT_EQ(r.samples_dropped, 0u);
}

TEST_F(ProbeLoopTest, SpikesAndTheLinearHistogramKeepTheirPositions) {
  plan_.loops = 5;
  plan_.spike_ns = 900;
  plan_.spike_nodes = 1;
  plan_.linear_histogram_us = 2;
  // Latencies 10, 1500 (1 skipped), 950, 2100 (2 skipped), -5.
  ScriptedSource source({{1'001'010}, {1'003'500}, {1'004'950}, {1'007'100}, {1'007'995}}, shared_);
  const ProbeRecord r = Run(source);
  EXPECT_EQ(source.deadlines(),
            (std::vector<int64_t>{1'001'000, 1'002'000, 1'004'000, 1'005'000, 1'008'000}));
  ASSERT_EQ(r.spikes.size(), 1u);  // one node: the later spikes are counted, not kept
  EXPECT_EQ(r.spikes[0].seq, 1u);
  EXPECT_EQ(r.spikes[0].expected_ns, 1'002'000);
  EXPECT_EQ(r.spikes[0].latency_ns, 1500);
  EXPECT_EQ(r.spikes_not_kept, 2u);  // 950 and 2100
  ASSERT_TRUE(r.linear.has_value());
  EXPECT_EQ(r.linear->counts, (std::vector<uint64_t>{2, 1}));      // 10, 950 | 1500
  EXPECT_EQ(r.linear->overflows, 1u);                              // 2100
  EXPECT_EQ(r.linear->overflow_seqs, (std::vector<uint64_t>{3}));  // cyclictest's cycle: 4th sample
  EXPECT_EQ(r.linear->underflows, 1u);                             // -5
  EXPECT_EQ(r.histogram.count(), 5u);
  EXPECT_EQ(r.histogram.min(), -5);
  EXPECT_EQ(r.missed_activations, 2u);
  EXPECT_EQ(r.skipped_periods, 3u);
  EXPECT_EQ(r.periods_elapsed, 8u);
}

TEST_F(ProbeLoopTest, GridRestartsReanchorWithoutRecordingALatency) {
  plan_.loops = 4;
  ring_ = std::make_unique<SampleRing>(16);
  ScriptedSource source({{1'001'010},   // 10 ns
                         {1'003'500},   // 1500: 1 skipped; the kernel may restart its period
                         {1'004'700},   // re-anchor here: no sample, next = 1'005'700
                         {1'005'720},   // 20 ns on the new grid
                         {1'006'650},   // 50 ns before the deadline: a restart, proven
                         {1'007'655}},  // 5 ns on the grid anchored at 1'006'650
                        shared_);
  source.restarts_grid = true;
  const ProbeRecord r = Run(source, WakePath::kDeadline);
  EXPECT_EQ(source.deadlines(), (std::vector<int64_t>{1'001'000, 1'002'000, 1'004'000, 1'005'700,
                                                      1'006'700, 1'007'650}));
  EXPECT_EQ(r.histogram.count(), 4u);  // 10, 1500, 20, 5
  EXPECT_EQ(r.histogram.min(), 5);
  EXPECT_EQ(r.histogram.max(), 1500);
  EXPECT_EQ(r.grid_restarts, 2u);
  EXPECT_EQ(r.missed_activations, 1u);
  EXPECT_EQ(r.skipped_periods, 1u);
  EXPECT_EQ(r.periods_elapsed, 7u);  // 4 samples + 1 skipped + 2 restarts
  EXPECT_EQ(r.last_latency_ns, 5);
  EXPECT_EQ(r.cpu, -1);  // SCHED_DEADLINE probes are never pinned
  const std::vector<SampleRecord> records = DrainRing();
  ASSERT_EQ(records.size(), 4u);
  EXPECT_EQ(records[0].seq, 0u);
  EXPECT_EQ(records[1].seq, 1u);
  EXPECT_EQ(records[2].seq, 4u);  // seq 3 was the re-anchoring activation
  EXPECT_EQ(records[2].expected_ns, 1'005'700);
  EXPECT_EQ(records[3].seq, 6u);
}

TEST_F(ProbeLoopTest, PeriodsTheKernelPostponedBeforeARestartAreSkippedNotLost) {
  // SCHED_DEADLINE throttles a thread that overran its runtime (a host stall while it ran
  // counts as runtime) and postpones its next period by as many periods as the overrun
  // needs: 23 of our periods pass without an activation. They are missed periods, counted
  // as skipped with their lateness, so the periods elapsed match the wall time.
  plan_.loops = 3;
  ScriptedSource source({{1'001'010},   // 10 ns
                         {1'004'500},   // 2500 ns: 2 skipped; the kernel may restart
                         {1'028'300},   // re-anchor 23'300 ns after our deadline 1'005'000
                         {1'029'310}},  // 10 ns on the grid anchored at 1'028'300
                        shared_);
  source.restarts_grid = true;
  const ProbeRecord r = Run(source, WakePath::kDeadline);
  EXPECT_EQ(source.deadlines(), (std::vector<int64_t>{1'001'000, 1'002'000, 1'005'000, 1'029'300}));
  EXPECT_EQ(r.histogram.count(), 3u);  // 10, 2500, 10: the re-anchoring wake-up has none
  EXPECT_EQ(r.grid_restarts, 1u);
  EXPECT_EQ(r.missed_activations, 2u);
  EXPECT_EQ(r.skipped_periods, 2u + 23u);
  // 3 samples + 25 skipped + 1 restart; the wall time from the origin to the last wake-up
  // is 29.31 periods.
  EXPECT_EQ(r.periods_elapsed, 29u);
  // Each skipped period as late as the time from its deadline to the wake-up that ended it:
  // 1500 and 500 ns, then 22'300 down to 300 ns.
  EXPECT_EQ(r.skipped_histogram.count(), 25u);
  EXPECT_EQ(r.skipped_histogram.min(), 300);
  EXPECT_EQ(r.skipped_histogram.max(), 22'300);
  int64_t sum = 1500 + 500;
  for (int64_t lateness = 22'300; lateness >= 300; lateness -= 1000) sum += lateness;
  EXPECT_EQ(r.skipped_histogram.sum(), sum);
}

TEST_F(ProbeLoopTest, TheGridStartsAtTheSourcesOwnOrigin) {
  plan_.loops = 2;
  ScriptedSource source({{1'000'510}, {1'001'500}}, shared_);
  source.grid_origin_ns = 999'500;  // e.g. ITIMER_REAL, anchored by the kernel when armed
  const ProbeRecord r = Run(source, WakePath::kItimer);
  EXPECT_EQ(source.deadlines(), (std::vector<int64_t>{1'000'500, 1'001'500}));
  EXPECT_EQ(r.histogram.count(), 2u);
  EXPECT_EQ(r.histogram.max(), 10);
}

TEST_F(ProbeLoopTest, BreaktraceStopsAtTheFirstLatencyAboveTheLimit) {
  plan_.breaktrace_ns = 500;
  // 10, 20, then 2200 (2 skipped): the break names the late sample's own seq (2), not the
  // last skipped period's; the loop ends there and asks every thread to stop.
  ScriptedSource source({{1'001'010}, {1'002'020}, {1'005'200}, {1'006'000}}, shared_);
  const ProbeRecord r = Run(source);
  EXPECT_EQ(source.deadlines().size(), 3u);
  EXPECT_TRUE(shared_.break_hit.load());
  EXPECT_EQ(shared_.break_thread.load(), 3);
  EXPECT_EQ(shared_.break_latency_ns.load(), 2200);
  EXPECT_EQ(shared_.break_seq.load(), 2u);
  EXPECT_FALSE(shared_.break_traced.load());  // no tracer
  EXPECT_TRUE(shared_.stop.load());
  EXPECT_EQ(r.histogram.count(), 3u);
  EXPECT_EQ(r.skipped_periods, 2u);
  EXPECT_EQ(r.periods_elapsed, 5u);

  // Another probe of the same run sees the stop before its first wait: it waits for nothing
  // and does not overwrite the break.
  ThreadPlan other = thread_;
  other.index = 4;
  Probe second(plan_, other, WakePath::kAbs, shared_, nullptr, nullptr);
  ScriptedSource none({}, shared_);
  second.RunLoop(none, ScriptedClock{&none});
  const ProbeRecord r2 = second.TakeResult();
  EXPECT_TRUE(none.deadlines().empty());
  EXPECT_EQ(r2.histogram.count(), 0u);
  EXPECT_EQ(r2.periods_elapsed, 0u);
  EXPECT_EQ(shared_.break_thread.load(), 3);
}

TEST_F(ProbeLoopTest, BreaktraceAtTheLimitDoesNotFire) {
  plan_.breaktrace_ns = 500;
  plan_.loops = 2;
  ScriptedSource source({{1'001'500}, {1'002'499}}, shared_);  // 500 is not above 500
  const ProbeRecord r = Run(source);
  EXPECT_FALSE(shared_.break_hit.load());
  EXPECT_FALSE(shared_.stop.load());
  EXPECT_EQ(r.histogram.count(), 2u);
}

TEST_F(ProbeLoopTest, AnActivationAfterStopIsNotRecorded) {
  // Stop is asked for while the third wait blocks (the engine's Interrupt() posts a wake-up):
  // that activation is not a real period and is not recorded.
  ScriptedSource source({{1'001'010}, {1'002'010}, {1'002'300, -1, 0, 0, true}}, shared_);
  const ProbeRecord r = Run(source);
  EXPECT_EQ(source.deadlines().size(), 3u);
  EXPECT_EQ(r.histogram.count(), 2u);
  EXPECT_EQ(r.periods_elapsed, 2u);
  EXPECT_EQ(r.last_latency_ns, 10);
  EXPECT_EQ(probe_->last_wake_ns(), 1'002'010);
}

TEST_F(ProbeLoopTest, StopBeforeTheFirstWaitWaitsForNothing) {
  shared_.stop.store(true);
  ScriptedSource source({}, shared_);
  const ProbeRecord r = Run(source);
  EXPECT_TRUE(source.deadlines().empty());
  EXPECT_EQ(r.histogram.count(), 0u);
  EXPECT_EQ(r.periods_elapsed, 0u);
  EXPECT_EQ(probe_->last_wake_ns(), 0);
}

TEST_F(ProbeLoopTest, TheRunEndsWithTheFirstWakeUpAtOrAfterEndNs) {
  shared_.end_ns = 1'003'000;
  ScriptedSource source({{1'001'010}, {1'002'010}, {1'003'010}, {1'004'010}}, shared_);
  const ProbeRecord r = Run(source);
  EXPECT_EQ(source.deadlines().size(), 3u);
  EXPECT_EQ(r.histogram.count(), 3u);  // the wake-up at the end is still a sample
  EXPECT_EQ(r.periods_elapsed, 3u);
}

TEST_F(ProbeLoopTest, AFailedWaitEndsTheThreadWithANote) {
  ScriptedSource source({{1'001'010}, {1'002'000, -1, 0, EINVAL}}, shared_);
  const ProbeRecord r = Run(source);
  EXPECT_EQ(r.histogram.count(), 1u);
  EXPECT_EQ(r.periods_elapsed, 1u);
  EXPECT_TRUE(r.degraded);
  ASSERT_EQ(r.notes.size(), 1u);
  EXPECT_NE(r.notes[0].find("wait failed"), std::string::npos) << r.notes[0];
}

TEST_F(ProbeLoopTest, LiveResultCountsMatchTheFinalOnes) {
  plan_.loops = 3;
  ScriptedSource source({{1'001'010}, {1'003'500}, {1'004'010}}, shared_);
  probe_ = std::make_unique<Probe>(plan_, thread_, WakePath::kAbs, shared_, nullptr, nullptr);
  probe_->RunLoop(source, ScriptedClock{&source});
  ProbeRecord live;
  probe_->LiveResultTo(live);
  EXPECT_EQ(live.histogram.count(), 3u);
  EXPECT_EQ(live.skipped_periods, 1u);
  EXPECT_EQ(live.missed_activations, 1u);
  EXPECT_EQ(live.periods_elapsed, 4u);  // samples + skipped + restarts
  // Deadline 1'003'000 went by 500 ns before the wake-up that served 1'002'000 late.
  EXPECT_EQ(live.skipped_histogram.count(), 1u);
  EXPECT_EQ(live.skipped_histogram.max(), 500);
  EXPECT_EQ(probe_->Live().missed, 1u);
  EXPECT_EQ(probe_->Live().count, 3u);
  EXPECT_EQ(probe_->TakeResult().periods_elapsed, 4u);
}

TEST_F(ProbeLoopTest, LiveResultSaysDegradedWhileTheRunGoesOn) {
  // serve exports `degraded` from live results: a probe that stopped early (or lost its
  // policy or pinning) must say so before the run ends, and a healthy one must not.
  plan_.loops = 2;
  ScriptedSource healthy({{1'001'010}, {1'002'010}}, shared_);
  probe_ = std::make_unique<Probe>(plan_, thread_, WakePath::kAbs, shared_, nullptr, nullptr);
  probe_->RunLoop(healthy, ScriptedClock{&healthy});
  ProbeRecord live;
  probe_->LiveResultTo(live);
  EXPECT_FALSE(live.degraded);

  plan_.loops = 0;  // until the failed wait
  ScriptedSource failing({{1'001'010}, {1'002'000, -1, 0, EINVAL}}, shared_);
  probe_ = std::make_unique<Probe>(plan_, thread_, WakePath::kAbs, shared_, nullptr, nullptr);
  probe_->RunLoop(failing, ScriptedClock{&failing});
  probe_->LiveResultTo(live);
  EXPECT_TRUE(live.degraded);
  EXPECT_TRUE(probe_->TakeResult().degraded);
}

}  // namespace
}  // namespace rtpulse::measure
