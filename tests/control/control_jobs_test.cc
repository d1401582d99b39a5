// The control loop's job loop on scripted wake-ups and time (control/control_jobs.h): the
// skip rule, the miss rule, periodic timers that fire inside a skipped release, SCHED_DEADLINE
// grid restarts, stop, a full job log and a failed wait, exactly, with no thread or root.
#include "control/control_jobs.h"

#include <gtest/gtest.h>

#include <atomic>
#include <vector>

#include "core/clock.h"

namespace rtpulse::control {
namespace {

constexpr int64_t kPeriod = 4 * kNsPerMs;
constexpr int64_t kRead = 1000;  // each scripted clock read takes 1 us

/// Scripted time: a clock read costs kRead; a wait sleeps to its deadline plus the scripted
/// latency of that wake-up.
struct World {
  int64_t now = 0;
  std::vector<int64_t> latency_ns;  ///< Per wait; 0 past the end.
  size_t waits = 0;
};

struct ScriptedClock {
  World* world;
  int64_t Now() const {
    world->now += kRead;
    return world->now;
  }
};

/// clock_nanosleep(TIMER_ABSTIME) in scripted time.
struct ScriptedSleep {
  World* world;
  int fail_at = -1;  ///< Wait number that fails with EIO.
  measure::WakeResult Wait(int64_t deadline_ns) {
    const size_t i = world->waits++;
    if (static_cast<int>(i) == fail_at) return {deadline_ns, 0, EIO};
    const int64_t late = i < world->latency_ns.size() ? world->latency_ns[i] : 0;
    world->now = std::max(world->now, deadline_ns) + late;
    return {deadline_ns, 0, 0};
  }
  bool RestartsGridOnOverrun() const { return false; }
};

/// A periodic timer on the same grid: returns at once when an expiry passed since the last
/// wait (as a timerfd read does), else sleeps to the next expiry.
struct ScriptedPeriodic {
  World* world;
  int64_t origin = 0;
  int64_t consumed = 0;  ///< Last expiry read.
  measure::WakeResult Wait(int64_t deadline_ns) {
    ++world->waits;
    int64_t last_passed = origin + (world->now - origin) / kPeriod * kPeriod;
    if (last_passed <= consumed) {
      world->now = consumed + kPeriod;
      last_passed = world->now;
    }
    const auto expirations = static_cast<uint64_t>((last_passed - consumed) / kPeriod);
    consumed = last_passed;
    return {deadline_ns, expirations, 0};
  }
  bool RestartsGridOnOverrun() const { return false; }
};

/// SCHED_DEADLINE in scripted time: wakes at the scripted instants, whatever the deadline.
struct ScriptedDeadline {
  World* world;
  std::vector<int64_t> wake_at;
  measure::WakeResult Wait(int64_t deadline_ns) {
    const size_t i = world->waits++;
    world->now = std::max(world->now, i < wake_at.size() ? wake_at[i] : deadline_ns);
    return {deadline_ns, 0, 0};
  }
  bool RestartsGridOnOverrun() const { return true; }
};

/// Runs for `exec_ns` of scripted time; may set a stop flag at a job.
class ScriptedBody final : public JobBody {
 public:
  ScriptedBody(World& world, int64_t exec_ns) : world_(world), exec_ns_(exec_ns) {}
  void Run(uint64_t k) override {
    world_.now += exec_ns_;
    ++runs;
    if (stop != nullptr && k == stop_at) stop->store(true);
  }
  uint64_t runs = 0;
  std::atomic<bool>* stop = nullptr;
  uint64_t stop_at = 0;

