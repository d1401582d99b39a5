#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/histogram.h"

namespace rtpulse::stats {

/// A histogram reduced to its non-empty buckets, in ascending order. Each bucket stands for
/// the value the summaries report for it (its upper edge, clamped to the exact min and max),
/// so a nearest-rank percentile of these counts equals Histogram::Percentile.
struct BucketCounts {
  std::vector<int64_t> value_ns;
  std::vector<uint64_t> count;
  uint64_t total = 0;
};

BucketCounts CompactBuckets(const Histogram& histogram);

/// Nearest-rank percentile (rank = ceil(p/100*N), at least 1) of `counts` over the values of
/// `buckets`; 0 when the total is 0. The same method as Histogram::Percentile.
int64_t PercentileOfCounts(const std::vector<int64_t>& value_ns,
                           const std::vector<uint64_t>& counts, uint64_t total, double p);

/// The seed compare uses unless told otherwise, so two invocations print the same CIs.
inline constexpr uint64_t kDefaultBootstrapSeed = 20260101;

struct BootstrapOptions {
  int replicates = 500;
  uint64_t seed = kDefaultBootstrapSeed;
  double confidence = 0.95;
};

/// A percentile of two runs and the bootstrap confidence interval of their difference.
struct PercentileDifference {
  double percentile = 0;    ///< In percent: 50, 99, 99.9.
  int64_t baseline_ns = 0;  ///< Point estimates (the summaries' values).
  int64_t other_ns = 0;
  double lo_ns = 0;  ///< CI of (other - baseline), percentile bootstrap.
  double hi_ns = 0;
  /// The CI excludes 0: the runs differ at this percentile beyond resampling noise.
  bool Significant() const { return lo_ns > 0 || hi_ns < 0; }
};

/// Bootstrap CIs of (other - baseline) for each percentile. Every replicate redraws N
/// samples from each histogram (a multinomial over its buckets) and takes the same
/// nearest-rank percentiles. The multinomial is drawn by binary splitting (one binomial per
/// split, descending only into the halves that hold a wanted rank), so a replicate costs
/// O(percentiles x log(buckets)), not O(N) or O(buckets). Deterministic for a given seed on a given
/// standard library. The maximum is deliberately not offered: a resample can never exceed the
/// observed max, so its bootstrap distribution says nothing about the true worst case. Empty
/// histograms give zero-width intervals at 0.
std::vector<PercentileDifference> BootstrapPercentileDifferences(
    const Histogram& baseline, const Histogram& other, std::span<const double> percentiles,
    const BootstrapOptions& options);

/// Two-sample Kolmogorov-Smirnov test on two histograms of the same layout.
struct KsResult {
  double d = 0;        ///< sup |F_baseline - F_other|, evaluated at every bucket edge.
  double p_value = 1;  ///< Asymptotic, nominal: assumes independent samples (they are not).
  uint64_t n_baseline = 0;
  uint64_t n_other = 0;
};

/// D is exact where every value sits at a bucket edge (always below 512 ns); above, values
/// inside one bucket (at most 0.195 % wide) cannot be told apart, so D can only be
/// underestimated, never overstated. The p-value is Q_KS((sqrt(Ne) + 0.12 + 0.11/sqrt(Ne)) * D)
/// with Ne = n*m/(n+m) (Stephens' small-sample correction, as in Numerical Recipes).
/// With an empty side the result is D = 0, p = 1.
KsResult KolmogorovSmirnov(const Histogram& baseline, const Histogram& other);

/// Survival function of the Kolmogorov distribution: Q(x) = 2 sum_{j>=1} (-1)^(j-1)
/// exp(-2 j^2 x^2); 1 for x <= 0.
double KolmogorovQ(double x);

/// The caveat printed beside every KS p-value.
inline constexpr std::string_view kKsCaveat =
    "latency samples are autocorrelated (one probe's consecutive periods share cache, load "
    "and interrupt state), so the nominal p-value assumes far more independent samples than "
    "there are and overstates significance; read D as the effect size";

/// Why the max gets a ratio but no confidence interval.
inline constexpr std::string_view kMaxNote =
    "max: a single extreme; the bootstrap cannot resample beyond the observed max, so no CI "
    "is given (compare longer runs, or the exceedance curves, instead)";

/// "294.0 x lower" when other = baseline / 294, "2.5 x higher" when other = 2.5 * baseline
/// (two decimals below 1.1: "1.04 x lower"),
/// "same" when equal; with a zero or negative side, where a ratio means nothing: "lower"
/// or "higher" alone.
std::string RatioWording(double baseline, double other);

/// Percent change from baseline to other, rounded: "-88 %", "+12 %", "0 %"; "n/a" when
/// the baseline is 0 and other is not.
std::string PercentChange(double baseline, double other);

/// The verdict for one statistic: "no significant difference" when `ci` is given and
/// includes 0; otherwise the ratio and the percent change, "8.3 x lower (-88 %)".
std::string DifferenceWording(double baseline, double other,
                              const PercentileDifference* ci = nullptr);

}  // namespace rtpulse::stats
