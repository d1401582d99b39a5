// The control loop on real threads and real scheduling (root): ground truth from injected
// overruns, each policy read back from the kernel from outside the thread, stop.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sched.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "control/control_loop.h"
#include "core/clock.h"
#include "measure/rt_setup.h"
#include "support/subprocess.h"

namespace rtpulse::control {
namespace {

/// A small deterministic job: enough arithmetic to take a few microseconds.
class ArithmeticBody final : public JobBody {
 public:
  void Run(uint64_t k) override {
    double x = static_cast<double>(k);
    for (int i = 0; i < 200; ++i) x = x * 0.999 + 1.0;
    sink_ = sink_ + x;
  }

 private:
  volatile double sink_ = 0;
};

/// The last online CPU (the loop is pinned there).
int LastOnlineCpu() {
  cpu_set_t set;
  CPU_ZERO(&set);
  sched_getaffinity(0, sizeof(set), &set);
  int last = 0;
  for (int c = 0; c < CPU_SETSIZE; ++c) {
    if (CPU_ISSET(static_cast<size_t>(c), &set)) last = c;
  }
  return last;
}

class ControlLoopRtTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!testutil::IsRoot()) GTEST_SKIP() << "needs root for SCHED_FIFO/RR/DEADLINE";
  }
};

/// Writes the jobs as CSV and has python3 recount misses, skipped releases, releases, the
/// injected misses and the skip rule from the raw timings alone.
std::string IndependentCount(const std::vector<JobTiming>& jobs, int64_t period_ns,
                             int64_t deadline_ns, uint64_t inject_every) {
  testutil::TempDir dir;
  {
    std::ofstream csv(dir.File("jobs.csv"));
    for (const JobTiming& j : jobs) {
      csv << j.release_ns << ',' << j.start_ns << ',' << j.end_ns << ',' << j.skipped_before << ','
          << (j.miss ? 1 : 0) << '\n';
    }
  }
  const std::string script = R"(
import sys
P, D, E = int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
rows = [list(map(int, l.split(','))) for l in open(sys.argv[1])]
misses = sum(1 for r, s, c, _, _ in rows if c > r + D)
flag_ok = all((c > r + D) == bool(m) for r, s, c, _, m in rows)
skipped = sum((rows[i][0] - rows[i - 1][0]) // P - 1 for i in range(1, len(rows)))
skipped += max(0, (rows[-1][2] - rows[-1][0] - 1) // P)  # the releases the last job ran past
rule_ok = all((rows[i][0] - rows[i - 1][0]) // P - 1 == max(0, (rows[i - 1][2] - rows[i - 1][0] - 1) // P)
              for i in range(1, len(rows)))
grid_ok = all((r - rows[0][0]) % P == 0 for r, _, _, _, _ in rows)
injected = sum(1 for k, (r, s, c, _, _) in enumerate(rows) if k % E == E - 1 and c > r + D)
print(f"misses={misses} skipped={skipped} releases={len(rows) + skipped} injected_misses={injected} "
      f"flags={int(flag_ok)} rule={int(rule_ok)} grid={int(grid_ok)}")
)";
  { std::ofstream(dir.File("count.py")) << script; }
  auto result = testutil::RunProcess({"/usr/bin/python3", dir.File("count.py"),
                                      dir.File("jobs.csv"), std::to_string(period_ns),
                                      std::to_string(deadline_ns), std::to_string(inject_every)});
  EXPECT_EQ(result.exit_code, 0) << result.err;
  std::string out = result.out;
  while (!out.empty() && out.back() == '\n') out.pop_back();
  return out;
}

class GroundTruthTest : public ControlLoopRtTest,
                        public ::testing::WithParamInterface<measure::WakePath> {};

TEST_P(GroundTruthTest, InjectedOverrunsGiveMissesAndSkippedReleases) {
  constexpr int64_t kPeriod = 4 * kNsPerMs;
  constexpr uint64_t kJobs = 500;
  constexpr uint64_t kEvery = 50;
  ControlLoopPlan plan;
  plan.policy = *ParsePolicySpec("fifo:50");
  plan.path = GetParam();
  plan.period_ns = kPeriod;
  plan.jobs = kJobs;
  plan.cpu = LastOnlineCpu();
  plan.inject_every = kEvery;
  plan.inject_ns = 6 * kNsPerMs;
  ArithmeticBody body;
  std::atomic<bool> stop{false};
  ControlLive live;
  auto run = RunControlLoop(plan, body, stop, &live);
  ASSERT_TRUE(run.has_value()) << run.error().message;
  const ControlRunRecord& rec = *run;
  EXPECT_EQ(rec.applied_policy, "fifo:50");
  EXPECT_FALSE(rec.interrupted);
  ASSERT_EQ(rec.jobs.size(), kJobs);

  // Identities, exact.
  EXPECT_EQ(rec.releases, rec.jobs.size() + rec.skipped);
  uint64_t skipped = 0;
  uint64_t misses = 0;
  uint64_t injected_misses = 0;
  int64_t max_response = 0;
  for (size_t k = 0; k < rec.jobs.size(); ++k) {
    const JobTiming& j = rec.jobs[k];
    const int64_t latency = j.start_ns - j.release_ns;
    const int64_t exec = j.end_ns - j.start_ns;
    const int64_t response = j.end_ns - j.release_ns;
    ASSERT_GE(latency, 0) << "job " << k << " started before its release";
    ASSERT_GE(exec, 0);
    EXPECT_EQ(response, latency + exec);
    EXPECT_EQ((j.release_ns - rec.jobs[0].release_ns) % kPeriod, 0) << "job " << k << " off grid";
    if (k > 0) {
      const JobTiming& prev = rec.jobs[k - 1];
      EXPECT_EQ(j.release_ns - prev.release_ns,
                static_cast<int64_t>(1 + j.skipped_before) * kPeriod);
      // The documented rule: the releases before the previous job's completion are skipped.
      EXPECT_EQ(j.skipped_before,
                static_cast<uint32_t>((prev.end_ns - prev.release_ns - 1) / kPeriod))
          << "job " << k;
    }
    EXPECT_EQ(j.miss, response > kPeriod) << "job " << k;
    skipped += j.skipped_before;
    misses += j.miss ? 1 : 0;
    max_response = std::max(max_response, response);
    if (k % kEvery == kEvery - 1) {
      EXPECT_TRUE(j.miss) << "injected job " << k << " met its deadline";
      EXPECT_GE(exec, plan.inject_ns);
      injected_misses += j.miss ? 1 : 0;
      if (k + 1 < rec.jobs.size()) {
        EXPECT_GE(rec.jobs[k + 1].skipped_before, 1u);
      }
    }
  }
  // The last job (499) is an injected one: the releases it ran past, by the same rule, are
  // the record's skipped_after_last, counted in skipped and releases.
  const JobTiming& last = rec.jobs.back();
  EXPECT_EQ(rec.skipped_after_last,
            static_cast<uint32_t>((last.end_ns - last.release_ns - 1) / kPeriod));
  EXPECT_GE(rec.skipped_after_last, 1u);
  EXPECT_EQ(rec.skipped, skipped + rec.skipped_after_last);
  EXPECT_EQ(rec.misses, misses);
  EXPECT_EQ(injected_misses, kJobs / kEvery);  // exactly 10
  // Host steal can add misses and skips, never remove the injected ones.
  EXPECT_GE(rec.misses, kJobs / kEvery);
  // Each 6 ms overrun at 4 ms skips one release, the last one's after the last job: exactly
  // kJobs / kEvery injected overruns ran past a release (a host stall of 2 ms more makes one
  // of them skip two, and a stall elsewhere adds skips: more, never fewer).
  uint64_t injected_overruns = 0;
  for (size_t k = kEvery - 1; k < rec.jobs.size(); k += kEvery) {
    const uint32_t ran_past =
        k + 1 < rec.jobs.size() ? rec.jobs[k + 1].skipped_before : rec.skipped_after_last;
    injected_overruns += ran_past > 0 ? 1 : 0;
  }
  EXPECT_EQ(injected_overruns, kJobs / kEvery);
  EXPECT_GE(rec.skipped, kJobs / kEvery);
  EXPECT_EQ(live.jobs.load(), kJobs);
  EXPECT_EQ(live.skipped.load(), rec.skipped);
  EXPECT_EQ(live.misses.load(), rec.misses);
  EXPECT_EQ(live.max_response_ns.load(), max_response);

  // The same counts from the raw timings by an independent script.
  EXPECT_EQ(IndependentCount(rec.jobs, kPeriod, kPeriod, kEvery),
            "misses=" + std::to_string(rec.misses) + " skipped=" + std::to_string(rec.skipped) +
                " releases=" + std::to_string(rec.releases) +
                " injected_misses=10 flags=1 rule=1 grid=1");
  // The throttling sentence names the settings the kernel has now.
  std::ifstream runtime_file("/proc/sys/kernel/sched_rt_runtime_us");
  std::ifstream period_file("/proc/sys/kernel/sched_rt_period_us");
  long long rt_runtime = 0;
  long long rt_period = 0;
  runtime_file >> rt_runtime;
  period_file >> rt_period;
  if (rt_runtime >= 0 && rt_runtime < rt_period) {
    EXPECT_EQ(rec.rt_throttling.rfind(
                  fmt::format("RT throttling on: {}/{} us", rt_runtime, rt_period), 0),
              0u)
        << rec.rt_throttling;
    EXPECT_NE(rec.rt_throttling.find(fmt::format("{} job(s) stalled", rec.rt_throttle_suspects)),
              std::string::npos);
  } else {
    EXPECT_EQ(rec.rt_throttling.rfind("RT throttling off", 0), 0u) << rec.rt_throttling;
  }
  EXPECT_GT(rec.end_realtime_ns, rec.start_realtime_ns);
}

INSTANTIATE_TEST_SUITE_P(Paths, GroundTruthTest,
                         ::testing::Values(measure::WakePath::kAbs, measure::WakePath::kTimerfd),
                         [](const ::testing::TestParamInfo<measure::WakePath>& path_info) {
                           return std::string(WakePathName(path_info.param));
                         });

/// Field `n` (1-based, as in proc(5)) of /proc/self/task/<tid>/stat.
std::string StatField(int tid, int n) {
  std::ifstream in("/proc/self/task/" + std::to_string(tid) + "/stat");
  std::string line;
  std::getline(in, line);
  const size_t paren = line.rfind(')');  // comm may hold spaces
  std::istringstream rest(line.substr(paren + 2));
  std::string field;
  for (int i = 3; i <= n && rest >> field; ++i) {
  }
  return field;
}

struct ObservedPolicy {
  ControlRunRecord record;
  measure::ThreadSchedAttr outside;
  std::string stat_nice;
  std::string stat_rt_priority;
  std::string stat_policy;
};

/// Runs `policy` until the test has read the thread's scheduling from outside, then stops.
ObservedPolicy RunAndObserve(const std::string& policy_text) {
  ObservedPolicy seen;
  ControlLoopPlan plan;
  plan.policy = *ParsePolicySpec(policy_text);
  plan.period_ns = 4 * kNsPerMs;
  plan.jobs = 0;
  if (plan.policy.kind == PolicySpec::Kind::kDeadline) {
    plan.path = measure::WakePath::kDeadline;
  } else {
    plan.cpu = LastOnlineCpu();
  }
  std::atomic<int> tid{0};
  plan.before_loop = [&] { tid.store(static_cast<int>(gettid())); };
  ArithmeticBody body;
  std::atomic<bool> stop{false};
  ControlLive live;
  std::optional<Expected<ControlRunRecord>> result;
  std::atomic<bool> returned{false};
  std::thread runner([&] {
    result.emplace(RunControlLoop(plan, body, stop, &live));
    returned.store(true);
  });
  const int64_t give_up = MonotonicNs() + 10 * kNsPerSec;
  while ((tid.load() == 0 || live.jobs.load() < 5) && MonotonicNs() < give_up && !returned.load()) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  if (tid.load() != 0) {
    if (auto attr = measure::GetThreadSchedAttr(tid.load())) seen.outside = *attr;
    seen.stat_nice = StatField(tid.load(), 19);
    seen.stat_rt_priority = StatField(tid.load(), 40);
    seen.stat_policy = StatField(tid.load(), 41);
  }
  stop.store(true);
  runner.join();
  EXPECT_TRUE(result && result->has_value())
      << (result && !result->has_value() ? result->error().message : "no result");
  if (result && result->has_value()) seen.record = std::move(result->value());
  return seen;
}

TEST_F(ControlLoopRtTest, OtherNiceIsApplied) {
  // The test may itself run reniced (`nice ctest`): compare with its nice as found.
  const std::string own_nice = StatField(static_cast<int>(gettid()), 19);
  ObservedPolicy seen = RunAndObserve("other:5");
  EXPECT_EQ(seen.stat_nice, "5");
  EXPECT_EQ(seen.stat_policy, "0");
  EXPECT_EQ(seen.outside.policy, SCHED_OTHER);
  EXPECT_EQ(seen.outside.nice, 5);
  EXPECT_EQ(seen.record.applied_policy, "other:5");
  EXPECT_FALSE(seen.record.degraded);
  // Only the loop's thread was reniced.
  EXPECT_EQ(StatField(static_cast<int>(gettid()), 19), own_nice);
}

TEST_F(ControlLoopRtTest, FifoPriorityIsApplied) {
  ObservedPolicy seen = RunAndObserve("fifo:50");
  EXPECT_EQ(seen.stat_policy, "1");
  EXPECT_EQ(seen.stat_rt_priority, "50");
  EXPECT_EQ(seen.outside.policy, SCHED_FIFO);
  EXPECT_EQ(seen.outside.priority, 50);
  EXPECT_EQ(seen.record.applied_policy, "fifo:50");
}

TEST_F(ControlLoopRtTest, RrPriorityIsApplied) {
  ObservedPolicy seen = RunAndObserve("rr:60");
  EXPECT_EQ(seen.stat_policy, "2");
  EXPECT_EQ(seen.stat_rt_priority, "60");
  EXPECT_EQ(seen.outside.policy, SCHED_RR);
  EXPECT_EQ(seen.outside.priority, 60);
  EXPECT_EQ(seen.record.applied_policy, "rr:60");
}

TEST_F(ControlLoopRtTest, DeadlineReservationIsApplied) {
  ObservedPolicy seen = RunAndObserve("deadline:1ms/4ms/4ms");
  EXPECT_EQ(seen.stat_policy, "6");
  EXPECT_EQ(seen.outside.policy, measure::kSchedDeadlinePolicy);
  EXPECT_EQ(seen.outside.runtime_ns, 1 * kNsPerMs);
  EXPECT_EQ(seen.outside.deadline_ns, 4 * kNsPerMs);
  EXPECT_EQ(seen.outside.period_ns, 4 * kNsPerMs);
  EXPECT_EQ(seen.record.applied_policy, "deadline:1ms/4ms/4ms");
  EXPECT_TRUE(seen.record.interrupted);
  EXPECT_GE(seen.record.jobs.size(), 5u);
  EXPECT_EQ(seen.record.releases, seen.record.jobs.size() + seen.record.skipped);
  // Overruns can be asked for (kernel 4.16+) or the run says it could not.
  if (!seen.record.deadline_overruns) {
    bool said = false;
    for (const auto& w : seen.record.warnings) said |= w.find("DL_OVERRUN") != std::string::npos;
    EXPECT_TRUE(said);
  }
}

TEST_F(ControlLoopRtTest, DeadlineOverrunsAreSignalledAndCounted) {
  ControlLoopPlan plan;
  plan.policy = *ParsePolicySpec("deadline:1ms/4ms/4ms");
  plan.path = measure::WakePath::kDeadline;
  plan.period_ns = 4 * kNsPerMs;
  plan.jobs = 60;
  // A 10 ms spin is ten times the 1 ms runtime and spans at least two scheduler ticks (the
  // kernel accounts runtime at ticks when it has no HRTICK), so each one overruns for sure.
  plan.inject_every = 20;
  plan.inject_ns = 10 * kNsPerMs;
  ArithmeticBody body;
  std::atomic<bool> stop{false};
  auto run = RunControlLoop(plan, body, stop, nullptr);
  ASSERT_TRUE(run.has_value()) << run.error().message;
  if (!run->deadline_overruns) GTEST_SKIP() << "kernel refused SCHED_FLAG_DL_OVERRUN";
  EXPECT_GE(*run->deadline_overruns, 3u) << "three jobs overran their runtime";
  EXPECT_EQ(run->releases, run->jobs.size() + run->skipped);
  uint64_t unknown = 0;
  for (const JobTiming& j : run->jobs) unknown += j.release_unknown ? 1 : 0;
  EXPECT_EQ(unknown, run->grid_restarts);
  std::printf("deadline overruns %llu, grid restarts %llu, misses %llu\n",
              static_cast<unsigned long long>(*run->deadline_overruns),
              static_cast<unsigned long long>(run->grid_restarts),
              static_cast<unsigned long long>(run->misses));
  for (size_t k = 19; k < run->jobs.size(); k += 20) {
    const JobTiming& j = run->jobs[k];
    EXPECT_TRUE(j.miss) << "job " << k << ": release " << j.release_ns << " start " << j.start_ns
                        << " end " << j.end_ns;
  }
  for (const auto& w : run->warnings) std::printf("warning: %s\n", w.c_str());
}

TEST_F(ControlLoopRtTest, StopEndsTheRunWithinAPeriodAndKeepsTheJobs) {
  ControlLoopPlan plan;
  plan.policy = *ParsePolicySpec("fifo:50");
  plan.period_ns = 200 * kNsPerMs;
  plan.jobs = 0;
  plan.cpu = LastOnlineCpu();
  ArithmeticBody body;
  std::atomic<bool> stop{false};
  ControlLive live;
  int64_t stopped_at = 0;
  std::thread stopper([&] {
    while (live.jobs.load() < 2) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    stopped_at = MonotonicNs();
    stop.store(true);
  });
  auto run = RunControlLoop(plan, body, stop, &live);
  const int64_t returned_at = MonotonicNs();
  stopper.join();
  ASSERT_TRUE(run.has_value()) << run.error().message;
  EXPECT_TRUE(run->interrupted);
  EXPECT_GE(run->jobs.size(), 2u);
  EXPECT_EQ(run->jobs.size(), live.jobs.load());
  EXPECT_EQ(run->releases, run->jobs.size() + run->skipped);
  // Within one period (the next release), plus room for a host stall.
  EXPECT_LT(returned_at - stopped_at, plan.period_ns + 100 * kNsPerMs);
}

/// Without privilege the loop still runs: SCHED_OTHER instead of FIFO, memory unlocked, each
/// refusal in the warnings, degraded. The child drops root (setuid nobody) first.
void RunUnprivileged() {
  if (setgid(65534) != 0 || setuid(65534) != 0) {
    std::fprintf(stderr, "cannot drop root\n");
    std::exit(3);
  }
  ControlLoopPlan plan;
  plan.policy = *ParsePolicySpec("fifo:50");
  plan.period_ns = 2 * kNsPerMs;
  plan.jobs = 20;
  ArithmeticBody body;
  std::atomic<bool> stop{false};
  auto run = RunControlLoop(plan, body, stop, nullptr);
  if (!run) {
    std::fprintf(stderr, "run failed: %s\n", run.error().message.c_str());
    std::exit(1);
  }
  bool said_policy = false;
  bool said_memory = false;
  for (const auto& w : run->warnings) {
    said_policy |= w.find("cannot set policy fifo priority 50") != std::string::npos &&
                   w.find("ran as SCHED_OTHER instead") != std::string::npos;
    said_memory |= w.find("memory not locked") != std::string::npos ||
                   w.find("mlockall failed") != std::string::npos;
  }
  std::fprintf(stderr, "degraded=%d applied=%s jobs=%zu policy_warning=%d memory_warning=%d\n",
               run->degraded ? 1 : 0, run->applied_policy.c_str(), run->jobs.size(),
               said_policy ? 1 : 0, said_memory ? 1 : 0);
  std::exit(0);
}

TEST_F(ControlLoopRtTest, UnprivilegedRunIsDegradedAndSaysWhy) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  // SCHED_OTHER at the nice the test runs at (0, or more under `nice ctest`).
  errno = 0;
  const int nice_now = getpriority(PRIO_PROCESS, 0);
  ASSERT_EQ(errno, 0);
  EXPECT_EXIT(RunUnprivileged(), ::testing::ExitedWithCode(0),
              "degraded=1 applied=other:" + std::to_string(nice_now) +
                  " jobs=20 policy_warning=1 memory_warning=1");
}

}  // namespace
}  // namespace rtpulse::control
