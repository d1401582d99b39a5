#include "export/latency_metrics.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>

namespace rtpulse::exporter {
namespace {

TEST(LatencyMetricsTest, BoundsRunFromOneMicrosecondToOneHundredMillisecondsTenADecade) {
  const auto b = LatencyBucketBoundsNs();
  ASSERT_EQ(b.size(), 51U);
  EXPECT_EQ(b[0], 1'000);
  EXPECT_EQ(b[1], 1'250);
  EXPECT_EQ(b[2], 1'600);
  EXPECT_EQ(b[9], 8'000);
  EXPECT_EQ(b[10], 10'000);
  EXPECT_EQ(b[24], 250'000);
  EXPECT_EQ(b[50], 100'000'000);
  for (size_t i = 1; i < b.size(); ++i) {
    EXPECT_GT(b[i], b[i - 1]);
    EXPECT_LE(static_cast<double>(b[i]) / static_cast<double>(b[i - 1]), 1.28 + 1e-12) << i;
  }
}

TEST(LatencyMetricsTest, CumulativeCountsAreExactAtBoundsThatAreRtpulseBucketEdges) {
  Histogram h;
  // Below 1024 ns every value has its own bucket: 1000 is at or below the 1 us bound.
  for (int64_t v : {-5, 0, 999, 1000, 1001}) h.Record(v);
  // 1250 sits in rtpulse's bucket [1250, 1251] (2 ns wide above 1024): that bucket straddles
  // the 1.25 us bound and counts above it, as documented.
  h.Record(1249);
  h.Record(1250);
  // 12496..12511 is one bucket (16 ns wide) across the 12.5 us bound: counted above it.
  h.Record(12'500);
  h.Record(12'512);       // the next bucket: above 12.5 us for certain
  h.Record(150'000'000);  // above the last bound: +Inf only
  const auto b = LatencyBucketBoundsNs();
  const std::vector<uint64_t> c = CumulativeCounts(h, b);
  ASSERT_EQ(c.size(), b.size() + 1);
  EXPECT_EQ(c[0], 4U);  // -5, 0, 999, 1000 <= 1 us
  EXPECT_EQ(c[1], 6U);  // + 1001, 1249 <= 1.25 us; 1250 counted above
  EXPECT_EQ(c[2], 7U);  // + 1250 <= 1.6 us
  const size_t at_12_5us = static_cast<size_t>(std::find(b.begin(), b.end(), 12'500) - b.begin());
  EXPECT_EQ(c[at_12_5us], 7U);      // 12500 counted above its straddled bound ...
  EXPECT_EQ(c[at_12_5us + 1], 9U);  // ... and at 16 us with 12512
  EXPECT_EQ(c[b.size() - 1], 9U);   // <= 100 ms
  EXPECT_EQ(c.back(), 10U);         // +Inf: everything
}

TEST(LatencyMetricsTest, EmptyHistogramHasZeroEverywhere) {
  Histogram h;
  const auto c = CumulativeCounts(h, LatencyBucketBoundsNs());
  EXPECT_TRUE(std::all_of(c.begin(), c.end(), [](uint64_t n) { return n == 0; }));
}

TEST(LatencyMetricsTest, FamiliesCarryLabelsCountsAndExactExtremes) {
  results::ProbeResult p;
  p.index = 1;
  p.cpu = 3;
  p.wake = "abs";
  p.interval_ns = 1'000'000;
  p.missed_activations = 2;
  p.skipped_periods = 5;
  p.injections = 7;
  // Inside rtpulse's buckets [1900, 1901], [3100, 3103] and [38976, 39039]: all below a bound.
  for (int64_t v : {1'900, 3'100, 39'000}) p.histogram.Record(v);
  std::vector<MetricFamily> out;
  AppendLatencyFamilies({{ProbeLabels(p), &p}}, true, out);
  const std::string text = Render(out, ExpositionFormat::kText);
  const std::string labels = "cpu=\"3\",thread=\"1\",wake=\"abs\"";
  for (const std::string& line : {
           "rtpulse_latency_seconds_bucket{" + labels + ",le=\"2e-06\"} 1",
           "rtpulse_latency_seconds_bucket{" + labels + ",le=\"3.2e-06\"} 2",
           "rtpulse_latency_seconds_bucket{" + labels + ",le=\"4e-05\"} 3",
           "rtpulse_latency_seconds_bucket{" + labels + ",le=\"+Inf\"} 3",
           "rtpulse_latency_seconds_sum{" + labels + "} 4.4e-05",
           "rtpulse_latency_seconds_count{" + labels + "} 3",
           "rtpulse_latency_min_seconds{" + labels + "} 1.9e-06",
           "rtpulse_latency_max_seconds{" + labels + "} 3.9e-05",
           // Nearest rank 2 of 3: the upper edge of 3100's bucket.
           "rtpulse_latency_percentile_seconds{" + labels + ",percentile=\"50\"} 3.103e-06",
           "rtpulse_latency_percentile_seconds{" + labels + ",percentile=\"99.99\"} 3.9e-05",
           "rtpulse_missed_activations_total{" + labels + "} 2",
           "rtpulse_skipped_periods_total{" + labels + "} 5",
           "rtpulse_probe_interval_seconds{" + labels + "} 0.001",
           "rtpulse_probe_degraded{" + labels + "} 0",
           "rtpulse_injected_delays_total{" + labels + "} 7",
       }) {
    EXPECT_NE(text.find(line + "\n"), std::string::npos) << line << "\n" << text;
  }
}

TEST(LatencyMetricsTest, ProbeWithoutSamplesHasNoExtremesButItsCounters) {
  results::ProbeResult p;
  p.cpu = -1;
  p.wake = "timerfd";
  std::vector<MetricFamily> out;
  AppendLatencyFamilies({{ProbeLabels(p), &p}}, false, out);
  const std::string text = Render(out, ExpositionFormat::kText);
  EXPECT_EQ(text.find("rtpulse_latency_max_seconds{"), std::string::npos);
  EXPECT_EQ(text.find("rtpulse_latency_percentile_seconds{"), std::string::npos);
  EXPECT_EQ(text.find("rtpulse_injected_delays"), std::string::npos);
  EXPECT_NE(
      text.find("rtpulse_latency_seconds_count{cpu=\"any\",thread=\"0\",wake=\"timerfd\"} 0\n"),
      std::string::npos);
  EXPECT_NE(text.find("# TYPE rtpulse_latency_max_seconds gauge\n"), std::string::npos);
}

TEST(LatencyMetricsTest, UncountedMissesAreLeftOutNotZero) {
  results::ProbeResult p;
  p.misses_not_counted = true;
  p.histogram.Record(5'000);
  std::vector<MetricFamily> out;
  AppendLatencyFamilies({{ProbeLabels(p), &p}}, false, out);
  const std::string text = Render(out, ExpositionFormat::kText);
  EXPECT_EQ(text.find("rtpulse_missed_activations_total{"), std::string::npos);
  EXPECT_EQ(text.find("rtpulse_skipped_periods_total{"), std::string::npos);
}

}  // namespace
}  // namespace rtpulse::exporter
