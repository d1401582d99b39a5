#include "stats/exact_percentiles.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <set>
#include <vector>

namespace rtpulse::stats {
namespace {

SamplePass PassOver(const std::vector<int64_t>& values, int* passes = nullptr) {
  return [&values, passes](const std::function<void(int64_t)>& sink) {
    if (passes != nullptr) ++*passes;
    for (int64_t v : values) sink(v);
    return Status::Ok();
  };
}

Histogram HistogramOf(const std::vector<int64_t>& values) {
  Histogram h;
  for (int64_t v : values) h.Record(v);
  return h;
}

/// The independent computation: sort everything, take element rank-1.
int64_t SortedRank(std::vector<int64_t> values, uint64_t rank) {
  std::sort(values.begin(), values.end());
  return values[rank - 1];
}

/// Samples of the buckets that hold `ranks`: the most a selection may keep.
uint64_t TargetBucketCounts(const Histogram& h, const std::vector<uint64_t>& ranks) {
  uint64_t before = 0;
  uint64_t total = 0;
  h.ForEachBucket([&](Histogram::Range, uint64_t count) {
    const bool target = std::any_of(ranks.begin(), ranks.end(),
                                    [&](uint64_t r) { return r > before && r <= before + count; });
    if (target) total += count;
    before += count;
  });
  return total;
}

std::vector<uint64_t> AllRanksEvery(uint64_t n, uint64_t step) {
  std::vector<uint64_t> ranks;
  for (uint64_t r = 1; r <= n; r += step) ranks.push_back(r);
  ranks.push_back(n);
  return ranks;
}

TEST(SelectRanksTest, MatchesSortedDataOnMixedRandomValues) {
  std::mt19937_64 rng(10);
  std::vector<int64_t> v;
  std::lognormal_distribution<double> tail(9.0, 1.5);  // ~8 us median, long tail
  for (int i = 0; i < 20000; ++i) v.push_back(static_cast<int64_t>(tail(rng)));
  for (int i = 0; i < 500; ++i) v.push_back(-static_cast<int64_t>(tail(rng)));  // early wake-ups
  for (int i = 0; i < 300; ++i) v.push_back(12345);                             // duplicates
  std::shuffle(v.begin(), v.end(), rng);
  const Histogram h = HistogramOf(v);
  const auto ranks = AllRanksEvery(v.size(), 97);
  auto s = SelectRanks(h, ranks, PassOver(v));
  ASSERT_TRUE(s) << s.error().message;
  const std::set<int64_t> present(v.begin(), v.end());
  for (size_t i = 0; i < ranks.size(); ++i) {
    EXPECT_EQ(s->values[i], SortedRank(v, ranks[i])) << "rank " << ranks[i];
    EXPECT_TRUE(present.count(s->values[i]) == 1) << s->values[i] << " is not a sample";
  }
  EXPECT_LE(s->max_held, TargetBucketCounts(h, ranks));
  EXPECT_EQ(s->passes, 1u);  // no bucket near a million samples: no refinement
}

TEST(SelectRanksTest, WholeMicrosecondDataGivesWholeMicrosecondPercentiles) {
  // Above 512 us a bucket is wider than 1 us, so its upper edge is usually not a whole
  // microsecond; the exact value always is.
  std::mt19937_64 rng(11);
  std::uniform_int_distribution<int64_t> us(1, 5000);
  std::vector<int64_t> v;
  for (int i = 0; i < 10000; ++i) v.push_back(us(rng) * 1000);
  const Histogram h = HistogramOf(v);
  std::vector<uint64_t> ranks;
  for (double p : {50.0, 95.0, 99.0, 99.9, 99.99, 100.0}) {
    ranks.push_back(Histogram::NearestRank(p, v.size()));
  }
  auto s = SelectRanks(h, ranks, PassOver(v));
  ASSERT_TRUE(s) << s.error().message;
  bool some_edge_differs = false;
  for (size_t i = 0; i < ranks.size(); ++i) {
    EXPECT_EQ(s->values[i] % 1000, 0) << s->values[i];
    EXPECT_EQ(s->values[i], SortedRank(v, ranks[i]));
    some_edge_differs |= h.ValueAtRank(ranks[i]) != s->values[i];
  }
  EXPECT_TRUE(some_edge_differs) << "the data should show the bucket edge's error";
}

TEST(SelectRanksTest, HugeBucketIsRefinedAndNeverHeldWhole) {
  // 200000 samples inside one bucket ([2^20, 2^20 + 2047] ns is one 2048-wide bucket), a
  // window cap of 1000: counting passes narrow it before any sample is kept.
  std::mt19937_64 rng(12);
  std::uniform_int_distribution<int64_t> in_bucket(1 << 20, (1 << 20) + 2047);
  std::vector<int64_t> v;
  for (int i = 0; i < 200000; ++i) v.push_back(in_bucket(rng));
  const Histogram h = HistogramOf(v);
  ASSERT_EQ(Histogram::IndexOf(1 << 20), Histogram::IndexOf((1 << 20) + 2047));
  const std::vector<uint64_t> ranks = {1, 100000, 199800, 200000};
  int passes = 0;
  auto s = SelectRanks(h, ranks, PassOver(v, &passes), 1000);
  ASSERT_TRUE(s) << s.error().message;
  for (size_t i = 0; i < ranks.size(); ++i) EXPECT_EQ(s->values[i], SortedRank(v, ranks[i]));
  EXPECT_LE(s->max_held, 4u * 1000u);  // at most the cap per wanted window
  EXPECT_GE(s->passes, 2u);
  EXPECT_EQ(s->passes, static_cast<uint64_t>(passes));
}

TEST(SelectRanksTest, OneValueWideBucketsNeedNoSamples) {
  std::vector<int64_t> v(100000, 300);  // below 512 ns every bucket is one value
  v.insert(v.end(), 5000, 40);
  const Histogram h = HistogramOf(v);
  int passes = 0;
  auto s = SelectRanks(h, {1, 5000, 5001, 105000}, PassOver(v, &passes));
  ASSERT_TRUE(s) << s.error().message;
  EXPECT_EQ(s->values, (std::vector<int64_t>{40, 40, 300, 300}));
  EXPECT_EQ(s->max_held, 0u);
  EXPECT_EQ(passes, 0);
}

TEST(SelectRanksTest, ExtremeValuesIncludingTopBuckets) {
  const int64_t lo = std::numeric_limits<int64_t>::min();
  const int64_t hi = std::numeric_limits<int64_t>::max();
  std::vector<int64_t> v = {lo,     lo + 1, -(int64_t{1} << 41), -5, 0, 7, int64_t{1} << 41,
                            hi - 1, hi};
  for (int64_t i = 0; i < 50; ++i) v.push_back((int64_t{1} << 45) + i * 1'000'000'007);
  const Histogram h = HistogramOf(v);
  std::vector<uint64_t> ranks;
  for (uint64_t r = 1; r <= v.size(); ++r) ranks.push_back(r);
  for (uint64_t cap : {uint64_t{1}, uint64_t{3}, uint64_t{1} << 20}) {
    auto s = SelectRanks(h, ranks, PassOver(v), cap);
    ASSERT_TRUE(s) << s.error().message;
    for (size_t i = 0; i < ranks.size(); ++i) {
      EXPECT_EQ(s->values[i], SortedRank(v, ranks[i])) << "cap " << cap << " rank " << ranks[i];
    }
  }
}

TEST(SelectRanksTest, LogThatDoesNotMatchTheHistogramIsAnError) {
  std::vector<int64_t> v = {1000, 2000, 3000, 700000};
  const Histogram h = HistogramOf(v);
  // Two samples in the bucket [3000, 3003] ns where the histogram has one.
  std::vector<int64_t> other = {1000, 2000, 3000, 3001, 700000};
  auto s = SelectRanks(h, {1, 2, 3, 4}, PassOver(other));
  ASSERT_FALSE(s);
  EXPECT_NE(s.error().message.find("does not hold the histogram's samples"), std::string::npos);
  EXPECT_FALSE(SelectRanks(h, {5}, PassOver(v)));  // rank beyond N
  EXPECT_FALSE(SelectRanks(h, {0}, PassOver(v)));
}

TEST(SelectRanksTest, PassErrorIsReturned) {
  const Histogram h = HistogramOf({6000, 9000});  // 4 ns wide buckets: a pass is needed
  auto s = SelectRanks(
      h, {1}, [](const std::function<void(int64_t)>&) { return Status(Failure("disk gone")); });
  ASSERT_FALSE(s);
  EXPECT_EQ(s.error().message, "disk gone");
}

TEST(ComputeExactPercentilesTest, EmptyOneAndManySamples) {
  std::vector<int64_t> none;
  auto e = ComputeExactPercentiles(PassOver(none), {50.0, 99.0});
  ASSERT_TRUE(e);
  EXPECT_TRUE(e->values.empty());
  EXPECT_EQ(e->histogram.count(), 0u);

  std::vector<int64_t> one = {123457};
  auto o = ComputeExactPercentiles(PassOver(one), {0.0, 50.0, 100.0});
  ASSERT_TRUE(o);
  EXPECT_EQ(o->values, (std::vector<int64_t>{123457, 123457, 123457}));

  // 1..1000 us in steps of 1 us: nearest rank of p is ceil(p*10) us.
  std::vector<int64_t> v;
  for (int64_t us = 1000; us >= 1; --us) v.push_back(us * 1000);
  auto m = ComputeExactPercentiles(PassOver(v), {50.0, 95.0, 99.0, 99.9, 99.99, 100.0});
  ASSERT_TRUE(m);
  EXPECT_EQ(m->values,
            (std::vector<int64_t>{500'000, 950'000, 990'000, 999'000, 1'000'000, 1'000'000}));
  EXPECT_TRUE(SameSamples(m->histogram, HistogramOf(v)));
  EXPECT_EQ(m->passes, 2u);
}

TEST(SameSamplesTest, DifferentSamplesDiffer) {
  EXPECT_TRUE(SameSamples(HistogramOf({1, 2, 900}), HistogramOf({900, 2, 1})));
  EXPECT_FALSE(SameSamples(HistogramOf({1, 2, 900}), HistogramOf({1, 2, 901})));  // sum
  EXPECT_FALSE(SameSamples(HistogramOf({1, 2}), HistogramOf({1, 2, 2})));
  // Same count, min, max and sum, different buckets.
  EXPECT_FALSE(SameSamples(HistogramOf({0, 10, 10, 20}), HistogramOf({0, 9, 11, 20})));
}

}  // namespace
}  // namespace rtpulse::stats
