#include "core/histogram.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <limits>
#include <random>
#include <thread>
#include <tuple>
#include <vector>

namespace rtpulse {
namespace {

using Range = Histogram::Range;

constexpr int64_t kInt64Max = std::numeric_limits<int64_t>::max();
constexpr int64_t kInt64Min = std::numeric_limits<int64_t>::min();
constexpr int64_t kTop = int64_t{1} << Histogram::kTopExponent;  // 2^40 ns

Range RangeOf(uint64_t magnitude) {
  return Histogram::MagnitudeRange(Histogram::IndexOf(magnitude));
}

// The stated bound: lo <= v <= hi; exact below 512 ns; otherwise (hi - lo + 1) / lo <= 1/512.
void ExpectBucketBound(uint64_t v) {
  SCOPED_TRACE(testing::Message() << "magnitude " << v);
  const size_t index = Histogram::IndexOf(v);
  const Range r = Histogram::MagnitudeRange(index);
  if (v >= static_cast<uint64_t>(kTop)) {
    EXPECT_EQ(index, Histogram::kTopIndex);
    EXPECT_EQ(r.lo, kTop);
    EXPECT_EQ(r.hi, kInt64Max);
    return;
  }
  ASSERT_LT(index, Histogram::kTopIndex);
  const auto sv = static_cast<int64_t>(v);
  EXPECT_LE(r.lo, sv);
  EXPECT_GE(r.hi, sv);
  if (v < 512) {
    EXPECT_EQ(r.lo, sv);
    EXPECT_EQ(r.hi, sv);
  } else {
    // Integer form of (hi - lo + 1) / lo <= 1/512, no rounding.
    EXPECT_LE((r.hi - r.lo + 1) * 512, r.lo);
  }
}

// Exact nearest rank for p given in thousandths of a percent: ceil(p/100 * n), at least 1.
uint64_t RankForMilliPercent(uint64_t p_milli, uint64_t n) {
  const uint64_t rank = (p_milli * n + 99'999) / 100'000;
  return std::max<uint64_t>(rank, 1);
}

// Histogram percentile `got` for a true sample `want`: never below it, at most 1/512 of
// |want| above it (exact below 512 ns).
void ExpectWithinBound(int64_t got, int64_t want) {
  EXPECT_GE(got, want);
  const int64_t magnitude = want < 0 ? -want : want;
  if (magnitude < 512) {
    EXPECT_EQ(got, want);
  } else {
    EXPECT_LE((got - want) * 512, magnitude) << "got " << got << " want " << want;
  }
}

std::vector<std::tuple<Range, uint64_t>> Buckets(const Histogram& h) {
  std::vector<std::tuple<Range, uint64_t>> out;
  h.ForEachBucket([&](Range r, uint64_t c) { out.emplace_back(r, c); });
  return out;
}

void ExpectSameBuckets(const Histogram& a, const Histogram& b) {
  const auto ba = Buckets(a);
  const auto bb = Buckets(b);
  ASSERT_EQ(ba.size(), bb.size());
  for (size_t i = 0; i < ba.size(); ++i) {
    EXPECT_EQ(std::get<0>(ba[i]).lo, std::get<0>(bb[i]).lo) << "bucket " << i;
    EXPECT_EQ(std::get<0>(ba[i]).hi, std::get<0>(bb[i]).hi) << "bucket " << i;
    EXPECT_EQ(std::get<1>(ba[i]), std::get<1>(bb[i])) << "bucket " << i;
  }
}

void ExpectSameHistogram(const Histogram& a, const Histogram& b) {
  EXPECT_EQ(a.count(), b.count());
  EXPECT_EQ(a.min(), b.min());
  EXPECT_EQ(a.max(), b.max());
  EXPECT_EQ(a.sum(), b.sum());
  EXPECT_TRUE(a.sum_of_squares() == b.sum_of_squares());
  EXPECT_EQ(a.negative_count(), b.negative_count());
  EXPECT_EQ(a.top_bucket_count(), b.top_bucket_count());
  ExpectSameBuckets(a, b);
}

// ---- Layout: error bound, inverse functions, contiguity --------------------------------

TEST(HistogramLayoutTest, ConstantsMatchTheDocumentedLayout) {
  EXPECT_EQ(Histogram::kSubBuckets, 512);
  EXPECT_EQ(Histogram::kTopIndex, 16384u);
  EXPECT_EQ(Histogram::kBucketsPerSign, 16385u);
  EXPECT_DOUBLE_EQ(Histogram::kMaxRelativeError, 1.0 / 512.0);
}

TEST(HistogramLayoutTest, EveryValueBelow4096IsInsideItsBucket) {
  for (uint64_t v = 0; v < 4096; ++v) ExpectBucketBound(v);
}

TEST(HistogramLayoutTest, BoundHoldsGeometricallyFrom1nsTo60sAndBeyond) {
  // Steps of 0.1 % from 1 ns to 2^41 ns (about 37 minutes), checking v-1, v, v+1.
  for (double x = 1; x < 2.2e12; x *= 1.001) {
    const auto v = static_cast<uint64_t>(x);
    for (uint64_t d : {v - 1, v, v + 1}) ExpectBucketBound(d);
  }
  for (uint64_t v : {uint64_t{60'000'000'000}, uint64_t{60'000'000'001}, uint64_t{59'999'999'999},
                     uint64_t{3'600'000'000'000}, uint64_t{86'400'000'000'000}}) {
    ExpectBucketBound(v);
  }
}

TEST(HistogramLayoutTest, BoundHoldsAroundEveryPowerOfTwo) {
  for (int e = 0; e < 64; ++e) {
    const uint64_t p = uint64_t{1} << e;
    ExpectBucketBound(p);
    ExpectBucketBound(p - 1);
    ExpectBucketBound(p + 1);
    ExpectBucketBound(p + (p >> 1));
  }
  ExpectBucketBound(std::numeric_limits<uint64_t>::max());
}

TEST(HistogramLayoutTest, BoundHoldsForRandomLogUniformValues) {
  std::mt19937_64 rng(12345);
  std::uniform_real_distribution<double> exponent(0.0, 42.0);
  for (int i = 0; i < 200'000; ++i) {
    ExpectBucketBound(static_cast<uint64_t>(std::exp2(exponent(rng))));
  }
}

TEST(HistogramLayoutTest, IndexOfAndMagnitudeRangeAreInverseAndContiguous) {
  int64_t expected_lo = 0;
  for (size_t i = 0; i <= Histogram::kTopIndex; ++i) {
    const Range r = Histogram::MagnitudeRange(i);
    ASSERT_EQ(r.lo, expected_lo) << "gap or overlap before bucket " << i;
    ASSERT_LE(r.lo, r.hi) << "bucket " << i;
    ASSERT_EQ(Histogram::IndexOf(static_cast<uint64_t>(r.lo)), i) << "bucket " << i;
    ASSERT_EQ(Histogram::IndexOf(static_cast<uint64_t>(r.hi)), i) << "bucket " << i;
    if (i == Histogram::kTopIndex) break;
    expected_lo = r.hi + 1;
  }
  EXPECT_EQ(expected_lo, kTop);
  EXPECT_EQ(Histogram::MagnitudeRange(Histogram::kTopIndex).hi, kInt64Max);
}

TEST(HistogramLayoutTest, HugeMagnitudesGoToTheTopBucket) {
  EXPECT_EQ(Histogram::IndexOf(static_cast<uint64_t>(kTop) - 1), Histogram::kTopIndex - 1);
  EXPECT_EQ(Histogram::IndexOf(static_cast<uint64_t>(kTop)), Histogram::kTopIndex);
  EXPECT_EQ(Histogram::IndexOf(uint64_t{1} << 63), Histogram::kTopIndex);
  EXPECT_EQ(Histogram::IndexOf(std::numeric_limits<uint64_t>::max()), Histogram::kTopIndex);
  const Range below_top = RangeOf(static_cast<uint64_t>(kTop) - 1);
  EXPECT_EQ(below_top.hi, kTop - 1);
  EXPECT_EQ(below_top.lo, kTop - (int64_t{1} << 30));
}

// ---- Recording: extremes, counts, min/max ---------------------------------------------

TEST(HistogramTest, EmptyHistogramReportsZeroes) {
  Histogram h;
  EXPECT_EQ(h.count(), 0u);
  EXPECT_EQ(h.min(), 0);
  EXPECT_EQ(h.max(), 0);
  EXPECT_EQ(h.sum(), 0);
  EXPECT_TRUE(h.sum_of_squares() == 0);
  EXPECT_EQ(h.negative_count(), 0u);
  EXPECT_EQ(h.top_bucket_count(), 0u);
  EXPECT_EQ(h.Mean(), 0.0);
  EXPECT_EQ(h.StdDev(), 0.0);
  EXPECT_EQ(h.Percentile(0), 0);
  EXPECT_EQ(h.Percentile(50), 0);
  EXPECT_EQ(h.Percentile(100), 0);
  EXPECT_EQ(h.ValueAtRank(1), 0);
  EXPECT_EQ(h.CountAtOrAbove(kInt64Min), 0u);
  EXPECT_TRUE(Buckets(h).empty());
  EXPECT_EQ(h.LivePercentile(99), 0);
}

TEST(HistogramTest, SmallAndTopBucketExtremesAreCounted) {
  Histogram h;
  for (int64_t v :
       {int64_t{0}, int64_t{1}, int64_t{511}, int64_t{512}, kTop - 1, kTop, kTop + 12345,
        int64_t{-1}, int64_t{-511}, int64_t{-512}, -(kTop - 1), -kTop, -(kTop + 1)}) {
    h.Record(v);
  }
  EXPECT_EQ(h.count(), 13u);
  EXPECT_EQ(h.negative_count(), 6u);
  EXPECT_EQ(h.top_bucket_count(), 4u);  // kTop, kTop + 12345, -kTop, -(kTop + 1)
  EXPECT_EQ(h.min(), -(kTop + 1));
  EXPECT_EQ(h.max(), kTop + 12345);
  EXPECT_EQ(h.sum(), 0 + 1 + 511 + 512 + (kTop - 1) + kTop + (kTop + 12345) - 1 - 511 - 512 -
                         (kTop - 1) - kTop - (kTop + 1));
  uint64_t seen = 0;
  h.ForEachBucket([&](Range, uint64_t c) { seen += c; });
  EXPECT_EQ(seen, 13u);
  EXPECT_EQ(h.Percentile(100), kTop + 12345);  // top bucket upper edge clamped to exact max
  EXPECT_EQ(h.CountAtOrAbove(kTop), 2u);
  EXPECT_EQ(h.CountAtOrAbove(kTop - 1), 3u);
}

TEST(HistogramTest, Int64ExtremesAreCountedWithExactMinAndMax) {
  // INT64_MAX and INT64_MIN together with only small values: the exact sums stay in range
  // (sum = -1 + small, sum of squares < 2^127), so this exercises the magnitude arithmetic
  // (INT64_MIN has no positive counterpart) without overflowing the accumulators.
  Histogram h;
  for (int64_t v : {kInt64Min, kInt64Max, int64_t{0}, int64_t{1}, int64_t{511}, int64_t{512},
                    int64_t{-1}, int64_t{-512}}) {
    h.Record(v);
  }
  EXPECT_EQ(h.count(), 8u);
  EXPECT_EQ(h.negative_count(), 3u);
  EXPECT_EQ(h.top_bucket_count(), 2u);
  EXPECT_EQ(h.min(), kInt64Min);
  EXPECT_EQ(h.max(), kInt64Max);
  EXPECT_EQ(h.sum(), -1 + 0 + 1 + 511 + 512 - 1 - 512);
  EXPECT_EQ(h.Percentile(100), kInt64Max);
  // Rank 1 is INT64_MIN; it is reported as its bucket's upper edge, never below the sample.
  EXPECT_EQ(h.ValueAtRank(1), -kTop);
  EXPECT_EQ(h.ValueAtRank(2), -512);
  EXPECT_EQ(h.ValueAtRank(3), -1);
  EXPECT_EQ(h.ValueAtRank(4), 0);
  EXPECT_EQ(h.ValueAtRank(7), 512);
  EXPECT_EQ(h.CountAtOrAbove(kInt64Min), 8u);
  EXPECT_EQ(h.CountAtOrAbove(0), 5u);
  EXPECT_EQ(h.CountAtOrAbove(kTop), 1u);
}

TEST(HistogramTest, MinAndMaxAreExactNotBucketEdges) {
  Histogram h;
  h.Record(1'000'003);
  h.Record(5'000'001);
  h.Record(2'000'000);
  EXPECT_EQ(h.min(), 1'000'003);
  EXPECT_EQ(h.max(), 5'000'001);
  EXPECT_EQ(h.Percentile(100), 5'000'001);
  EXPECT_NE(RangeOf(5'000'001).hi, 5'000'001);  // so the clamp above is what made it exact
}

TEST(HistogramTest, FirstNegativeValueSetsMinAndMax) {
  Histogram h;
  h.Record(-5);
  EXPECT_EQ(h.min(), -5);
  EXPECT_EQ(h.max(), -5);
  h.Record(-9);
  h.Record(-2);
  EXPECT_EQ(h.min(), -9);
  EXPECT_EQ(h.max(), -2);
  EXPECT_EQ(h.negative_count(), 3u);
}

TEST(HistogramTest, RecordNEqualsRepeatedRecord) {
  Histogram a;
  Histogram b;
  for (int i = 0; i < 7; ++i) a.Record(123'456);
  for (int i = 0; i < 3; ++i) a.Record(-42);
  b.RecordN(123'456, 7);
  b.RecordN(-42, 3);
  ExpectSameHistogram(a, b);
  EXPECT_EQ(b.count(), 10u);
  EXPECT_EQ(b.negative_count(), 3u);
  EXPECT_EQ(b.sum(), 7 * 123'456 - 3 * 42);
  EXPECT_TRUE(b.sum_of_squares() == Int128{7} * 123'456 * 123'456 + Int128{3} * 42 * 42);
}

TEST(HistogramTest, RecordManyEqualsRepeatedRecord) {
  // Both signs, the top bucket, and a batch split in uneven parts (INT64_MIN and
  // INT64_MAX together would overflow the 128-bit sum of squares).
  const std::vector<int64_t> values = {5,       -7,  1'000'000,  INT64_MAX, -(int64_t{1} << 50),
                                       0,       511, 512,        -1'025,    int64_t{1} << 41,
                                       123'456, -42, 999'999'999};
  Histogram a;
  Histogram b;
  for (int64_t v : values) a.Record(v);
  b.RecordMany(values.data(), 4);
  b.RecordMany(values.data() + 4, 0);
  b.RecordMany(values.data() + 4, values.size() - 4);
  ExpectSameHistogram(a, b);
  EXPECT_EQ(b.count(), values.size());
  EXPECT_EQ(b.negative_count(), a.negative_count());
  EXPECT_EQ(b.min(), -(int64_t{1} << 50));
  EXPECT_EQ(b.max(), INT64_MAX);
  EXPECT_EQ(b.sum(), a.sum());
  EXPECT_TRUE(b.sum_of_squares() == a.sum_of_squares());
  EXPECT_EQ(b.top_bucket_count(), a.top_bucket_count());
  // All non-negative (the common case, without the sign test per value), after the mix.
  const std::vector<int64_t> positive = {0, 3, 511, 512, 20'000, 20'001, int64_t{1} << 45};
  for (int64_t v : positive) a.Record(v);
  b.RecordMany(positive.data(), positive.size());
  ExpectSameHistogram(a, b);
  Histogram c;
  Histogram d;
  for (int64_t v : positive) c.Record(v);
  d.RecordMany(positive.data(), positive.size());
  ExpectSameHistogram(c, d);
  // INT64_MIN alone (with INT64_MAX the 128-bit sum of squares would overflow).
  const int64_t lowest = INT64_MIN;
  Histogram e;
  Histogram f;
  e.Record(lowest);
  f.RecordMany(&lowest, 1);
  ExpectSameHistogram(e, f);
  EXPECT_EQ(f.min(), INT64_MIN);
}

TEST(HistogramTest, RecordNWithZeroCountChangesNothing) {
  Histogram h;
  h.RecordN(999, 0);
  EXPECT_EQ(h.count(), 0u);
  EXPECT_EQ(h.min(), 0);
  EXPECT_EQ(h.max(), 0);
  EXPECT_TRUE(Buckets(h).empty());
  h.Record(10);
  h.RecordN(-999, 0);
  h.RecordN(999, 0);
  EXPECT_EQ(h.count(), 1u);
  EXPECT_EQ(h.min(), 10);
  EXPECT_EQ(h.max(), 10);
  EXPECT_EQ(h.negative_count(), 0u);
}

TEST(HistogramTest, RecordNWithLargeCounts) {
  Histogram h;
  h.RecordN(1000, 1'000'000'000'000);
  h.RecordN(3000, 1'000'000'000'000);
  EXPECT_EQ(h.count(), 2'000'000'000'000u);
  EXPECT_EQ(h.sum(), 4'000'000'000'000'000);
  EXPECT_DOUBLE_EQ(h.Mean(), 2000.0);
  EXPECT_DOUBLE_EQ(h.StdDev(), 1000.0);
  EXPECT_EQ(h.Percentile(50), 1000);
  EXPECT_EQ(h.Percentile(50.0001), 3000);
  EXPECT_EQ(h.CountAtOrAbove(1001), 1'000'000'000'000u);
}

// ---- Merge and Reset -------------------------------------------------------------------

std::vector<int64_t> MixedSample(uint64_t seed, size_t n) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int64_t> small(-2000, 5000);
  std::uniform_int_distribution<int64_t> large(-int64_t{1} << 41, int64_t{1} << 41);
  std::vector<int64_t> out;
  for (size_t i = 0; i < n; ++i) out.push_back(i % 10 == 0 ? large(rng) : small(rng));
  return out;
}

TEST(HistogramMergeTest, MergeEqualsRecordingEverythingIntoOne) {
  Histogram a;
  Histogram b;
  Histogram all;
  for (int64_t v : MixedSample(1, 5000)) {
    a.Record(v);
    all.Record(v);
  }
  for (int64_t v : MixedSample(2, 7000)) {
    b.Record(v);
    all.Record(v);
  }
  a.Merge(b);
  ExpectSameHistogram(a, all);
  EXPECT_EQ(a.count(), 12'000u);
  EXPECT_GT(a.top_bucket_count(), 0u);
  EXPECT_GT(a.negative_count(), 0u);
  for (double p : {0.0, 1.0, 50.0, 99.0, 99.9, 100.0})
    EXPECT_EQ(a.Percentile(p), all.Percentile(p));
}

TEST(HistogramMergeTest, MergeIntoEmptyTakesMinAndMaxFromTheOther) {
  Histogram source;
  source.Record(700);
  source.Record(900);
  Histogram empty;
  empty.Merge(source);
  ExpectSameHistogram(empty, source);
  EXPECT_EQ(empty.min(), 700);  // not 0 from the empty side
  EXPECT_EQ(empty.max(), 900);

  Histogram negative;
  negative.Record(-700);
  negative.Record(-900);
  Histogram empty2;
  empty2.Merge(negative);
  EXPECT_EQ(empty2.min(), -900);
  EXPECT_EQ(empty2.max(), -700);  // not 0 from the empty side
  EXPECT_EQ(empty2.negative_count(), 2u);
}

TEST(HistogramMergeTest, MergeEmptyIntoFullChangesNothing) {
  Histogram full;
  for (int64_t v : MixedSample(3, 1000)) full.Record(v);
  Histogram copy;
  copy.Merge(full);
  full.Merge(Histogram{});
  ExpectSameHistogram(full, copy);
}

TEST(HistogramMergeTest, MergeAcrossSignsKeepsExactExtremesAndSums) {
  Histogram pos;
  pos.Record(10);
  pos.Record(kTop + 5);
  Histogram neg;
  neg.Record(-3);
  neg.Record(-kTop);
  pos.Merge(neg);
  EXPECT_EQ(pos.count(), 4u);
  EXPECT_EQ(pos.min(), -kTop);
  EXPECT_EQ(pos.max(), kTop + 5);
  EXPECT_EQ(pos.sum(), 10 + 5 - 3);
  EXPECT_TRUE(pos.sum_of_squares() ==
              Int128{100} + Int128{kTop + 5} * (kTop + 5) + 9 + Int128{kTop} * kTop);
  EXPECT_EQ(pos.negative_count(), 2u);
  EXPECT_EQ(pos.top_bucket_count(), 2u);
}

TEST(HistogramMergeTest, MergeTwiceCountsTwice) {
  Histogram src;
  src.Record(5);
  Histogram dst;
  dst.Merge(src);
  dst.Merge(src);
  EXPECT_EQ(dst.count(), 2u);
  EXPECT_EQ(dst.sum(), 10);
  EXPECT_EQ(dst.CountAtOrAbove(5), 2u);
}

TEST(HistogramTest, ResetReturnsToEmpty) {
  Histogram h;
  for (int64_t v : MixedSample(4, 2000)) h.Record(v);
  h.Reset();
  ExpectSameHistogram(h, Histogram{});
  EXPECT_EQ(h.Percentile(50), 0);
  // After a reset the first value defines min and max again (not the stale 0).
  h.Record(42);
  EXPECT_EQ(h.min(), 42);
  EXPECT_EQ(h.max(), 42);
  EXPECT_EQ(h.count(), 1u);
  EXPECT_EQ(Buckets(h).size(), 1u);
}

// ---- Mean and standard deviation -------------------------------------------------------

TEST(HistogramMomentsTest, MeanAndPopulationStdDevOnKnownData) {
  Histogram h;
  for (int64_t v : {2, 4, 4, 4, 5, 5, 7, 9}) h.Record(v);
  EXPECT_EQ(h.Mean(), 5.0);
  EXPECT_EQ(h.StdDev(), 2.0);  // population (divide by N); the sample stddev would be 2.138
}

TEST(HistogramMomentsTest, NegativeAndMixedData) {
  Histogram h;
  for (int64_t v : {-2, -4, -4, -4, -5, -5, -7, -9}) h.Record(v);
  EXPECT_EQ(h.Mean(), -5.0);
  EXPECT_EQ(h.StdDev(), 2.0);

  Histogram m;
  m.Record(-3);
  m.Record(3);
  EXPECT_EQ(m.Mean(), 0.0);
  EXPECT_EQ(m.StdDev(), 3.0);

  Histogram half;
  half.Record(1);
  half.Record(2);
  EXPECT_EQ(half.Mean(), 1.5);
  EXPECT_EQ(half.StdDev(), 0.5);
}

TEST(HistogramMomentsTest, OneSampleAndAllEqual) {
  Histogram one;
  one.Record(777'777);
  EXPECT_EQ(one.Mean(), 777'777.0);
  EXPECT_EQ(one.StdDev(), 0.0);

  Histogram equal;
  equal.RecordN(1'234'567, 100'000);
  EXPECT_EQ(equal.Mean(), 1'234'567.0);
  EXPECT_EQ(equal.StdDev(), 0.0);
}

TEST(HistogramMomentsTest, ExactForLargeValuesWithSmallSpread) {
  // 10 s latencies (a stalled machine) with a 2 ns spread: the sums of squares are far above
  // 2^64, where a long double difference of large sums loses the spread entirely.
  constexpr int64_t kBase = 10'000'000'000;
  Histogram h;
  for (int64_t v : {2, 4, 4, 4, 5, 5, 7, 9}) h.Record(kBase + v);
  EXPECT_EQ(h.Mean(), static_cast<double>(kBase + 5));
  EXPECT_EQ(h.StdDev(), 2.0);

  Histogram equal;
  equal.RecordN(60'000'000'000, 1'000'000);  // one million samples of 60 s
  EXPECT_EQ(equal.StdDev(), 0.0);
}

// ---- Percentiles -----------------------------------------------------------------------

// Percentages as thousandths, so the expected rank is computed in exact integer arithmetic.
constexpr uint64_t kMilliPercents[] = {0,      1,      100,    1000,   10'000, 25'000,
                                       33'333, 50'000, 75'000, 90'000, 95'000, 99'000,
                                       99'900, 99'990, 99'999, 100'000};

void CheckUniform(uint64_t n) {
  Histogram h;
  for (uint64_t v = 1; v <= n; ++v) h.Record(static_cast<int64_t>(v));
  std::vector<uint64_t> milli(std::begin(kMilliPercents), std::end(kMilliPercents));
  for (uint64_t p = 0; p <= 100; ++p) milli.push_back(p * 1000);
  for (uint64_t pm : milli) {
    const double p = static_cast<double>(pm) / 1000.0;
    const auto want = static_cast<int64_t>(RankForMilliPercent(pm, n));  // value == rank
    SCOPED_TRACE(testing::Message() << "N=" << n << " p=" << p << " rank=" << want);
    const int64_t got = h.Percentile(p);
    ExpectWithinBound(got, want);
    // And exactly the documented value: the upper edge of want's bucket, clamped to max.
    EXPECT_EQ(got,
              std::min<int64_t>(RangeOf(static_cast<uint64_t>(want)).hi, static_cast<int64_t>(n)));
  }
}

TEST(HistogramPercentileTest, Uniform1To1000) {
  CheckUniform(1000);
}
TEST(HistogramPercentileTest, Uniform1To100000) {
  CheckUniform(100'000);
}

TEST(HistogramPercentileTest, UniformSpotValues) {
  Histogram h;
  for (int64_t v = 1; v <= 1000; ++v) h.Record(v);
  EXPECT_EQ(h.Percentile(0), 1);
  EXPECT_EQ(h.Percentile(0.1), 1);
  EXPECT_EQ(h.Percentile(0.15), 2);
  EXPECT_EQ(h.Percentile(10), 100);
  EXPECT_EQ(h.Percentile(50), 500);
  EXPECT_EQ(h.Percentile(50.01), 501);  // ceil(500.1)
  EXPECT_EQ(h.Percentile(99.9), 999);   // 99.9 * 1000 / 100 is 999.0000000000001 in doubles
  EXPECT_EQ(h.Percentile(99.91), 1000);
  EXPECT_EQ(h.Percentile(100), 1000);
  EXPECT_EQ(h.Percentile(-5), 1);      // clamped to p0
  EXPECT_EQ(h.Percentile(150), 1000);  // clamped to p100
}

TEST(HistogramPercentileTest, Uniform1To100000SpotValues) {
  Histogram h;
  for (int64_t v = 1; v <= 100'000; ++v) h.Record(v);
  EXPECT_EQ(h.Percentile(0.5), 500);  // below 512: exact
  EXPECT_EQ(h.Percentile(0.511), 511);
  EXPECT_EQ(h.Percentile(50), 50'047);       // 50000 is in the 64 ns bucket [49984, 50047]
  EXPECT_EQ(h.Percentile(99.999), 100'000);  // rank 99999 shares max's bucket: clamped to max
  EXPECT_EQ(h.Percentile(100), 100'000);
}

TEST(HistogramPercentileTest, TwoPointDistribution) {
  Histogram h;
  h.RecordN(100, 900);
  h.RecordN(1'000'000, 100);
  EXPECT_EQ(h.Percentile(0), 100);
  EXPECT_EQ(h.Percentile(50), 100);
  EXPECT_EQ(h.Percentile(90), 100);          // rank 900
  EXPECT_EQ(h.Percentile(90.1), 1'000'000);  // rank 901
  EXPECT_EQ(h.Percentile(99), 1'000'000);
  EXPECT_EQ(h.Percentile(100), 1'000'000);

  Histogram small;
  small.RecordN(7, 3);
  small.Record(300);
  EXPECT_EQ(small.Percentile(75), 7);
  EXPECT_EQ(small.Percentile(75.1), 300);
}

TEST(HistogramPercentileTest, AllEqualValues) {
  Histogram h;
  h.RecordN(123'457, 1000);  // not a bucket edge on either side
  for (double p : {0.0, 1.0, 50.0, 99.0, 99.999, 100.0}) EXPECT_EQ(h.Percentile(p), 123'457);
}

TEST(HistogramPercentileTest, OneSample) {
  Histogram h;
  h.Record(98'765);
  for (double p : {0.0, 50.0, 99.999, 100.0}) EXPECT_EQ(h.Percentile(p), 98'765);
  EXPECT_EQ(h.ValueAtRank(0), 98'765);  // rank clamped to 1
  EXPECT_EQ(h.ValueAtRank(5), 98'765);  // rank clamped to N
}

TEST(HistogramPercentileTest, P0AndP100AreMinAndMax) {
  Histogram h;
  for (int64_t v : {37, 5, 900, 12, 250}) h.Record(v);
  EXPECT_EQ(h.Percentile(0), 5);
  EXPECT_EQ(h.Percentile(100), 900);
}

TEST(HistogramPercentileTest, P99999BelowHundredThousandSamplesIsTheMax) {
  for (uint64_t n : {uint64_t{1}, uint64_t{10}, uint64_t{1000}, uint64_t{99'999}}) {
    Histogram h;
    for (uint64_t v = 1; v <= n; ++v) h.Record(static_cast<int64_t>(v) * 1000 + 7);
    EXPECT_EQ(h.Percentile(99.999), h.max()) << "N=" << n;
  }
  Histogram h;  // at N = 100000 the rank is 99999: no longer the max
  for (int64_t v = 1; v <= 100'000; ++v) h.Record(v < 100'000 ? 1 : 5000);
  EXPECT_EQ(h.Percentile(99.999), 1);
}

TEST(HistogramPercentileTest, NegativeOnlyData) {
  Histogram h;
  constexpr int64_t kN = 100'000;
  for (int64_t v = -kN; v <= -1; ++v) h.Record(v);
  EXPECT_EQ(h.min(), -kN);
  EXPECT_EQ(h.max(), -1);
  EXPECT_EQ(h.negative_count(), static_cast<uint64_t>(kN));
  for (uint64_t pm : kMilliPercents) {
    const uint64_t rank = RankForMilliPercent(pm, kN);
    const int64_t want = -kN - 1 + static_cast<int64_t>(rank);
    SCOPED_TRACE(testing::Message() << "p=" << static_cast<double>(pm) / 1000 << " want " << want);
    ExpectWithinBound(h.Percentile(static_cast<double>(pm) / 1000.0), want);
  }
  EXPECT_EQ(h.Percentile(100), -1);
  EXPECT_EQ(h.Percentile(99.999), -2);
}

TEST(HistogramPercentileTest, MixedSignsAreOrderedAcrossZero) {
  Histogram h;
  for (int64_t v = 500; v >= -500; --v) h.Record(v);  // recording order must not matter
  ASSERT_EQ(h.count(), 1001u);
  for (uint64_t rank = 1; rank <= 1001; ++rank) {
    EXPECT_EQ(h.ValueAtRank(rank), static_cast<int64_t>(rank) - 501) << "rank " << rank;
  }
  EXPECT_EQ(h.Percentile(50), 0);  // rank ceil(500.5) = 501

  Histogram wide;
  const std::vector<int64_t> values = {-2'000'000, -70'000, -600, -5, 0, 3, 800, 90'000, 3'000'000};
  for (int64_t v : values) wide.Record(v);
  for (uint64_t rank = 1; rank <= values.size(); ++rank) {
    SCOPED_TRACE(testing::Message() << "rank " << rank);
    ExpectWithinBound(wide.ValueAtRank(rank), values[rank - 1]);
  }
}

TEST(HistogramPercentileTest, ExponentialDistributionAgainstSortedSamples) {
  std::mt19937_64 rng(20240611);
  std::exponential_distribution<double> exp_dist(1.0 / 20'000.0);  // mean 20 us
  constexpr size_t kN = 200'000;
  Histogram h;
  std::vector<int64_t> sorted;
  sorted.reserve(kN);
  for (size_t i = 0; i < kN; ++i) {
    const auto v = static_cast<int64_t>(2000.0 + exp_dist(rng));  // 2 us floor
    sorted.push_back(v);
    h.Record(v);
  }
  std::sort(sorted.begin(), sorted.end());
  EXPECT_EQ(h.min(), sorted.front());
  EXPECT_EQ(h.max(), sorted.back());
  std::vector<uint64_t> milli(std::begin(kMilliPercents), std::end(kMilliPercents));
  for (uint64_t p = 0; p <= 100; ++p) milli.push_back(p * 1000);
  for (uint64_t pm : milli) {
    const int64_t exact = sorted[RankForMilliPercent(pm, kN) - 1];
    const int64_t got = h.Percentile(static_cast<double>(pm) / 1000.0);
    SCOPED_TRACE(testing::Message()
                 << "p=" << static_cast<double>(pm) / 1000 << " exact " << exact);
    EXPECT_GE(got, exact);
    EXPECT_LE(static_cast<double>(got - exact), 0.002 * static_cast<double>(exact));
  }
}

// ---- CountAtOrAbove ---------------------------------------------------------------------

TEST(HistogramCountTest, CountAtOrAboveIsExactAtBucketEdges) {
  Histogram h;
  constexpr int64_t kN = 5000;
  for (int64_t v = 1; v <= kN; ++v) h.Record(v);
  // Below 1024 ns every value is its own bucket.
  for (int64_t t : {int64_t{0}, int64_t{1}, int64_t{2}, int64_t{511}, int64_t{512}, int64_t{513},
                    int64_t{1023}}) {
    EXPECT_EQ(h.CountAtOrAbove(t), static_cast<uint64_t>(std::min(kN, kN - t + 1))) << t;
  }
  // Lower bucket edges above that: exact.
  for (int64_t t :
       {int64_t{1024}, int64_t{1026}, int64_t{2048}, int64_t{4096}, int64_t{4104}, int64_t{4992}}) {
    ASSERT_EQ(RangeOf(static_cast<uint64_t>(t)).lo, t);
    EXPECT_EQ(h.CountAtOrAbove(t), static_cast<uint64_t>(kN - t + 1)) << t;
  }
  // Inside a bucket the whole bucket counts, as documented: [1024, 1025] and [4096, 4103].
  EXPECT_EQ(h.CountAtOrAbove(1025), static_cast<uint64_t>(kN - 1024 + 1));
  EXPECT_EQ(h.CountAtOrAbove(4100), static_cast<uint64_t>(kN - 4096 + 1));
  EXPECT_EQ(h.CountAtOrAbove(kN + 1), 1u);  // kN = 5000 is the edge of [5000, 5007]
  EXPECT_EQ(h.CountAtOrAbove(kN + 8), 0u);
  EXPECT_EQ(h.CountAtOrAbove(kInt64Max), 0u);
}

TEST(HistogramCountTest, CountAtOrAboveWithNegatives) {
  Histogram h;
  for (int64_t v = -10; v <= 10; ++v) h.Record(v);
  EXPECT_EQ(h.CountAtOrAbove(-5), 16u);  // -5..10
  EXPECT_EQ(h.CountAtOrAbove(0), 11u);
  EXPECT_EQ(h.CountAtOrAbove(1), 10u);
  EXPECT_EQ(h.CountAtOrAbove(-10), 21u);
  EXPECT_EQ(h.CountAtOrAbove(kInt64Min), 21u);
}

// ---- Live accessors (quiescent: must agree with the exact ones) ------------------------

TEST(HistogramLiveTest, LiveReadsMatchWhenQuiescent) {
  Histogram h;
  for (int64_t v : MixedSample(5, 3000)) h.Record(v);
  EXPECT_EQ(h.LiveCount(), h.count());
  EXPECT_EQ(h.LiveMin(), h.min());
  EXPECT_EQ(h.LiveMax(), h.max());
  EXPECT_EQ(h.LiveSum(), h.sum());
  for (double p : {0.0, 50.0, 99.0, 100.0}) EXPECT_EQ(h.LivePercentile(p), h.Percentile(p)) << p;
}

TEST(HistogramLiveTest, LivePercentileNeverAboveMaxForNegativeData) {
  Histogram h;
  h.Record(-1'000'000);  // bucket [-1000447, -999424]: its upper edge is above the max
  EXPECT_EQ(h.Percentile(50), -1'000'000);
  EXPECT_EQ(h.LivePercentile(50), -1'000'000);
}

// ---- LiveCopyTo (checkpoints of a running measurement) ---------------------------------

TEST(HistogramLiveCopyTest, QuiescentCopyMatchesExceptTheSumOfSquares) {
  Histogram h;
  for (int64_t v : MixedSample(7, 5000)) h.Record(v);
  Histogram copy;
  h.LiveCopyTo(copy);
  EXPECT_EQ(copy.count(), h.count());
  EXPECT_EQ(copy.negative_count(), h.negative_count());
  EXPECT_EQ(copy.top_bucket_count(), h.top_bucket_count());
  EXPECT_EQ(copy.min(), h.min());
  EXPECT_EQ(copy.max(), h.max());
  EXPECT_EQ(copy.sum(), h.sum());
  ExpectSameBuckets(copy, h);
  for (double p : {0.0, 1.0, 50.0, 99.0, 99.9, 100.0}) {
    EXPECT_EQ(copy.Percentile(p), h.Percentile(p)) << p;
  }
  EXPECT_TRUE(copy.approximate_moments());
  EXPECT_FALSE(h.approximate_moments());
}

TEST(HistogramLiveCopyTest, MomentsAreExactBelow1024ns) {
  // Buckets below 2 * 512 ns hold one value each: the midpoint is the value.
  Histogram h;
  for (int64_t v : {0, 1, 2, 3, 500, 1023, -1, -7, -1023}) h.Record(v);
  Histogram copy;
  h.LiveCopyTo(copy);
  EXPECT_EQ(copy.sum_of_squares(), h.sum_of_squares());
  EXPECT_DOUBLE_EQ(copy.Mean(), h.Mean());
  EXPECT_DOUBLE_EQ(copy.StdDev(), h.StdDev());
}

TEST(HistogramLiveCopyTest, StdDevIsWithinABucketWidthAbove1024ns) {
  Histogram h;
  std::mt19937_64 rng(3);
  std::uniform_int_distribution<int64_t> dist(10'000, 30'000);  // buckets 16 or 32 ns wide
  for (int i = 0; i < 20'000; ++i) h.Record(dist(rng));
  Histogram copy;
  h.LiveCopyTo(copy);
  EXPECT_NE(copy.sum_of_squares(), h.sum_of_squares());
  EXPECT_DOUBLE_EQ(copy.Mean(), h.Mean());
  EXPECT_NEAR(copy.StdDev(), h.StdDev(), 32.0);
}

TEST(HistogramLiveCopyTest, OneSampleInAWideBucketHasNoSpread) {
  // Midpoint^2 < value^2 here: the variance formula must not go negative.
  Histogram h;
  h.Record(1'000'447);  // the top of bucket [999424, 1000447]
  h.Record(1'000'447);
  Histogram copy;
  h.LiveCopyTo(copy);
  EXPECT_EQ(copy.StdDev(), 0.0);
  EXPECT_EQ(copy.min(), 1'000'447);
  EXPECT_EQ(copy.max(), 1'000'447);
}

TEST(HistogramLiveCopyTest, CopyOfEmptyIsEmptyAndOverwritesTheTarget) {
  Histogram full;
  for (int64_t v : MixedSample(9, 100)) full.Record(v);
  Histogram empty;
  empty.LiveCopyTo(full);
  EXPECT_EQ(full.count(), 0u);
  EXPECT_EQ(full.negative_count(), 0u);
  EXPECT_EQ(full.min(), 0);
  EXPECT_EQ(full.max(), 0);
  EXPECT_EQ(full.sum(), 0);
  EXPECT_EQ(full.sum_of_squares(), 0);
  EXPECT_TRUE(Buckets(full).empty());
  EXPECT_EQ(full.Percentile(50), 0);
}

TEST(HistogramLiveCopyTest, Int64ExtremesKeepTheirExactValues) {
  Histogram h;
  for (int64_t v : {kInt64Min, kInt64Max, int64_t{0}, int64_t{-512}, int64_t{512}}) h.Record(v);
  Histogram copy;
  h.LiveCopyTo(copy);
  EXPECT_EQ(copy.min(), kInt64Min);
  EXPECT_EQ(copy.max(), kInt64Max);
  EXPECT_EQ(copy.sum(), h.sum());
  EXPECT_EQ(copy.top_bucket_count(), 2u);
  EXPECT_EQ(copy.ValueAtRank(1), h.ValueAtRank(1));
  EXPECT_EQ(copy.Percentile(100), kInt64Max);
}

TEST(HistogramLiveCopyTest, MergingACopyMarksTheMomentsApproximate) {
  Histogram h;
  h.Record(5);
  Histogram copy;
  h.LiveCopyTo(copy);
  Histogram total;
  total.Merge(copy);
  EXPECT_TRUE(total.approximate_moments());
  total.Reset();
  EXPECT_FALSE(total.approximate_moments());
}

// One writer records continuously while a reader copies: every copy must be internally
// consistent and counts must never go backwards. Run under -DRTPULSE_TSAN=ON too.
TEST(HistogramLiveCopyTest, CopiesWhileRecordingAreConsistentAndMonotonic) {
  constexpr int kCopies = 150;
  Histogram h;
  std::atomic<bool> reader_done{false};
  std::atomic<uint64_t> recorded{0};
  std::thread writer([&] {
    std::mt19937_64 rng(11);
    std::uniform_int_distribution<int64_t> small(-600, 3000);
    std::uniform_int_distribution<int64_t> large(-(int64_t{1} << 42), int64_t{1} << 42);
    uint64_t n = 0;
    // At least some samples before and after the reader, whatever the scheduling.
    while (!reader_done.load(std::memory_order_relaxed) || n < 100'000) {
      h.Record(n % 64 == 0 ? large(rng) : small(rng));
      ++n;
    }
    recorded.store(n);
  });

  // Start copying once the writer is under way, so the copies overlap its recording.
  while (h.LiveCount() == 0) std::this_thread::yield();
  Histogram copy;
  uint64_t last_count = 0;
  uint64_t last_negative = 0;
  for (int i = 0; i < kCopies; ++i) {
    h.LiveCopyTo(copy);
    SCOPED_TRACE(testing::Message() << "copy " << i);
    uint64_t bucket_sum = 0;
    uint64_t negative_sum = 0;
    bool first = true;
    Range lowest{};
    Range highest{};
    copy.ForEachBucket([&](Range r, uint64_t c) {
      bucket_sum += c;
      if (r.hi < 0) negative_sum += c;
      if (first) lowest = r;
      first = false;
      highest = r;
    });
    ASSERT_EQ(copy.count(), bucket_sum);
    ASSERT_EQ(copy.negative_count(), negative_sum);
    ASSERT_GE(copy.count(), last_count);
    ASSERT_GE(copy.negative_count(), last_negative);
    last_count = copy.count();
    last_negative = copy.negative_count();
    ASSERT_GT(copy.count(), 0u);
    ASSERT_LE(copy.min(), copy.max());
    // The top negative bucket also holds INT64_MIN, below its range's edge.
    ASSERT_GE(copy.min(), lowest.lo == -kInt64Max ? kInt64Min : lowest.lo);
    ASSERT_LE(copy.min(), lowest.hi);
    ASSERT_GE(copy.max(), highest.lo);
    ASSERT_LE(copy.max(), highest.hi);
    ASSERT_GE(copy.Mean(), static_cast<double>(copy.min()));
    ASSERT_LE(copy.Mean(), static_cast<double>(copy.max()));
    ASSERT_TRUE(copy.approximate_moments());
    ASSERT_GE(copy.StdDev(), 0.0);
  }
  reader_done.store(true);
  writer.join();
  EXPECT_LE(last_count, recorded.load());
  EXPECT_EQ(h.count(), recorded.load());
  // Quiescent again: the copy is exact.
  h.LiveCopyTo(copy);
  EXPECT_EQ(copy.count(), h.count());
  EXPECT_EQ(copy.min(), h.min());
  EXPECT_EQ(copy.max(), h.max());
  EXPECT_EQ(copy.sum(), h.sum());
}

}  // namespace
}  // namespace rtpulse
