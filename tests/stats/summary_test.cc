#include "stats/summary.h"

#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <set>
#include <string>

namespace rtpulse::stats {
namespace {

TEST(SummarizeTest, EmptyHistogramIsAllZero) {
  const Summary s = Summarize(Histogram{});
  EXPECT_EQ(s.count, 0u);
  EXPECT_EQ(s.min_ns, 0);
  EXPECT_EQ(s.max_ns, 0);
  EXPECT_EQ(s.mean_ns, 0.0);
  EXPECT_EQ(s.stddev_ns, 0.0);
  for (int64_t p : s.percentile_ns) EXPECT_EQ(p, 0);
  EXPECT_EQ(s.negative, 0u);
  EXPECT_EQ(s.top_bucket, 0u);
}

TEST(SummarizeTest, Uniform1To1000IsExact) {
  Histogram h;
  for (int64_t v = 1; v <= 1000; ++v) h.Record(v);
  const Summary s = Summarize(h);
  EXPECT_EQ(s.count, 1000u);
  EXPECT_EQ(s.min_ns, 1);
  EXPECT_EQ(s.max_ns, 1000);
  EXPECT_EQ(s.mean_ns, 500.5);
  EXPECT_DOUBLE_EQ(s.stddev_ns, std::sqrt((1000.0 * 1000.0 - 1.0) / 12.0));  // population
  // p50, p90, p99, p99.9, p99.99, p99.999: ranks 500, 900, 990, 999, 1000, 1000; all values
  // below 1024 ns have their own bucket.
  const std::array<int64_t, 6> want = {500, 900, 990, 999, 1000, 1000};
  EXPECT_EQ(s.percentile_ns, want);
  EXPECT_EQ(s.negative, 0u);
  EXPECT_EQ(s.top_bucket, 0u);
}

TEST(SummarizeTest, PercentilesAreBucketUpperEdgesClampedToMax) {
  Histogram h;
  h.RecordN(100'000, 990);   // bucket [99968, 100095]
  h.RecordN(2'000'000, 10);  // max
  const Summary s = Summarize(h);
  EXPECT_EQ(s.percentile_ns[0], 100'095);    // p50: never below the sample, < 0.2 % above
  EXPECT_EQ(s.percentile_ns[2], 100'095);    // p99: rank 990
  EXPECT_EQ(s.percentile_ns[3], 2'000'000);  // p99.9: rank 999, clamped to the exact max
  EXPECT_EQ(s.max_ns, 2'000'000);
  EXPECT_EQ(s.mean_ns, (990.0 * 100'000 + 10.0 * 2'000'000) / 1000.0);
}

TEST(SummarizeTest, NegativeAndTopBucketCounts) {
  Histogram h;
  const int64_t huge = (int64_t{1} << 40) + 7;
  for (int64_t v : {int64_t{-3}, int64_t{-1}, int64_t{5}, huge}) h.Record(v);
  const Summary s = Summarize(h);
  EXPECT_EQ(s.count, 4u);
  EXPECT_EQ(s.negative, 2u);
  EXPECT_EQ(s.top_bucket, 1u);
  EXPECT_EQ(s.min_ns, -3);
  EXPECT_EQ(s.max_ns, huge);
  EXPECT_EQ(s.mean_ns, static_cast<double>((int64_t{1} << 38) + 2));  // (2^40 + 8) / 4
  EXPECT_EQ(s.percentile_ns[0], -1);                                  // rank 2
  EXPECT_EQ(s.percentile_ns[1], huge);
}

TEST(SummarizeTest, OneSample) {
  Histogram h;
  h.Record(4321);
  const Summary s = Summarize(h);
  EXPECT_EQ(s.count, 1u);
  EXPECT_EQ(s.mean_ns, 4321.0);
  EXPECT_EQ(s.stddev_ns, 0.0);
  for (int64_t p : s.percentile_ns) EXPECT_EQ(p, 4321);
}

TEST(PercentileLabelTest, EveryReportedPercentileHasItsLabel) {
  EXPECT_EQ(PercentileLabel(50.0), "p50");
  EXPECT_EQ(PercentileLabel(90.0), "p90");
  EXPECT_EQ(PercentileLabel(95.0), "p95");
  EXPECT_EQ(PercentileLabel(99.0), "p99");
  EXPECT_EQ(PercentileLabel(99.9), "p99.9");
  EXPECT_EQ(PercentileLabel(99.99), "p99.99");
  EXPECT_EQ(PercentileLabel(99.999), "p99.999");
  std::set<std::string_view> labels;
  for (double p : kPercentiles) labels.insert(PercentileLabel(p));
  EXPECT_EQ(labels.size(), kPercentiles.size());  // distinct: they become JSON keys
}

TEST(PercentileLabelTest, UnknownPercentilesAreNeverMislabelled) {
  std::set<std::string_view> known;
  for (double p : {50.0, 90.0, 95.0, 99.0, 99.9, 99.99, 99.999}) known.insert(PercentileLabel(p));
  for (double p : {0.0, 75.0, 99.5, 99.95, 100.0, 99.9999}) {
    EXPECT_EQ(known.count(PercentileLabel(p)), 0u) << p;
  }
}

TEST(PercentileMethodTest, StatementMatchesTheHistogramBound) {
  const std::string method(kPercentileMethod);
  EXPECT_NE(method.find("ceil(p/100*N)"), std::string::npos);
  EXPECT_NE(method.find("0.195%"), std::string::npos);
  EXPECT_NEAR(Histogram::kMaxRelativeError * 100, 0.195, 0.0005);
  EXPECT_NE(method.find("512 ns"), std::string::npos);
  EXPECT_EQ(Histogram::kSubBuckets, 512);
}

}  // namespace
}  // namespace rtpulse::stats
