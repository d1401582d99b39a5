#include "stats/compare.h"

#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <random>

#include "core/float_compare.h"

namespace rtpulse::stats {
namespace {

Histogram Of(std::initializer_list<int64_t> values) {
  Histogram h;
  for (const int64_t v : values) h.Record(v);
  return h;
}

Histogram Exponential(double mean_ns, int n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::exponential_distribution<double> dist(1.0 / mean_ns);
  Histogram h;
  for (int i = 0; i < n; ++i) h.Record(static_cast<int64_t>(std::llround(dist(rng))));
  return h;
}

constexpr std::array<double, 3> kCiPercentiles = {50.0, 99.0, 99.9};

TEST(RatioWordingTest, ExactValues) {
  EXPECT_EQ(RatioWording(294.0, 1.0), "294.0 x lower");
  EXPECT_EQ(RatioWording(100.0, 12.0), "8.3 x lower");
  EXPECT_EQ(RatioWording(10.0, 25.0), "2.5 x higher");
  EXPECT_EQ(RatioWording(104.0, 100.0), "1.04 x lower");  // not "1.0 x lower"
  EXPECT_EQ(RatioWording(100.0, 109.0), "1.09 x higher");
  EXPECT_EQ(RatioWording(100.0, 110.0), "1.1 x higher");
  EXPECT_EQ(RatioWording(7.0, 7.0), "same");
  EXPECT_EQ(RatioWording(0.0, 0.0), "same");
  EXPECT_EQ(RatioWording(0.0, 5.0), "higher");  // no ratio against 0
  EXPECT_EQ(RatioWording(5.0, 0.0), "lower");
  EXPECT_EQ(RatioWording(-3.0, 2.0), "higher");
}

TEST(RatioWordingTest, PercentChange) {
  EXPECT_EQ(PercentChange(100.0, 12.0), "-88 %");
  EXPECT_EQ(PercentChange(100.0, 112.0), "+12 %");
  EXPECT_EQ(PercentChange(294.0, 1.0), "-100 %");  // -99.66 rounds to -100
  EXPECT_EQ(PercentChange(1000.0, 1000.4), "0 %");
  EXPECT_EQ(PercentChange(5.0, 5.0), "0 %");
  EXPECT_EQ(PercentChange(0.0, 5.0), "n/a");
  EXPECT_EQ(PercentChange(1e12, 3e12), "+200 %");
}

TEST(RatioWordingTest, DifferenceWording) {
  EXPECT_EQ(DifferenceWording(100.0, 12.0), "8.3 x lower (-88 %)");
  EXPECT_EQ(DifferenceWording(4.0, 4.0), "same");
  PercentileDifference includes_zero{99.0, 100, 90, -15.0, 3.0};
  EXPECT_EQ(DifferenceWording(100.0, 90.0, &includes_zero), "no significant difference");
  PercentileDifference excludes_zero{99.0, 100, 90, -15.0, -2.0};
  EXPECT_EQ(DifferenceWording(100.0, 90.0, &excludes_zero), "1.1 x lower (-10 %)");
}

TEST(CompactBucketsTest, PercentilesMatchHistogram) {
  const Histogram h = Exponential(20'000.0, 5'000, 7);
  const BucketCounts b = CompactBuckets(h);
  EXPECT_EQ(b.total, h.count());
  for (const double p : {0.0, 1.0, 50.0, 90.0, 99.0, 99.9, 99.99, 100.0}) {
    EXPECT_EQ(PercentileOfCounts(b.value_ns, b.count, b.total, p), h.Percentile(p)) << p;
  }
  EXPECT_EQ(PercentileOfCounts({}, {}, 0, 50.0), 0);
}

TEST(BootstrapTest, CiContainsTrueDifferenceOfTwoExponentials) {
  // Exponential with mean m has p-quantile -m ln(1-p): p99 = m ln(100), p50 = m ln(2).
  const Histogram fast = Exponential(10'000.0, 20'000, 1);
  const Histogram slow = Exponential(20'000.0, 20'000, 2);
  const auto ci = BootstrapPercentileDifferences(fast, slow, kCiPercentiles, {});
  ASSERT_EQ(ci.size(), 3u);
  const double true_p50 = 10'000.0 * std::log(2.0);
  const double true_p99 = 10'000.0 * std::log(100.0);  // 46.05 us
  EXPECT_LE(ci[0].lo_ns, true_p50);
  EXPECT_GE(ci[0].hi_ns, true_p50);
  EXPECT_LE(ci[1].lo_ns, true_p99);
  EXPECT_GE(ci[1].hi_ns, true_p99);
  EXPECT_TRUE(ci[1].Significant());
  // The width matches theory: the p-quantile's standard error is sqrt(p(1-p)/n) / f(q_p);
  // for an exponential f(q_p) = (1-p)/m, so at p99 SE = 0.0704 m: 0.70 us and 1.41 us, and
  // the difference's SE is 1.57 us, a 95 % CI about 6.2 us wide. Too narrow would mean the
  // resampling is broken, too wide that it is useless.
  const double width = ci[1].hi_ns - ci[1].lo_ns;
  EXPECT_GT(width, 4'000.0);
  EXPECT_LT(width, 9'000.0);
  EXPECT_EQ(ci[1].baseline_ns, fast.Percentile(99.0));
  EXPECT_EQ(ci[1].other_ns, slow.Percentile(99.0));
}

TEST(BootstrapTest, ReproducibleWithASeedAndDifferentWithAnother) {
  const Histogram a = Exponential(10'000.0, 5'000, 3);
  const Histogram b = Exponential(12'000.0, 5'000, 4);
  const auto one = BootstrapPercentileDifferences(a, b, kCiPercentiles, {200, 42, 0.95});
  const auto two = BootstrapPercentileDifferences(a, b, kCiPercentiles, {200, 42, 0.95});
  const auto other_seed = BootstrapPercentileDifferences(a, b, kCiPercentiles, {200, 43, 0.95});
  bool any_differs = false;
  for (size_t i = 0; i < one.size(); ++i) {
    EXPECT_EQ(one[i].lo_ns, two[i].lo_ns);
    EXPECT_EQ(one[i].hi_ns, two[i].hi_ns);
    any_differs |= !ExactlyEqual(one[i].lo_ns, other_seed[i].lo_ns) ||
                   !ExactlyEqual(one[i].hi_ns, other_seed[i].hi_ns);
  }
  EXPECT_TRUE(any_differs);
}

TEST(BootstrapTest, IdenticalDistributionsAreNotSignificant) {
  const Histogram a = Exponential(15'000.0, 10'000, 5);
  const auto ci = BootstrapPercentileDifferences(a, a, kCiPercentiles, {});
  for (const auto& d : ci) {
    EXPECT_LE(d.lo_ns, 0.0) << d.percentile;
    EXPECT_GE(d.hi_ns, 0.0) << d.percentile;
    EXPECT_FALSE(d.Significant());
    EXPECT_EQ(
        DifferenceWording(static_cast<double>(d.baseline_ns), static_cast<double>(d.other_ns), &d),
        "no significant difference");
  }
}

TEST(BootstrapTest, EdgeCases) {
  // Empty side: point estimates only, a zero-width interval at 0.
  const auto empty = BootstrapPercentileDifferences(Histogram{}, Of({5}), kCiPercentiles, {});
  EXPECT_EQ(empty[1].other_ns, 5);
  EXPECT_EQ(empty[1].lo_ns, 0.0);
  EXPECT_EQ(empty[1].hi_ns, 0.0);
  // One sample each: every resample is that sample, so the CI is the exact difference.
  const auto one = BootstrapPercentileDifferences(Of({100}), Of({300}), kCiPercentiles, {});
  for (const auto& d : one) {
    EXPECT_EQ(d.lo_ns, 200.0);
    EXPECT_EQ(d.hi_ns, 200.0);
  }
  // Huge values (top bucket, 2^40 ns and more) do not overflow the differences.
  const auto huge = BootstrapPercentileDifferences(Of({int64_t{1} << 50}), Of({0}), kCiPercentiles,
                                                   {10, 1, 0.95});
  EXPECT_EQ(huge[0].lo_ns, -std::ldexp(1.0, 50));
}

TEST(BootstrapTest, MillionsOfSamplesGiveAnOrderedInterval) {
  // 2.4 M samples per run (600 s at 1 kHz on 4 CPUs). How long this takes (replicates cost
  // O(buckets), not O(N)) is BM_BootstrapPercentileDifferences in bench/micro_bench.cc.
  Histogram a;
  Histogram b;
  std::mt19937_64 rng(9);
  std::lognormal_distribution<double> dist(9.0, 0.6);
  for (int i = 0; i < 2'400'000; ++i) {
    a.Record(static_cast<int64_t>(dist(rng)));
    b.Record(static_cast<int64_t>(dist(rng) * 1.01));
  }
  const auto ci = BootstrapPercentileDifferences(a, b, kCiPercentiles, {});
  EXPECT_LT(ci[0].lo_ns, ci[0].hi_ns);
}

TEST(KolmogorovTest, QMatchesKnownValues) {
  // Reference: scipy.special.kolmogorov (and the series summed to 200 terms).
  EXPECT_NEAR(KolmogorovQ(0.5), 0.9639452436648751, 1e-12);
  EXPECT_NEAR(KolmogorovQ(1.0), 0.26999967167735456, 1e-12);
  EXPECT_NEAR(KolmogorovQ(1.36), 0.049485876755377876, 1e-12);
  EXPECT_NEAR(KolmogorovQ(2.0), 0.0006709252557796953, 1e-15);
  EXPECT_EQ(KolmogorovQ(0.0), 1.0);
  EXPECT_EQ(KolmogorovQ(-1.0), 1.0);
  EXPECT_NEAR(KolmogorovQ(0.05), 1.0, 1e-12);
  EXPECT_GE(KolmogorovQ(40.0), 0.0);
}

TEST(KolmogorovTest, HandMadeHistogramsAreExact) {
  // F_a steps at 1, 2, 3 (thirds), F_b at 2, 3, 4, 5 (quarters); the widest gap is at 3:
  // F_a = 1, F_b = 1/2.
  const KsResult r = KolmogorovSmirnov(Of({1, 2, 3}), Of({2, 3, 4, 5}));
  EXPECT_DOUBLE_EQ(r.d, 0.5);
  EXPECT_EQ(r.n_baseline, 3u);
  EXPECT_EQ(r.n_other, 4u);
  // Ne = 12/7; lambda = (sqrt(Ne) + 0.12 + 0.11/sqrt(Ne)) * 0.5 = 0.756661; Q = 0.615966.
  EXPECT_NEAR(r.p_value, 0.615965784519994, 1e-9);
}

TEST(KolmogorovTest, DisjointIdenticalAndEmpty) {
  EXPECT_DOUBLE_EQ(KolmogorovSmirnov(Of({1, 1, 2}), Of({7, 8})).d, 1.0);
  const KsResult same = KolmogorovSmirnov(Of({5, 6, 7}), Of({5, 6, 7}));
  EXPECT_EQ(same.d, 0.0);
  EXPECT_EQ(same.p_value, 1.0);
  const KsResult empty = KolmogorovSmirnov(Histogram{}, Of({1}));
  EXPECT_EQ(empty.d, 0.0);
  EXPECT_EQ(empty.p_value, 1.0);
  // Negative values (early wake-ups) sort below zero.
  EXPECT_DOUBLE_EQ(KolmogorovSmirnov(Of({-5, 10}), Of({10, 10})).d, 0.5);
}

TEST(KolmogorovTest, LargeShiftIsTinyPValue) {
  const KsResult r =
      KolmogorovSmirnov(Exponential(10'000.0, 20'000, 1), Exponential(20'000.0, 20'000, 2));
  EXPECT_GT(r.d, 0.2);
  EXPECT_LT(r.p_value, 1e-10);
}

}  // namespace
}  // namespace rtpulse::stats
