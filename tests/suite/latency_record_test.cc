// The conversion from what the engine recorded (measure/recorder.h) to the result types:
// every field of a filled record arrives, with nothing left at its default.
#include "suite/latency_record.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace rtpulse::suite {
namespace {

/// (lo, hi, count) of every non-empty bucket: equal lists mean equal histograms.
std::vector<std::vector<int64_t>> Buckets(const Histogram& h) {
  std::vector<std::vector<int64_t>> out;
  h.ForEachBucket([&](Histogram::Range r, uint64_t n) {
    out.push_back({r.lo, r.hi, static_cast<int64_t>(n)});
  });
  return out;
}

/// Every field set to a value no default has, each distinct from its neighbours.
measure::ProbeRecord FilledProbe(int index) {
  measure::ProbeRecord p;
  p.index = index;
  p.cpu = 3 + index;
  p.tid = 4242 + index;
  p.policy = "rr";
  p.priority = 77;
  p.interval_ns = 250'000;
  p.wake = "timerfd";
  for (int64_t v : {-1500, 800, 12'000, 12'000, 3'000'000}) p.histogram.Record(v + index);
  for (int64_t v : {2'750'000, 2'500'000, 250'000}) p.skipped_histogram.Record(v + index);
  measure::LinearHistogramRecord linear;
  linear.limit_us = 5;
  linear.counts = {1, 0, 2, 0, 7};
  linear.overflows = 11;
  linear.underflows = 12;
  linear.overflow_seqs = {100, 200, 300};
  linear.overflow_seqs_dropped = 13;
  p.linear = std::move(linear);
  p.periods_elapsed = 1001;
  p.missed_activations = 14;
  p.skipped_periods = 15;
  p.last_latency_ns = 16'000;
  p.grid_restarts = 17;
  p.spikes = {{5, 123'456'789, 3'000'000}, {9, 223'456'789, 2'500'000}};
  p.spikes_not_kept = 18;
  p.samples_logged = 19;
  p.samples_dropped = 20;
  p.injections = 21;
  p.degraded = true;
  p.notes = {"first note", "second note"};
  return p;
}

void ExpectSameProbe(const measure::ProbeRecord& in, const results::ProbeResult& out) {
  EXPECT_EQ(out.index, in.index);
  EXPECT_EQ(out.cpu, in.cpu);
  EXPECT_EQ(out.tid, in.tid);
  EXPECT_EQ(out.policy, in.policy);
  EXPECT_EQ(out.priority, in.priority);
  EXPECT_EQ(out.interval_ns, in.interval_ns);
  EXPECT_EQ(out.wake, in.wake);
  EXPECT_EQ(out.histogram.count(), in.histogram.count());
  EXPECT_EQ(out.histogram.min(), in.histogram.min());
  EXPECT_EQ(out.histogram.max(), in.histogram.max());
  EXPECT_EQ(out.histogram.sum(), in.histogram.sum());
  EXPECT_EQ(out.histogram.negative_count(), in.histogram.negative_count());
  EXPECT_EQ(out.histogram.approximate_moments(), in.histogram.approximate_moments());
  EXPECT_EQ(Buckets(out.histogram), Buckets(in.histogram));
  EXPECT_EQ(out.skipped_histogram.count(), in.skipped_histogram.count());
  EXPECT_EQ(out.skipped_histogram.sum(), in.skipped_histogram.sum());
  EXPECT_EQ(Buckets(out.skipped_histogram), Buckets(in.skipped_histogram));
  ASSERT_EQ(out.linear.has_value(), in.linear.has_value());
  if (in.linear) {
    EXPECT_EQ(out.linear->limit_us, in.linear->limit_us);
    EXPECT_EQ(out.linear->counts, in.linear->counts);
    EXPECT_EQ(out.linear->overflows, in.linear->overflows);
    EXPECT_EQ(out.linear->underflows, in.linear->underflows);
    EXPECT_EQ(out.linear->overflow_seqs, in.linear->overflow_seqs);
    EXPECT_EQ(out.linear->overflow_seqs_dropped, in.linear->overflow_seqs_dropped);
  }
  EXPECT_EQ(out.periods_elapsed, in.periods_elapsed);
  EXPECT_EQ(out.missed_activations, in.missed_activations);
  EXPECT_EQ(out.skipped_periods, in.skipped_periods);
  EXPECT_EQ(out.last_latency_ns, in.last_latency_ns);
  EXPECT_EQ(out.grid_restarts, in.grid_restarts);
  ASSERT_EQ(out.spikes.size(), in.spikes.size());
  for (size_t i = 0; i < in.spikes.size(); ++i) {
    EXPECT_EQ(out.spikes[i].seq, in.spikes[i].seq);
    EXPECT_EQ(out.spikes[i].expected_ns, in.spikes[i].expected_ns);
    EXPECT_EQ(out.spikes[i].latency_ns, in.spikes[i].latency_ns);
  }
  EXPECT_EQ(out.spikes_not_kept, in.spikes_not_kept);
  EXPECT_EQ(out.samples_logged, in.samples_logged);
  EXPECT_EQ(out.samples_dropped, in.samples_dropped);
  EXPECT_EQ(out.injections, in.injections);
  EXPECT_EQ(out.degraded, in.degraded);
  EXPECT_EQ(out.notes, in.notes);
}

measure::PathRecord FilledPath(const std::string& wake, int probes) {
  measure::PathRecord path;
  path.wake = wake;
  path.start_realtime_ns = 1'700'000'000'000'000'000;
  path.end_realtime_ns = 1'700'000'060'000'000'000;
  path.duration_ns = 59'999'000'000;
  for (int i = 0; i < probes; ++i) path.probes.push_back(FilledProbe(i));
  return path;
}

void ExpectSamePath(const measure::PathRecord& in, const results::PathRun& out) {
  EXPECT_EQ(out.wake, in.wake);
  EXPECT_EQ(out.start_realtime_ns, in.start_realtime_ns);
  EXPECT_EQ(out.end_realtime_ns, in.end_realtime_ns);
  EXPECT_EQ(out.duration_ns, in.duration_ns);
  ASSERT_EQ(out.probes.size(), in.probes.size());
  for (size_t i = 0; i < in.probes.size(); ++i) ExpectSameProbe(in.probes[i], out.probes[i]);
}

TEST(LatencyRecordTest, EveryProbeFieldArrivesCopiedOrMoved) {
  const measure::ProbeRecord filled = FilledProbe(2);
  ExpectSameProbe(filled, ToProbeResult(filled));
  measure::ProbeRecord moved = FilledProbe(2);
  ExpectSameProbe(filled, ToProbeResult(std::move(moved)));
}

TEST(LatencyRecordTest, LiveHistogramKeepsApproximateMoments) {
  // Checkpoint snapshots carry live copies whose moments are approximate; the flag survives.
  measure::ProbeRecord running = FilledProbe(0);
  measure::ProbeRecord live;
  running.histogram.LiveCopyTo(live.histogram);
  ASSERT_TRUE(live.histogram.approximate_moments());
  ExpectSameProbe(live, ToProbeResult(live));
}

TEST(LatencyRecordTest, NoLinearHistogramStaysAbsent) {
  measure::ProbeRecord p = FilledProbe(1);
  p.linear.reset();
  EXPECT_FALSE(ToProbeResult(p).linear.has_value());
}

TEST(LatencyRecordTest, EveryPathFieldArrivesCopiedOrMoved) {
  const measure::PathRecord filled = FilledPath("posix", 3);
  ExpectSamePath(filled, ToPathRun(filled));
  measure::PathRecord moved = FilledPath("posix", 3);
  ExpectSamePath(filled, ToPathRun(std::move(moved)));
}

TEST(LatencyRecordTest, EveryRunFieldArrives) {
  measure::RunRecord run;
  run.start_realtime_ns = 1'600'000'000'000'000'000;
  run.end_realtime_ns = 1'600'000'120'000'000'000;
  run.paths.push_back(FilledPath("abs", 2));
  run.paths.push_back(FilledPath("epoll", 1));
  run.interrupted = true;
  run.degraded = true;
  run.warnings = {"one warning", "another"};
  run.breaktrace = measure::BreakRecord{1, 4711, 2'345'678, true};
  run.dma_latency = "/dev/cpu_dma_latency held at 0 us";
  run.samples_error = "disk full; 3 of 9 samples did not reach the file";
  const measure::RunRecord expected = run;

  const results::LatencyRun out = ToLatencyRun(std::move(run));
  EXPECT_EQ(out.start_realtime_ns, expected.start_realtime_ns);
  EXPECT_EQ(out.end_realtime_ns, expected.end_realtime_ns);
  ASSERT_EQ(out.paths.size(), expected.paths.size());
  for (size_t i = 0; i < expected.paths.size(); ++i)
    ExpectSamePath(expected.paths[i], out.paths[i]);
  EXPECT_EQ(out.interrupted, expected.interrupted);
  EXPECT_EQ(out.degraded, expected.degraded);
  EXPECT_EQ(out.warnings, expected.warnings);
  ASSERT_TRUE(out.breaktrace.has_value());
  EXPECT_EQ(out.breaktrace->thread, 1);
  EXPECT_EQ(out.breaktrace->seq, 4711u);
  EXPECT_EQ(out.breaktrace->latency_ns, 2'345'678);
  EXPECT_TRUE(out.breaktrace->tracing_stopped);
  EXPECT_EQ(out.dma_latency, expected.dma_latency);
  EXPECT_EQ(out.samples_error, expected.samples_error);
  // What measure does not know stays for the caller to fill.
  EXPECT_TRUE(out.rtpulse_version.empty());
  EXPECT_TRUE(out.cmdline.empty());
  EXPECT_EQ(out.return_code, 0);
}

TEST(LatencyRecordTest, NoBreakStaysAbsent) {
  measure::RunRecord run;
  run.paths.push_back(FilledPath("abs", 1));
  EXPECT_FALSE(ToLatencyRun(std::move(run)).breaktrace.has_value());
}

TEST(NoSamplesLogClaimedTest, ClearsTheLoggedCountsAndRenamesTheFullRingWarning) {
  results::LatencyRun run;
  run.paths.resize(2);
  for (auto& path : run.paths) {
    path.probes.resize(2);
    for (auto& p : path.probes) p.samples_logged = 5000;
  }
  run.warnings = {
      "abs thread 1: 12 samples not logged (ring full: the writer or the disk fell behind); the "
      "explainer saw the rest",
      "running without mlockall"};
  NoSamplesLogClaimed(run);
  for (const auto& path : run.paths) {
    for (const auto& p : path.probes) EXPECT_EQ(p.samples_logged, 0u);
  }
  EXPECT_EQ(run.warnings[0],
            "abs thread 1: 12 samples not seen by --explain (ring full: the explainer fell "
            "behind); the explainer saw the rest");
  EXPECT_EQ(run.warnings[1], "running without mlockall");
}

}  // namespace
}  // namespace rtpulse::suite
