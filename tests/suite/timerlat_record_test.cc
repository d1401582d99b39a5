// suite/timerlat_record.h: a timerlat run's per-CPU histograms and sequence counts as the
// measure paths every output shows ("timerlat" thread latency, "timerlat-irq" IRQ latency,
// "timerlat-user" the return from user space).
#include "suite/timerlat_record.h"

#include <gtest/gtest.h>

#include "suite/latency_record.h"

namespace rtpulse::suite {
namespace {

trace::TimerlatResult TimerlatRecordFixture() {
  trace::TimerlatResult r;
  r.mode = "user";
  r.start_realtime_ns = 1'000;
  r.end_realtime_ns = 3'001'000;
  r.duration_ns = 3'000'000'000;
  trace::TimerlatCollector collector({2, 5});
  // CPU 2: activations 1..10, IRQ record 4 lost; CPU 5: 1..8, thread records 7 and 8 lost
  // (8 is simply the last: the run stopped between its IRQ and its thread record).
  // Return from user space (context 2): CPU 2's activation 5 lost, none from CPU 5.
  for (int64_t seq = 1; seq <= 10; ++seq) {
    if (seq != 5) {
      trace::TraceEvent e;
      e.kind = trace::EventKind::kTimerlat;
      e.number = seq;
      e.timerlat_context = 2;
      e.cpu = 2;
      e.timerlat_latency_ns = 2000 * seq;
      collector.OnEvent(e);
    }
    for (int context : {0, 1}) {
      trace::TraceEvent e;
      e.kind = trace::EventKind::kTimerlat;
      e.number = seq;
      e.timerlat_context = context;
      e.cpu = 2;
      e.timerlat_latency_ns = context == 0 ? 100 * seq : 1000 * seq;
      if (!(context == 0 && seq == 4)) collector.OnEvent(e);
      e.cpu = 5;
      if (seq <= 8 && !(context == 1 && seq >= 7)) collector.OnEvent(e);
    }
  }
  r.cpus = collector.cpus();
  r.cpus[0].tid = 101;
  r.cpus[1].tid = 102;
  for (auto& c : r.cpus) {
    c.policy = "fifo";
    c.priority = 90;
  }
  return r;
}

TEST(TimerlatRecord, ThreePathsWithTheThreadIrqAndReturnFromUserLatencyOfEveryCpu) {
  const auto paths = TimerlatPaths(TimerlatRecordFixture(), 1'000'000);
  ASSERT_EQ(paths.size(), 3U);
  EXPECT_EQ(paths[0].wake, "timerlat");
  EXPECT_EQ(paths[1].wake, "timerlat-irq");
  EXPECT_EQ(paths[2].wake, "timerlat-user");
  for (const auto& path : paths) {
    EXPECT_EQ(path.duration_ns, 3'000'000'000);
    EXPECT_EQ(path.start_realtime_ns, 1'000);
    ASSERT_EQ(path.probes.size(), 2U);
    EXPECT_EQ(path.probes[0].cpu, 2);
    EXPECT_EQ(path.probes[1].cpu, 5);
    EXPECT_EQ(path.probes[0].tid, 101);
    EXPECT_EQ(path.probes[1].index, 1);
    EXPECT_EQ(path.probes[0].policy, "fifo");
    EXPECT_EQ(path.probes[0].priority, 90);
    EXPECT_EQ(path.probes[0].interval_ns, 1'000'000);
    EXPECT_EQ(path.probes[0].wake, path.wake);
  }
  const auto& thread = paths[0].probes;
  const auto& irq = paths[1].probes;
  // Thread, CPU 2: all 10, 1000..10000 ns.
  EXPECT_EQ(thread[0].histogram.count(), 10U);
  EXPECT_EQ(thread[0].histogram.sum(), 55'000);
  EXPECT_EQ(thread[0].periods_elapsed, 10U);
  EXPECT_EQ(thread[0].missed_activations, 0U);
  EXPECT_EQ(thread[0].last_latency_ns, 10'000);
  EXPECT_TRUE(thread[0].notes.empty());
  // IRQ, CPU 2: record 4 lost; samples + missed = the kernel's count.
  EXPECT_EQ(irq[0].histogram.count(), 9U);
  EXPECT_EQ(irq[0].histogram.sum(), 5'500 - 400);
  EXPECT_EQ(irq[0].missed_activations, 1U);
  EXPECT_EQ(irq[0].periods_elapsed, 10U);
  ASSERT_EQ(irq[0].notes.size(), 1U);
  EXPECT_NE(irq[0].notes[0].find("1 of the kernel's 10 activations have no IRQ record"),
            std::string::npos);
  // CPU 5: thread up to 6 (7 and 8 missing at the end are not gaps), IRQ 1..8.
  EXPECT_EQ(thread[1].histogram.count(), 6U);
  EXPECT_EQ(thread[1].periods_elapsed, 6U);
  EXPECT_EQ(thread[1].missed_activations, 0U);
  EXPECT_EQ(irq[1].histogram.count(), 8U);
  EXPECT_EQ(irq[1].histogram.max(), 800);
  // Return from user, CPU 2: 9 of 10 (2000..20000 ns less 10000), one missed; CPU 5: none.
  const auto& user = paths[2].probes;
  EXPECT_EQ(user[0].histogram.count(), 9U);
  EXPECT_EQ(user[0].histogram.sum(), 2000 * 55 - 10'000);
  EXPECT_EQ(user[0].periods_elapsed, 10U);
  EXPECT_EQ(user[0].missed_activations, 1U);
  EXPECT_EQ(user[0].last_latency_ns, 20'000);
  EXPECT_NE(user[0].notes.back().find("1 of the kernel's 10 activations have no "
                                      "return-from-user record"),
            std::string::npos);
  EXPECT_EQ(user[1].histogram.count(), 0U);
  EXPECT_EQ(user[1].missed_activations, 0U);

  // And through to the results every output reads.
  measure::RunRecord run;
  run.paths = paths;
  const auto results = ToLatencyRun(std::move(run));
  ASSERT_EQ(results.paths.size(), 3U);
  EXPECT_EQ(results.paths[1].wake, "timerlat-irq");
  EXPECT_EQ(results.paths[1].probes[0].missed_activations, 1U);
}

TEST(TimerlatRecord, TheKernelsOwnThreadsGiveNoReturnFromUserPath) {
  trace::TimerlatResult kernel = TimerlatRecordFixture();
  kernel.mode = "kernel";
  const auto paths = TimerlatPaths(kernel, 1'000'000);
  ASSERT_EQ(paths.size(), 2U);
  EXPECT_EQ(paths[1].wake, "timerlat-irq");
}

}  // namespace
}  // namespace rtpulse::suite
