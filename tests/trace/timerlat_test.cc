// trace/timerlat.h without a timerlat tracer (this VM has none; the PREEMPT_RT guest runs the
// real thing, tests/kernel/qemu_trace_test.cc): osnoise/ saved, changed and restored in a
// fixture folder, the tracer's checks against fixture tracefs trees and the real one, and the
// histograms filled from injected ftrace:timerlat events with sequence gaps.
#include "trace/timerlat.h"

#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "support/subprocess.h"
#include "support/tracefs.h"

namespace rtpulse::trace {
namespace {

std::string TimerlatTestRead(const std::string& path) {
  std::ifstream in(path);
  std::string s((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return s;
}

void TimerlatTestWrite(const std::string& path, const std::string& text) {
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  std::ofstream(path) << text;
}

constexpr const char* kKernelOptions =
    "DEFAULTS OSNOISE_WORKLOAD NO_PANIC_ON_STOP NO_OSNOISE_PREEMPT_DISABLE NO_OSNOISE_IRQ_DISABLE";

/// An osnoise/ folder as Linux 6.12 shows it after boot.
void FillOsnoise(const std::string& dir) {
  TimerlatTestWrite(dir + "/timerlat_period_us", "1000\n");
  TimerlatTestWrite(dir + "/cpus", "0-3\n");
  TimerlatTestWrite(dir + "/stop_tracing_us", "250\n");
  TimerlatTestWrite(dir + "/stop_tracing_total_us", "0\n");
  TimerlatTestWrite(dir + "/print_stack", "0\n");
  TimerlatTestWrite(dir + "/options", std::string(kKernelOptions) + " \n");
}

TEST(OsnoiseSettings, ChangesAreSavedAndRestoredInReverseOrder) {
  testutil::TempDir tmp;
  const std::string dir = tmp.File("osnoise");
  FillOsnoise(dir);
  std::vector<std::pair<std::string, std::string>> writes;
  {
    OsnoiseSettings s(dir);
    s.set_write_log(&writes);
    ASSERT_TRUE(s.Set("timerlat_period_us", "500").ok());
    ASSERT_TRUE(s.Set("cpus", "1,3").ok());
    ASSERT_TRUE(s.Set("stop_tracing_us", "0").ok());
    ASSERT_TRUE(s.Set("timerlat_period_us", "250").ok());  // changed twice: saved once
    ASSERT_TRUE(s.SetOption("OSNOISE_WORKLOAD", false).ok());
    ASSERT_TRUE(s.Set("stop_tracing_total_us", "0").ok());  // unchanged: not in Changes()
    EXPECT_EQ(TimerlatTestRead(dir + "/timerlat_period_us"), "250");
    EXPECT_EQ(TimerlatTestRead(dir + "/cpus"), "1,3");
    EXPECT_EQ(TimerlatTestRead(dir + "/stop_tracing_us"), "0");
    EXPECT_EQ(TimerlatTestRead(dir + "/options"), "NO_OSNOISE_WORKLOAD");
    EXPECT_EQ(s.Changes(),
              (std::vector<std::string>{"timerlat_period_us: 1000 -> 250", "cpus: 0-3 -> 1,3",
                                        "stop_tracing_us: 250 -> 0"}));
    writes.clear();
  }  // the destructor restores
  EXPECT_EQ(TimerlatTestRead(dir + "/timerlat_period_us"), "1000");
  EXPECT_EQ(TimerlatTestRead(dir + "/cpus"), "0-3");
  EXPECT_EQ(TimerlatTestRead(dir + "/stop_tracing_us"), "250");
  EXPECT_EQ(TimerlatTestRead(dir + "/stop_tracing_total_us"), "0");
  // Newest first; then every flag of the saved options line, one write each, without the
  // DEFAULTS command (which would reset the flags instead of setting them).
  const std::vector<std::pair<std::string, std::string>> want = {
      {"stop_tracing_total_us", "0"},
      {"stop_tracing_us", "250"},
      {"cpus", "0-3"},
      {"timerlat_period_us", "1000"},
      {"options", "OSNOISE_WORKLOAD"},
      {"options", "NO_PANIC_ON_STOP"},
      {"options", "NO_OSNOISE_PREEMPT_DISABLE"},
      {"options", "NO_OSNOISE_IRQ_DISABLE"}};
  EXPECT_EQ(writes, want);
}

TEST(OsnoiseSettings, AFailedWriteNamesTheFileAndEarlierChangesAreStillRestored) {
  testutil::TempDir tmp;
  const std::string dir = tmp.File("osnoise");
  FillOsnoise(dir);
  {
    OsnoiseSettings s(dir);
    ASSERT_TRUE(s.Set("timerlat_period_us", "200").ok());
    Status bad = s.Set("no_such_file", "1");
    ASSERT_FALSE(bad.ok());
    EXPECT_EQ(bad.error().code, ExitCode::kResource);
    EXPECT_NE(bad.error().message.find(dir + "/no_such_file"), std::string::npos)
        << bad.error().message;
    EXPECT_EQ(TimerlatTestRead(dir + "/timerlat_period_us"), "200");
  }
  EXPECT_EQ(TimerlatTestRead(dir + "/timerlat_period_us"), "1000");
  EXPECT_FALSE(std::filesystem::exists(dir + "/no_such_file"));
}

TEST(OsnoiseSettings, RestoreIsDoneOnce) {
  testutil::TempDir tmp;
  const std::string dir = tmp.File("osnoise");
  FillOsnoise(dir);
  std::vector<std::pair<std::string, std::string>> writes;
  OsnoiseSettings s(dir);
  s.set_write_log(&writes);
  ASSERT_TRUE(s.Set("cpus", "2").ok());
  ASSERT_TRUE(s.Restore().ok());
  EXPECT_EQ(TimerlatTestRead(dir + "/cpus"), "0-3");
  // A user's later change is not overwritten by a second restore (the destructor's).
  TimerlatTestWrite(dir + "/cpus", "1");
  ASSERT_TRUE(s.Restore().ok());
  EXPECT_EQ(TimerlatTestRead(dir + "/cpus"), "1");
  EXPECT_EQ(writes.size(), 2U);
}

// ---- Finding the tracer ----------------------------------------------------------------------

TEST(FindTimerlatTracefs, NoTracefsNamesTheMountCommand) {
  testutil::TempDir tmp;
  auto found = FindTimerlatTracefs(tmp.File("tracing"));
  ASSERT_FALSE(found);
  EXPECT_EQ(found.error().code, ExitCode::kResource);
  EXPECT_NE(found.error().message.find("mount -t tracefs"), std::string::npos);
}

TEST(FindTimerlatTracefs, AKernelWithoutTheTracerNamesTheOptionAndCheck) {
  testutil::TempDir tmp;
  TimerlatTestWrite(tmp.File("tracing/available_tracers"), "blk function nop\n");
  auto found = FindTimerlatTracefs(tmp.File("tracing"));
  ASSERT_FALSE(found);
  EXPECT_EQ(found.error().code, ExitCode::kResource);
  EXPECT_NE(found.error().message.find("CONFIG_TIMERLAT_TRACER"), std::string::npos);
  EXPECT_NE(found.error().message.find("rtpulse check"), std::string::npos);
  EXPECT_NE(found.error().message.find("blk function nop"), std::string::npos);
}

TEST(FindTimerlatTracefs, AnotherUserOfTimerlatOrOsnoiseIsBusy) {
  for (const std::string where : {"", "/instances/rtla"}) {
    for (const std::string tracer : {"timerlat", "osnoise"}) {
      testutil::TempDir tmp;
      const std::string dir = tmp.File("tracing");
      TimerlatTestWrite(dir + "/available_tracers", "timerlat osnoise function nop\n");
      TimerlatTestWrite(dir + "/current_tracer", "nop\n");
      TimerlatTestWrite(dir + "/instances/other/current_tracer", "nop\n");
      TimerlatTestWrite(dir + where + "/current_tracer", tracer + "\n");
      auto found = FindTimerlatTracefs(dir);
      ASSERT_FALSE(found) << where << " " << tracer;
      EXPECT_EQ(found.error().code, ExitCode::kResource);
      EXPECT_NE(found.error().message.find("busy"), std::string::npos);
      EXPECT_NE(found.error().message.find(dir + where + "/current_tracer"), std::string::npos)
          << found.error().message;
    }
  }
}

TEST(FindTimerlatTracefs, AnIdleTracerIsFound) {
  testutil::TempDir tmp;
  const std::string dir = tmp.File("tracing");
  TimerlatTestWrite(dir + "/available_tracers", "timerlat osnoise nop\n");
  TimerlatTestWrite(dir + "/current_tracer", "nop\n");
  TimerlatTestWrite(dir + "/instances/mine/current_tracer", "function\n");
  auto found = FindTimerlatTracefs(dir);
  ASSERT_TRUE(found) << found.error().message;
  EXPECT_EQ(*found, dir);
}

TEST(FindTimerlatTracefs, ThisMachine) {
  if (const std::string why = testutil::TracefsUnavailable(); !why.empty()) GTEST_SKIP() << why;
  auto tracers = TimerlatTestRead("/sys/kernel/tracing/available_tracers");
  auto found = FindTimerlatTracefs("");
  if (tracers.find("timerlat") != std::string::npos) {
    GTEST_SKIP() << "this kernel has the timerlat tracer: the guest test covers it";
  }
  ASSERT_FALSE(found);
  EXPECT_NE(found.error().message.find("CONFIG_TIMERLAT_TRACER"), std::string::npos);
}

TEST(RunTimerlat, BadPlansAreUsageErrorsBeforeAnythingIsTouched) {
  testutil::TempDir tmp;  // no tracefs at all: a usage error must come first
  TimerlatPlan plan;
  plan.tracefs_dir = tmp.File("tracing");
  plan.cpus = {};
  auto r = RunTimerlat(plan);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, ExitCode::kUsage);
  plan.cpus = {0};
  for (int64_t period_ns : {int64_t{50'000}, int64_t{2'000'000'000}, int64_t{1'000'500}}) {
    plan.period_ns = period_ns;
    r = RunTimerlat(plan);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().code, ExitCode::kUsage) << period_ns;
    EXPECT_NE(r.error().message.find(std::to_string(period_ns) + " ns"), std::string::npos);
  }
  plan.period_ns = 1'000'000;
  r = RunTimerlat(plan);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, ExitCode::kResource);  // now the missing tracefs
}

// ---- The command line ------------------------------------------------------------------------

TEST(LatencyWakeTimerlat, UsageErrorsNameTheValueAndTheFix) {
  struct Case {
    std::vector<std::string> args;
    std::string says;
  };
  for (const auto& c : std::vector<Case>{
           {{"-i", "50"}, "-i 50 is outside the timerlat tracer's period range (100 to 1000000"},
           {{"-i", "2000000"}, "-i 2000000 is outside"},
           {{"-l", "100"}, "give -D instead of -l"},
           // One period for every CPU: a thread distance given for timerlat alone is refused.
           {{"-t", "2", "-a", "0", "-d", "100"},
            "-d 100: --wake timerlat has one period (-i) "
            "for every CPU"},
           {{"-A", "100"}, "the timerlat tracer arms its own timers"}}) {
    std::vector<std::string> argv = {"latency", "--wake", "timerlat", "-D", "1s", "-q"};
    argv.insert(argv.end(), c.args.begin(), c.args.end());
    const auto run = testutil::RunRtpulse(argv);
    EXPECT_EQ(run.exit_code, 2) << c.says << "\n" << run.err;
    EXPECT_NE(run.err.find(c.says), std::string::npos) << run.err;
  }
  // -S with no other flag (issue 31): cyclictest's default distance does not apply, so the run
  // gets past its options: to the missing tracer here (exit 3), or it measures (the QEMU
  // guest's trace checks).
  const auto smp = testutil::RunRtpulse({"latency", "--wake", "timerlat", "-D", "1s", "-q", "-S"});
  EXPECT_NE(smp.exit_code, 2) << smp.err;
  EXPECT_EQ(smp.err.find("-d"), std::string::npos) << smp.err;
}

TEST(LatencyWakeTimerlat, AKernelWithoutTheTracerIsExit3NamingTheOptionAndCheck) {
  if (const std::string why = testutil::TracefsUnavailable(); !why.empty()) GTEST_SKIP() << why;
  const std::string tracers = TimerlatTestRead("/sys/kernel/tracing/available_tracers");
  if (tracers.find("timerlat") != std::string::npos) {
    GTEST_SKIP() << "this kernel has the timerlat tracer: the guest test covers the run";
  }
  for (const std::string wake : {"timerlat", "abs,timerlat"}) {
    const auto run = testutil::RunRtpulse({"latency", "--wake", wake, "-D", "1s", "-q"});
    EXPECT_EQ(run.exit_code, 3) << run.err;
    EXPECT_NE(run.err.find("CONFIG_TIMERLAT_TRACER"), std::string::npos) << run.err;
    EXPECT_NE(run.err.find("rtpulse check"), std::string::npos) << run.err;
    // Refused before anything ran: no abs samples either.
    EXPECT_EQ(run.out.find("T: 0"), std::string::npos) << run.out;
  }
}

// ---- Histograms from events ------------------------------------------------------------------

TraceEvent TimerlatEvent(int cpu, int64_t seq, int context, int64_t latency_ns) {
  TraceEvent e;
  e.kind = EventKind::kTimerlat;
  e.cpu = cpu;
  e.number = seq;
  e.timerlat_context = context;
  e.timerlat_latency_ns = latency_ns;
  e.ts_ns = seq * 1'000'000 + latency_ns;
  return e;
}

TEST(TimerlatCollector, CountsEverySampleAndEverySequenceGapExactly) {
  TimerlatCollector collector({1, 3});
  // Ground truth: CPU 1 has activations 1..100 with IRQ records 10, 11, 12 and 50 lost and
  // thread records 11 and 70..74 lost; CPU 3 starts at 3 (1 and 2 lost from both).
  std::map<int, std::vector<int64_t>> irq_want, thread_want;
  for (int64_t seq = 1; seq <= 100; ++seq) {
    const bool irq_lost = (seq >= 10 && seq <= 12) || seq == 50;
    const bool thread_lost = seq == 11 || (seq >= 70 && seq <= 74);
    if (!irq_lost) {
      collector.OnEvent(TimerlatEvent(1, seq, 0, 1000 + seq));
      irq_want[1].push_back(1000 + seq);
    }
    if (!thread_lost) {
      collector.OnEvent(TimerlatEvent(1, seq, 1, 5000 + 10 * seq));
      thread_want[1].push_back(5000 + 10 * seq);
    }
    collector.OnEvent(TimerlatEvent(1, seq, 2, 9000 + seq));  // user-return: its own histogram
    if (seq >= 3) {
      collector.OnEvent(TimerlatEvent(3, seq, 0, 700));
      collector.OnEvent(TimerlatEvent(3, seq, 1, 90'000));
      irq_want[3].push_back(700);
      thread_want[3].push_back(90'000);
    }
  }
  collector.OnEvent(TimerlatEvent(1, 99, 1, 1));  // a repeat: out of order, not a sample
  collector.OnEvent(TimerlatEvent(2, 5, 0, 1));   // a CPU not measured
  TraceEvent other;
  other.kind = EventKind::kSchedSwitch;
  other.cpu = 1;
  collector.OnEvent(other);

  const auto& cpus = collector.cpus();
  ASSERT_EQ(cpus.size(), 2U);
  EXPECT_EQ(cpus[0].cpu, 1);
  EXPECT_EQ(cpus[0].first_seq, 1U);
  EXPECT_EQ(cpus[0].last_irq_seq, 100U);
  EXPECT_EQ(cpus[0].last_thread_seq, 100U);
  EXPECT_EQ(cpus[0].irq_lost, 4U);
  EXPECT_EQ(cpus[0].thread_lost, 6U);
  EXPECT_EQ(cpus[0].irq.count(), 96U);
  EXPECT_EQ(cpus[0].thread.count(), 94U);
  EXPECT_EQ(cpus[0].irq.count() + cpus[0].irq_lost, cpus[0].last_irq_seq);
  EXPECT_EQ(cpus[0].thread.count() + cpus[0].thread_lost, cpus[0].last_thread_seq);
  EXPECT_EQ(cpus[0].user_return, 100U);
  EXPECT_EQ(cpus[0].user.count(), 100U);
  EXPECT_EQ(cpus[0].user.sum(), 100 * 9000 + 5050);
  EXPECT_EQ(cpus[0].last_user_seq, 100U);
  EXPECT_EQ(cpus[0].last_user_latency_ns, 9100);
  EXPECT_EQ(cpus[1].user.count(), 0U);
  EXPECT_EQ(cpus[0].out_of_order, 1U);
  EXPECT_EQ(cpus[1].cpu, 3);
  EXPECT_EQ(cpus[1].first_seq, 3U);
  EXPECT_EQ(cpus[1].irq_lost, 2U);
  EXPECT_EQ(cpus[1].thread_lost, 2U);
  EXPECT_EQ(cpus[1].irq.count(), 98U);
  EXPECT_EQ(collector.ignored(), 2U);

  // The histograms hold exactly the injected values (below 512 ns a bucket is one value;
  // above, min/max/sum are exact).
  for (size_t i = 0; i < 2; ++i) {
    const int cpu = cpus[i].cpu;
    for (const auto& [h, want] :
         {std::pair{&cpus[i].irq, &irq_want[cpu]}, std::pair{&cpus[i].thread, &thread_want[cpu]}}) {
      int64_t sum = 0;
      for (int64_t v : *want) sum += v;
      EXPECT_EQ(h->count(), want->size());
      EXPECT_EQ(h->min(), *std::min_element(want->begin(), want->end()));
      EXPECT_EQ(h->max(), *std::max_element(want->begin(), want->end()));
      EXPECT_EQ(h->sum(), sum);
    }
  }
}

TEST(TimerlatCollector, PeriodsTheKernelSkippedBehindALateThreadAreCountedWithTheirLateness) {
  constexpr int64_t kMs = 1'000'000;
  TimerlatCollector collector({0}, kMs);
  auto at = [](int64_t seq, int context, int64_t expiry_ns, int64_t latency_ns) {
    TraceEvent e = TimerlatEvent(0, seq, context, latency_ns);
    e.ts_ns = expiry_ns + latency_ns + 700;  // the record is written a little after `now`
    return e;
  };
  // Activation 2 (expiry 2 ms) wakes its thread 3.5 ms late: the kernel re-arms for 6 ms, the
  // first expiry still ahead, so 3, 4 and 5 ms were skipped (late until 5.5 ms + 700 ns).
  collector.OnEvent(at(1, 0, 1 * kMs, 1000));
  collector.OnEvent(at(1, 1, 1 * kMs, 3000));
  collector.OnEvent(at(2, 0, 2 * kMs, 1000));
  collector.OnEvent(at(2, 1, 2 * kMs, 3'500'000));
  collector.OnEvent(at(3, 0, 6 * kMs, 1000));
  collector.OnEvent(at(3, 1, 6 * kMs, 3000));
  collector.OnEvent(at(4, 0, 7 * kMs, 1000));
  collector.OnEvent(at(4, 1, 7 * kMs, 3000));
  // Record 5 lost (expiry 8 ms), then 6 at 9 ms: a lost record, not a skipped period.
  collector.OnEvent(at(6, 0, 9 * kMs, 1000));
  collector.OnEvent(at(6, 1, 9 * kMs, 3000));
  const TimerlatCpu& c = collector.cpus()[0];
  EXPECT_EQ(c.skipped_periods, 3U);
  EXPECT_EQ(c.irq_lost, 1U);
  EXPECT_EQ(c.thread_lost, 1U);
  ASSERT_EQ(c.skipped.count(), 3U);
  // The expiries are known as record time - latency: the 700 ns the record came after the
  // kernel's `now` shift them all alike (the lateness is that much low).
  const int64_t stall_end = 2 * kMs + 3'500'000 + 700;
  const int64_t expiry_seen = 2 * kMs + 700;
  EXPECT_EQ(c.skipped.min(), stall_end - (expiry_seen + 3 * kMs));
  EXPECT_EQ(c.skipped.max(), stall_end - (expiry_seen + 1 * kMs));
  EXPECT_EQ(c.skipped.sum(), 3 * stall_end - 3 * expiry_seen - 6 * kMs);
  // Every period from the first to the last: samples + lost + skipped.
  EXPECT_EQ(c.irq.count() + c.irq_lost + c.skipped_periods, 9U);
}

}  // namespace
}  // namespace rtpulse::trace
