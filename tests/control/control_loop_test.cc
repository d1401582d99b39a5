// The control loop's parsing, validation and fixture-tree checks: no thread, no root.
#include "control/control_loop.h"

#include <gtest/gtest.h>

#include <atomic>
#include <string>

#include "core/clock.h"
#include "support/fake_tree.h"

namespace rtpulse::control {
namespace {

using Kind = PolicySpec::Kind;

PolicySpec MustParse(const std::string& text) {
  auto spec = ParsePolicySpec(text);
  EXPECT_TRUE(spec.has_value()) << text << ": " << (spec ? "" : spec.error().message);
  return spec ? *spec : PolicySpec{};
}

std::string ParseError(const std::string& text) {
  auto spec = ParsePolicySpec(text);
  EXPECT_FALSE(spec.has_value()) << text << " parsed";
  if (spec) return "";
  EXPECT_EQ(spec.error().code, ExitCode::kUsage) << text;
  return spec.error().message;
}

TEST(PolicySpecTest, ParsesEveryForm) {
  PolicySpec other = MustParse("other:-19");
  EXPECT_EQ(other.kind, Kind::kOther);
  EXPECT_EQ(other.nice, -19);
  EXPECT_EQ(MustParse("other:0").nice, 0);
  EXPECT_EQ(MustParse("other:19").nice, 19);
  EXPECT_EQ(MustParse("other:-20").nice, -20);
  PolicySpec fifo = MustParse("fifo:99");
  EXPECT_EQ(fifo.kind, Kind::kFifo);
  EXPECT_EQ(fifo.priority, 99);
  EXPECT_EQ(MustParse("fifo:1").priority, 1);
  PolicySpec rr = MustParse("rr:50");
  EXPECT_EQ(rr.kind, Kind::kRr);
  EXPECT_EQ(rr.priority, 50);
  PolicySpec dl = MustParse("deadline:400us/4ms/4ms");
  EXPECT_EQ(dl.kind, Kind::kDeadline);
  EXPECT_EQ(dl.runtime_ns, 400 * kNsPerUs);
  EXPECT_EQ(dl.deadline_ns, 4 * kNsPerMs);
  EXPECT_EQ(dl.period_ns, 4 * kNsPerMs);
  PolicySpec dl2 = MustParse(" deadline:1.5ms/3000us/0.004s ");
  EXPECT_EQ(dl2.runtime_ns, 1'500'000);
  EXPECT_EQ(dl2.deadline_ns, 3'000'000);
  EXPECT_EQ(dl2.period_ns, 4'000'000);
  // Equal runtime, deadline and period are allowed (a 100 % reservation).
  EXPECT_EQ(MustParse("deadline:4ms/4ms/4ms").runtime_ns, 4 * kNsPerMs);
}

TEST(PolicySpecTest, FormatIsCanonicalAndParsesBack) {
  for (const char* text :
       {"other:-19", "other:0", "other:5", "fifo:50", "fifo:99", "rr:60", "deadline:400us/4ms/4ms",
        "deadline:800us/4ms/4ms", "deadline:1500ns/3ms/1s"}) {
    const PolicySpec spec = MustParse(text);
    EXPECT_EQ(FormatPolicySpec(spec), text);
    const PolicySpec again = MustParse(FormatPolicySpec(spec));
    EXPECT_EQ(again.kind, spec.kind);
    EXPECT_EQ(again.nice, spec.nice);
    EXPECT_EQ(again.priority, spec.priority);
    EXPECT_EQ(again.runtime_ns, spec.runtime_ns);
    EXPECT_EQ(again.deadline_ns, spec.deadline_ns);
    EXPECT_EQ(again.period_ns, spec.period_ns);
  }
  EXPECT_EQ(FormatPolicySpec(MustParse("deadline:0.4ms/4000us/4ms")), "deadline:400us/4ms/4ms");
}

TEST(PolicySpecTest, SlugsAreNameSafeAndDistinct) {
  EXPECT_EQ(PolicySlug(MustParse("fifo:99")), "fifo-99");
  EXPECT_EQ(PolicySlug(MustParse("rr:50")), "rr-50");
  EXPECT_EQ(PolicySlug(MustParse("other:-19")), "other-n19");
  EXPECT_EQ(PolicySlug(MustParse("other:0")), "other-0");
  EXPECT_EQ(PolicySlug(MustParse("other:5")), "other-5");
  EXPECT_EQ(PolicySlug(MustParse("deadline:400us/4ms/4ms")), "deadline-400us");
  EXPECT_EQ(PolicySlug(MustParse("deadline:400us/3ms/4ms")), "deadline-400us-3ms-4ms");
}

TEST(PolicySpecTest, ThreadPolicyIsTheRealtimeOneOrOther) {
  EXPECT_EQ(ThreadSchedPolicy(MustParse("fifo:80")), SchedPolicy::kFifo);
  EXPECT_EQ(ThreadSchedPolicy(MustParse("rr:10")), SchedPolicy::kRr);
  EXPECT_EQ(ThreadSchedPolicy(MustParse("other:-5")), SchedPolicy::kOther);
  // SCHED_DEADLINE comes from the wake source when it arms; the thread starts as other.
  EXPECT_EQ(ThreadSchedPolicy(MustParse("deadline:400us/4ms/4ms")), SchedPolicy::kOther);
}

TEST(PolicySpecTest, BadInputNamesTheValueAndTheFix) {
  std::string m = ParseError("fifi:50");
  EXPECT_NE(m.find("unknown policy 'fifi'"), std::string::npos) << m;
  EXPECT_NE(m.find("did you mean 'fifo'"), std::string::npos) << m;
  EXPECT_NE(m.find("deadline:RUNTIME/DEADLINE/PERIOD"), std::string::npos) << m;
  m = ParseError("dedline:1ms/4ms/4ms");
  EXPECT_NE(m.find("did you mean 'deadline'"), std::string::npos) << m;
  m = ParseError("banana");
  EXPECT_NE(m.find("unknown policy 'banana'"), std::string::npos) << m;
  EXPECT_EQ(m.find("did you mean"), std::string::npos) << m;

  m = ParseError("fifo:0");
  EXPECT_NE(m.find("priority '0' is outside 1..99"), std::string::npos) << m;
  m = ParseError("rr:100");
  EXPECT_NE(m.find("priority '100' is outside 1..99"), std::string::npos) << m;
  m = ParseError("other:20");
  EXPECT_NE(m.find("nice '20' is outside -20..19"), std::string::npos) << m;
  m = ParseError("other:-21");
  EXPECT_NE(m.find("nice '-21'"), std::string::npos) << m;
  m = ParseError("fifo:high");
  EXPECT_NE(m.find("priority 'high' is not a whole number"), std::string::npos) << m;
  m = ParseError("fifo");
  EXPECT_NE(m.find("fifo needs a value"), std::string::npos) << m;
  m = ParseError("fifo:");
  EXPECT_NE(m.find("fifo needs a value"), std::string::npos) << m;

  m = ParseError("deadline:5ms/4ms/4ms");
  EXPECT_NE(m.find("RUNTIME 5ms is longer than DEADLINE 4ms"), std::string::npos) << m;
  m = ParseError("deadline:1ms/5ms/4ms");
  EXPECT_NE(m.find("DEADLINE 5ms is longer than PERIOD 4ms"), std::string::npos) << m;
  m = ParseError("deadline:1ms/4ms/0ms");
  EXPECT_NE(m.find("PERIOD '0ms' must be above zero"), std::string::npos) << m;
  m = ParseError("deadline:0us/4ms/4ms");
  EXPECT_NE(m.find("RUNTIME '0us' must be above zero"), std::string::npos) << m;
  m = ParseError("deadline:1ms/4ms");
  EXPECT_NE(m.find("three times"), std::string::npos) << m;
  m = ParseError("deadline:1ms/4ms/4ms/4ms");
  EXPECT_NE(m.find("exactly three times"), std::string::npos) << m;
  m = ParseError("deadline:1ms/4/4ms");
  EXPECT_NE(m.find("DEADLINE '4' is not a time"), std::string::npos) << m;
  m = ParseError("deadline:xyz/4ms/4ms");
  EXPECT_NE(m.find("RUNTIME 'xyz' is not a time"), std::string::npos) << m;
  m = ParseError("");
  EXPECT_NE(m.find("unknown policy ''"), std::string::npos) << m;
}

TEST(CheckCpuOnlineTest, ReadsTheOnlineListOfTheTree) {
  testutil::FakeTree tree;
  tree.Write("/sys/devices/system/cpu/online", "0-1,3\n");
  EXPECT_TRUE(CheckCpuOnline(0, tree.Root()));
  EXPECT_TRUE(CheckCpuOnline(1, tree.Root()));
  EXPECT_TRUE(CheckCpuOnline(3, tree.Root()));
  Status off = CheckCpuOnline(2, tree.Root());
  ASSERT_FALSE(off);
  EXPECT_EQ(off.error().code, ExitCode::kUsage);
  EXPECT_NE(off.error().message.find("CPU 2 is not online (online: 0-1,3)"), std::string::npos)
      << off.error().message;
  EXPECT_FALSE(CheckCpuOnline(7, tree.Root()));

  testutil::FakeTree empty;
  Status unreadable = CheckCpuOnline(0, empty.Root());
  ASSERT_FALSE(unreadable);
  EXPECT_EQ(unreadable.error().code, ExitCode::kUsage);
  EXPECT_NE(unreadable.error().message.find("unreadable"), std::string::npos);
}

JobTiming Job(int64_t release_ms, int64_t latency_ms, int64_t exec_ms) {
  JobTiming j;
  j.release_ns = release_ms * kNsPerMs;
  j.start_ns = j.release_ns + latency_ms * kNsPerMs;
  j.end_ns = j.start_ns + exec_ms * kNsPerMs;
  return j;
}

TEST(RtThrottlingTest, DescribesTheSettingAndCountsStallsAsLongAsTheGap) {
  testutil::FakeTree tree;
  tree.Write("/proc/sys/kernel/sched_rt_runtime_us", "950000\n")
      .Write("/proc/sys/kernel/sched_rt_period_us", "1000000\n");
  // Gap 50 ms, threshold 45 ms: a 46 ms wake-up and a 60 ms execution match, 44 ms does not.
  const std::vector<JobTiming> jobs = {Job(0, 0, 1), Job(4, 46, 1), Job(100, 1, 60),
                                       Job(200, 44, 0), Job(300, 0, 44)};
  RtThrottling t = DescribeRtThrottling(tree.Root(), true, jobs);
  EXPECT_TRUE(t.known);
  EXPECT_TRUE(t.enabled);
  EXPECT_EQ(t.runtime_us, 950000);
  EXPECT_EQ(t.period_us, 1000000);
  EXPECT_EQ(t.suspect_jobs, 2u);
  EXPECT_NE(t.text.find("RT throttling on: 950000/1000000 us: a FIFO/RR task that runs 950 ms "
                        "of a second is stopped for 50 ms"),
            std::string::npos)
      << t.text;
  EXPECT_NE(t.text.find("2 job(s) stalled for at least 45 ms"), std::string::npos) << t.text;

  // SCHED_OTHER runs are never throttled by it: no suspects counted.
  RtThrottling other = DescribeRtThrottling(tree.Root(), false, jobs);
  EXPECT_EQ(other.suspect_jobs, 0u);
  EXPECT_EQ(other.text.find("stalled"), std::string::npos);

  testutil::FakeTree off;
  off.Write("/proc/sys/kernel/sched_rt_runtime_us", "-1\n")
      .Write("/proc/sys/kernel/sched_rt_period_us", "1000000\n");
  RtThrottling disabled = DescribeRtThrottling(off.Root(), true, jobs);
  EXPECT_TRUE(disabled.known);
  EXPECT_FALSE(disabled.enabled);
  EXPECT_EQ(disabled.suspect_jobs, 0u);
  EXPECT_NE(disabled.text.find("RT throttling off: sched_rt_runtime_us = -1"), std::string::npos);

  testutil::FakeTree missing;
  RtThrottling unknown = DescribeRtThrottling(missing.Root(), true, jobs);
  EXPECT_FALSE(unknown.known);
  EXPECT_NE(unknown.text.find("RT throttling unknown"), std::string::npos);
}

class CountingBody final : public JobBody {
 public:
  void Run(uint64_t) override { ++runs; }
  uint64_t runs = 0;
};

std::string PlanError(const ControlLoopPlan& plan) {
  CountingBody body;
  std::atomic<bool> stop{false};
  auto run = RunControlLoop(plan, body, stop, nullptr);
  EXPECT_FALSE(run.has_value());
  EXPECT_EQ(body.runs, 0u);
  if (run) return "";
  EXPECT_EQ(run.error().code, ExitCode::kUsage);
  return run.error().message;
}

TEST(RunControlLoopTest, RejectsBadPlansBeforeAnyThreadStarts) {
  bool hook_called = false;
  ControlLoopPlan plan;
  plan.policy = *ParsePolicySpec("deadline:1ms/3ms/3ms");
  plan.path = measure::WakePath::kDeadline;
  plan.period_ns = 4 * kNsPerMs;
  plan.before_loop = [&] { hook_called = true; };
  std::string m = PlanError(plan);
  EXPECT_NE(m.find("PERIOD 3ms differs from the control period 4ms"), std::string::npos) << m;
  EXPECT_NE(m.find("deadline:1ms/3ms/4ms"), std::string::npos) << m;
  EXPECT_FALSE(hook_called);

  plan.policy = *ParsePolicySpec("deadline:1ms/4ms/4ms");
  plan.path = measure::WakePath::kAbs;
  m = PlanError(plan);
  EXPECT_NE(m.find("wake path 'abs'"), std::string::npos) << m;

  plan.policy = *ParsePolicySpec("fifo:50");
  plan.path = measure::WakePath::kDeadline;
  m = PlanError(plan);
  EXPECT_NE(m.find("wake path 'deadline'"), std::string::npos) << m;

  plan.path = measure::WakePath::kRel;
  m = PlanError(plan);
  EXPECT_NE(m.find("'rel'"), std::string::npos) << m;

  plan.path = measure::WakePath::kAbs;
  plan.period_ns = 0;
  m = PlanError(plan);
  EXPECT_NE(m.find("invalid control period 0 ns"), std::string::npos) << m;

  plan.period_ns = 4 * kNsPerMs;
  plan.jobs = kMaxJobs + 1;
  m = PlanError(plan);
  EXPECT_NE(m.find("10000001 jobs is more than one run keeps"), std::string::npos) << m;

  plan.jobs = 10;
  plan.cpu = 4096;  // no machine this runs on has it online
  m = PlanError(plan);
  EXPECT_NE(m.find("CPU 4096 is not online"), std::string::npos) << m;
  EXPECT_FALSE(hook_called);
}

}  // namespace
}  // namespace rtpulse::control