 private:
  World& world_;
  int64_t exec_ns_;
};

JobLoopParams Params(uint64_t jobs) {
  JobLoopParams p;
  p.period_ns = kPeriod;
  p.deadline_ns = kPeriod;
  p.jobs = jobs;
  p.first_release_ns = kPeriod;
  return p;
}

ControlRunRecord Reserved(size_t n) {
  ControlRunRecord rec;
  rec.jobs.reserve(n);
  return rec;
}

TEST(ControlJobsTest, TimingIsReleaseStartEndOnTheGrid) {
  World world;
  world.latency_ns = {50'000, 70'000, 0};
  ScriptedSleep source{&world};
  ScriptedBody body(world, 100'000);
  std::atomic<bool> stop{false};
  ControlLive live;
  ControlRunRecord rec = Reserved(3);
  RunControlJobs(Params(3), source, ScriptedClock{&world}, body, stop, &live, rec);
  ASSERT_EQ(rec.jobs.size(), 3u);
  // Job 0: released at 4 ms, woke 50 us late, the clock read takes 1 us, 100 us of work.
  EXPECT_EQ(rec.jobs[0].release_ns, 4 * kNsPerMs);
  EXPECT_EQ(rec.jobs[0].start_ns, 4 * kNsPerMs + 50'000 + kRead);
  EXPECT_EQ(rec.jobs[0].end_ns, rec.jobs[0].start_ns + 100'000 + kRead);
  EXPECT_EQ(rec.jobs[1].release_ns, 8 * kNsPerMs);
  EXPECT_EQ(rec.jobs[1].start_ns, 8 * kNsPerMs + 70'000 + kRead);
  EXPECT_EQ(rec.jobs[2].release_ns, 12 * kNsPerMs);
  EXPECT_EQ(rec.releases, 3u);
  EXPECT_EQ(rec.skipped, 0u);
  EXPECT_EQ(rec.misses, 0u);
  EXPECT_EQ(live.jobs.load(), 3u);
  EXPECT_EQ(live.max_response_ns.load(), 70'000 + kRead + 100'000 + kRead);
}

/// Takes JobsSoFar(live) at the start of every job (as the checkpointing thread would).
class SnapshotBody final : public JobBody {
 public:
  SnapshotBody(World& world, const ControlLive& live) : world_(world), live_(live) {}
  void Run(uint64_t /*k*/) override {
    snapshots.push_back(JobsSoFar(live_));
    world_.now += 100'000;
    if (snapshots.size() == 3) world_.now += 2 * kPeriod;  // job 2 overruns 2 releases
  }
  std::vector<std::vector<JobTiming>> snapshots;

 private:
  World& world_;
  const ControlLive& live_;
};

TEST(ControlJobsTest, JobsSoFarIsExactlyTheJobsRecordedBeforeIt) {
  World world;
  world.latency_ns = {10'000, 20'000, 30'000, 40'000, 50'000};
  ScriptedSleep source{&world};
  ControlLive live;
  EXPECT_TRUE(JobsSoFar(live).empty()) << "nothing published before the loop";
  SnapshotBody body(world, live);
  std::atomic<bool> stop{false};
  ControlRunRecord rec = Reserved(5);
  RunControlJobs(Params(5), source, ScriptedClock{&world}, body, stop, &live, rec);
  ASSERT_EQ(rec.jobs.size(), 5u);
  ASSERT_EQ(body.snapshots.size(), 5u);
  for (size_t k = 0; k < body.snapshots.size(); ++k) {
    // Job k sees jobs 0..k-1, each as the final record has it.
    ASSERT_EQ(body.snapshots[k].size(), k) << "job " << k;
    for (size_t i = 0; i < k; ++i) {
      EXPECT_EQ(body.snapshots[k][i].release_ns, rec.jobs[i].release_ns);
      EXPECT_EQ(body.snapshots[k][i].start_ns, rec.jobs[i].start_ns);
      EXPECT_EQ(body.snapshots[k][i].end_ns, rec.jobs[i].end_ns);
      EXPECT_EQ(body.snapshots[k][i].skipped_before, rec.jobs[i].skipped_before);
      EXPECT_EQ(body.snapshots[k][i].miss, rec.jobs[i].miss);
    }
  }
  // Job 3 follows the overrun: its skipped_before is in the snapshot after it.
  EXPECT_EQ(rec.jobs[3].skipped_before, 2u);
  const std::vector<JobTiming> after = JobsSoFar(live);
  ASSERT_EQ(after.size(), 5u);
  EXPECT_EQ(after[3].skipped_before, 2u);
  EXPECT_EQ(after[4].end_ns, rec.jobs[4].end_ns);
}

TEST(ControlJobsTest, AnOverrunSkipsTheReleasesItRanPast) {
  World world;
  ScriptedSleep source{&world};
  ScriptedBody body(world, 100'000);
  std::atomic<bool> stop{false};
  JobLoopParams p = Params(10);
  p.inject_every = 5;  // jobs 4 and 9 spin 6 ms more: response ~6.1 ms
  p.inject_ns = 6 * kNsPerMs;
  ControlRunRecord rec = Reserved(10);
  RunControlJobs(p, source, ScriptedClock{&world}, body, stop, nullptr, rec);
  ASSERT_EQ(rec.jobs.size(), 10u);
  for (size_t k = 0; k < 10; ++k) {
    const bool injected = k == 4 || k == 9;
    EXPECT_EQ(rec.jobs[k].miss, injected) << k;
    EXPECT_EQ(rec.jobs[k].skipped_before, k == 5 ? 1u : 0u) << k;
  }
  // Job 4 served 20 ms and ended after 24 ms: job 5 serves 28 ms.
  EXPECT_EQ(rec.jobs[4].release_ns, 20 * kNsPerMs);
  EXPECT_GT(rec.jobs[4].end_ns, 24 * kNsPerMs);
  EXPECT_EQ(rec.jobs[5].release_ns, 28 * kNsPerMs);
  EXPECT_EQ(rec.misses, 2u);
  // Job 9 (the last) ran past 40 ms too: no next job counts it, the record does.
  EXPECT_EQ(rec.skipped_after_last, 1u);
  EXPECT_EQ(rec.skipped, 2u);
  EXPECT_EQ(rec.releases, 12u);
}

TEST(ControlJobsTest, TheReleasesTheLastJobRanPastAreCounted) {
  // The last of 5 jobs spins 6 ms (ends ~6.1 ms after its release: one grid point passed)
  // or 10 ms (~10.1 ms: two), by the skip rule of skipped_before.
  for (const auto& [extra_ns, passed] : {std::pair<int64_t, uint32_t>{6 * kNsPerMs, 1u},
                                         std::pair<int64_t, uint32_t>{10 * kNsPerMs, 2u}}) {
    World world;
    ScriptedSleep source{&world};
    ScriptedBody body(world, 100'000);
    std::atomic<bool> stop{false};
    ControlLive live;
    JobLoopParams p = Params(5);
    p.inject_every = 5;  // job 4, the last
    p.inject_ns = extra_ns;
    ControlRunRecord rec = Reserved(5);
    RunControlJobs(p, source, ScriptedClock{&world}, body, stop, &live, rec);
    ASSERT_EQ(rec.jobs.size(), 5u);
    const JobTiming& last = rec.jobs.back();
    EXPECT_TRUE(last.miss);
    EXPECT_EQ(static_cast<uint32_t>((last.end_ns - last.release_ns - 1) / kPeriod), passed);
    EXPECT_EQ(rec.skipped_after_last, passed) << extra_ns;
    EXPECT_EQ(rec.skipped, passed);
    EXPECT_EQ(rec.releases, 5u + passed);
    EXPECT_EQ(rec.misses, 1u);
    EXPECT_EQ(live.skipped.load(), rec.skipped);
    for (const JobTiming& j : rec.jobs) EXPECT_EQ(j.skipped_before, 0u);
  }
}

TEST(ControlJobsTest, ALastJobWithinItsPeriodSkipsNothingAfterIt) {
  World world;
  ScriptedSleep source{&world};
  ScriptedBody body(world, 100'000);
  std::atomic<bool> stop{false};
  ControlRunRecord rec = Reserved(3);
  RunControlJobs(Params(3), source, ScriptedClock{&world}, body, stop, nullptr, rec);
  EXPECT_EQ(rec.skipped_after_last, 0u);
  EXPECT_EQ(rec.releases, 3u);
}

TEST(ControlJobsTest, AJobEndingExactlyOnTheNextGridPointSkipsNothing) {
  // Job 0 ends at exactly r_0 + period: it meets its deadline (c = r + deadline is not a miss)
  // and the next release has not passed yet (it is due now), so job 1 serves it: a release
  // is skipped only by a job that ends after it, the same boundary as the miss rule.
  World world;
  ScriptedSleep source{&world};
  ScriptedBody body(world, kPeriod - 2 * kRead);  // start read + body + end read = period
  std::atomic<bool> stop{false};
  ControlRunRecord rec = Reserved(3);
  RunControlJobs(Params(3), source, ScriptedClock{&world}, body, stop, nullptr, rec);
  ASSERT_EQ(rec.jobs.size(), 3u);
  EXPECT_EQ(rec.jobs[0].end_ns, rec.jobs[0].release_ns + kPeriod);
  EXPECT_FALSE(rec.jobs[0].miss);
  EXPECT_EQ(rec.jobs[1].release_ns, rec.jobs[0].release_ns + kPeriod);
  EXPECT_EQ(rec.jobs[1].skipped_before, 0u);
  EXPECT_EQ(rec.skipped, 0u);
  EXPECT_EQ(rec.misses, 0u);
  // One nanosecond more is a miss and skips that release.
  World late;
  ScriptedSleep late_source{&late};
  ScriptedBody late_body(late, kPeriod - 2 * kRead + 1);
  ControlRunRecord late_rec = Reserved(2);
  RunControlJobs(Params(2), late_source, ScriptedClock{&late}, late_body, stop, nullptr, late_rec);
  ASSERT_EQ(late_rec.jobs.size(), 2u);
  EXPECT_TRUE(late_rec.jobs[0].miss);
  EXPECT_EQ(late_rec.jobs[1].release_ns, late_rec.jobs[0].release_ns + 2 * kPeriod);
  EXPECT_EQ(late_rec.jobs[1].skipped_before, 1u);
}

TEST(ControlJobsTest, ALateWakeUpServesItsReleaseAndSkipsThosePassed) {
  World world;
  world.latency_ns = {0, 9 * kNsPerMs, 0};  // job 1 wakes 9 ms late: it ends after r_1 + 8 ms
  ScriptedSleep source{&world};
  ScriptedBody body(world, 100'000);
  std::atomic<bool> stop{false};
  ControlRunRecord rec = Reserved(3);
  RunControlJobs(Params(3), source, ScriptedClock{&world}, body, stop, nullptr, rec);
  ASSERT_EQ(rec.jobs.size(), 3u);
  EXPECT_EQ(rec.jobs[1].release_ns, 8 * kNsPerMs);
  EXPECT_EQ(rec.jobs[1].start_ns - rec.jobs[1].release_ns, 9 * kNsPerMs + kRead);
  EXPECT_TRUE(rec.jobs[1].miss);
  EXPECT_EQ(rec.jobs[2].release_ns, 20 * kNsPerMs);
  EXPECT_EQ(rec.jobs[2].skipped_before, 2u);
  EXPECT_EQ(rec.skipped, 2u);
  EXPECT_EQ(rec.releases, 5u);
}

TEST(ControlJobsTest, APeriodicTimerThatFiredInASkippedReleaseIsWaitedOn) {
  World world;
  ScriptedPeriodic source{&world};
  ScriptedBody body(world, 100'000);
  std::atomic<bool> stop{false};
  JobLoopParams p = Params(4);
  p.inject_every = 2;  // jobs 1 and 3 end past the next expiry
  p.inject_ns = 5 * kNsPerMs;
  ControlRunRecord rec = Reserved(4);
  RunControlJobs(p, source, ScriptedClock{&world}, body, stop, nullptr, rec);
  ASSERT_EQ(rec.jobs.size(), 4u);
  // Job 1 (8 ms) ends at ~13.1 ms: the 12 ms expiry returns at once, the loop waits on to 16.
  EXPECT_EQ(rec.jobs[2].release_ns, 16 * kNsPerMs);
  EXPECT_GE(rec.jobs[2].start_ns, 16 * kNsPerMs);
  EXPECT_EQ(rec.jobs[2].skipped_before, 1u);
  EXPECT_EQ(world.waits, 5u);  // one extra wait for the skipped release
  EXPECT_EQ(rec.releases, rec.jobs.size() + rec.skipped);
}

TEST(ControlJobsTest, ADeadlineWakeUpBeforeTheGridReanchorsAndIsMarked) {
  World world;
  // Job 0 at 4 ms; job 1's wake-up comes at 6.5 ms, before our 8 ms grid point: the kernel
  // restarted its period there. Job 2 follows that new grid.
  ScriptedDeadline source{&world, {4 * kNsPerMs, 6'500'000, 10'500'000}};
  ScriptedBody body(world, 100'000);
  std::atomic<bool> stop{false};
  ControlRunRecord rec = Reserved(3);
  RunControlJobs(Params(3), source, ScriptedClock{&world}, body, stop, nullptr, rec);
  ASSERT_EQ(rec.jobs.size(), 3u);
  EXPECT_EQ(rec.grid_restarts, 1u);
  EXPECT_FALSE(rec.jobs[0].release_unknown);
  EXPECT_TRUE(rec.jobs[1].release_unknown);
  EXPECT_EQ(rec.jobs[1].release_ns, rec.jobs[1].start_ns);
  EXPECT_FALSE(rec.jobs[2].release_unknown);
  EXPECT_EQ(rec.jobs[2].release_ns, rec.jobs[1].release_ns + kPeriod);
  EXPECT_EQ(rec.jobs[2].skipped_before, 0u);
  EXPECT_EQ(rec.skipped, 0u);
}

TEST(ControlJobsTest, AReanchorAfterAnOverrunCountsTheSkipsFromTheReleases) {
  World world;
  // Job 2 (12 ms) spins 9 ms more and ends past 21 ms: the loop's next grid point is 24 ms.
  // The kernel restarted its period and wakes job 3 at 22.5 ms: its release is that wake-up,
  // and the releases skipped since job 2's are counted from the two releases,
  // (22.5 - 12) / 4 - 1 = 1, not the 2 the loop's own grid would have skipped.
  ScriptedDeadline source{&world, {4 * kNsPerMs, 8 * kNsPerMs, 12 * kNsPerMs, 22'500'000}};
  ScriptedBody body(world, 100'000);
  std::atomic<bool> stop{false};
  JobLoopParams p = Params(4);
  p.inject_every = 3;
  p.inject_ns = 9 * kNsPerMs;
  ControlRunRecord rec = Reserved(4);
  RunControlJobs(p, source, ScriptedClock{&world}, body, stop, nullptr, rec);
  ASSERT_EQ(rec.jobs.size(), 4u);
  EXPECT_GT(rec.jobs[2].end_ns, 21 * kNsPerMs);
  EXPECT_TRUE(rec.jobs[2].miss);
  EXPECT_EQ(rec.grid_restarts, 1u);
  EXPECT_TRUE(rec.jobs[3].release_unknown);
  EXPECT_EQ(rec.jobs[3].release_ns, 22'500'000 + kRead);
  EXPECT_EQ(rec.jobs[3].skipped_before, 1u);
  EXPECT_EQ(rec.skipped, 1u);
  EXPECT_EQ(rec.releases, 5u);
}

TEST(ControlJobsTest, APresizedLogIsOverwrittenInPlaceAndTrimmedToTheJobsRun) {
  // As the real loop hands it over: reserved and sized to its capacity before the first
  // release, with stale content; a stop after 4 jobs leaves exactly those 4, measured.
  World world;
  ScriptedSleep source{&world};
  ScriptedBody body(world, 100'000);
  std::atomic<bool> stop{false};
  body.stop = &stop;
  body.stop_at = 3;
  ControlRunRecord rec = Reserved(16);
  JobTiming stale;
  stale.release_ns = -1;
  stale.start_ns = -1;
  stale.end_ns = -1;
  stale.skipped_before = 99;
  stale.miss = true;
  stale.release_unknown = true;
  rec.jobs.resize(rec.jobs.capacity(), stale);
  const JobTiming* storage = rec.jobs.data();
  const size_t capacity = rec.jobs.capacity();
  RunControlJobs(Params(0), source, ScriptedClock{&world}, body, stop, nullptr, rec);
  ASSERT_EQ(rec.jobs.size(), 4u);
  EXPECT_EQ(rec.jobs.data(), storage);  // written in place, never reallocated
  EXPECT_EQ(rec.jobs.capacity(), capacity);
  for (size_t k = 0; k < rec.jobs.size(); ++k) {
    const JobTiming& job = rec.jobs[k];
    EXPECT_EQ(job.release_ns, static_cast<int64_t>(k + 1) * kPeriod) << k;
    EXPECT_EQ(job.start_ns, job.release_ns + kRead) << k;
    EXPECT_EQ(job.end_ns, job.start_ns + 100'000 + kRead) << k;
    EXPECT_EQ(job.skipped_before, 0u) << k;
    EXPECT_FALSE(job.miss) << k;
    EXPECT_FALSE(job.release_unknown) << k;
  }
  EXPECT_EQ(rec.releases, 4u);
  EXPECT_EQ(rec.misses, 0u);
}

TEST(ControlJobsTest, StopEndsAtTheNextJobAndKeepsTheJobsSoFar) {
  World world;
  ScriptedSleep source{&world};
  ScriptedBody body(world, 100'000);
  std::atomic<bool> stop{false};
  body.stop = &stop;
  body.stop_at = 3;
  ControlRunRecord rec = Reserved(100);
  RunControlJobs(Params(0), source, ScriptedClock{&world}, body, stop, nullptr, rec);
  EXPECT_TRUE(rec.interrupted);
  EXPECT_EQ(rec.jobs.size(), 4u);
  EXPECT_EQ(body.runs, 4u);
  EXPECT_EQ(rec.releases, 4u);
}

TEST(ControlJobsTest, AnUnboundedRunEndsWhenTheJobLogIsFull) {
  World world;
  ScriptedSleep source{&world};
  ScriptedBody body(world, 100'000);
  std::atomic<bool> stop{false};
  ControlRunRecord rec = Reserved(7);
  const size_t capacity = rec.jobs.capacity();
  RunControlJobs(Params(0), source, ScriptedClock{&world}, body, stop, nullptr, rec);
  EXPECT_EQ(rec.jobs.size(), capacity);
  EXPECT_EQ(rec.jobs.capacity(), capacity);  // never grown
  EXPECT_FALSE(rec.interrupted);
}

TEST(ControlJobsTest, AFailedWaitStopsTheRunAndSaysSo) {
  World world;
  ScriptedSleep source{&world, 2};
  ScriptedBody body(world, 100'000);
  std::atomic<bool> stop{false};
  ControlRunRecord rec = Reserved(5);
  RunControlJobs(Params(5), source, ScriptedClock{&world}, body, stop, nullptr, rec);
  EXPECT_EQ(rec.jobs.size(), 2u);
  EXPECT_TRUE(rec.degraded);
  ASSERT_EQ(rec.warnings.size(), 1u);
  EXPECT_NE(rec.warnings[0].find("wait failed"), std::string::npos);
  EXPECT_NE(rec.warnings[0].find("after 2 jobs"), std::string::npos);
}

}  // namespace
}  // namespace rtpulse::control
