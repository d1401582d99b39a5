#include "stats/compare.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numbers>
#include <random>

#include "core/float_compare.h"

namespace rtpulse::stats {
namespace {

/// Percentiles of multinomial resamples of one histogram, without drawing every bucket.
/// A resample's N samples are split between the two halves of the bucket range with one
/// binomial draw (exact: the multinomial's marginal), and only halves holding a wanted rank
/// are split further, so a replicate costs O(percentiles x log(buckets)) binomials instead of
/// one per bucket (or one uniform draw per sample).
class RankSampler {
 public:
  RankSampler(const BucketCounts& buckets, std::span<const double> percentiles)
      : buckets_(buckets), prefix_(buckets.count.size() + 1, 0) {
    for (size_t i = 0; i < buckets.count.size(); ++i)
      prefix_[i + 1] = prefix_[i] + buckets.count[i];
    for (const double p : percentiles) {
      ranks_.push_back(Histogram::NearestRank(p, buckets.total));
    }
    order_.resize(ranks_.size());
    for (size_t i = 0; i < order_.size(); ++i) order_[i] = i;
    std::sort(order_.begin(), order_.end(),
              [&](size_t x, size_t y) { return ranks_[x] < ranks_[y]; });
    values_.resize(ranks_.size());
  }

  /// One resample's value at every percentile, in the order given.
  const std::vector<int64_t>& Draw(std::mt19937_64& rng) {
    Locate(0, buckets_.count.size(), buckets_.total, 0, 0, order_.size(), rng);
    return values_;
  }

 private:
  /// The resample holds `n` samples in buckets [lo, hi) and `before` below lo; the wanted
  /// ranks order_[first, last) all fall in (before, before + n].
  void Locate(size_t lo, size_t hi, uint64_t n, uint64_t before, size_t first, size_t last,
              std::mt19937_64& rng) {
    if (first == last) return;
    if (hi - lo == 1) {
      for (size_t k = first; k < last; ++k) values_[order_[k]] = buckets_.value_ns[lo];
      return;
    }
    const size_t mid = lo + (hi - lo) / 2;
    const uint64_t left_weight = prefix_[mid] - prefix_[lo];
    const uint64_t weight = prefix_[hi] - prefix_[lo];
    uint64_t left_n = 0;
    if (left_weight == weight) {
      left_n = n;
    } else if (left_weight > 0) {
      std::binomial_distribution<uint64_t> binomial(
          n, static_cast<double>(left_weight) / static_cast<double>(weight));
      left_n = binomial(rng);
    }
    size_t split = first;
    while (split < last && ranks_[order_[split]] <= before + left_n) ++split;
    Locate(lo, mid, left_n, before, first, split, rng);
    Locate(mid, hi, n - left_n, before + left_n, split, last, rng);
  }

  const BucketCounts& buckets_;
  std::vector<uint64_t> prefix_;
  std::vector<uint64_t> ranks_;
  std::vector<size_t> order_;  ///< Indices into ranks_, by ascending rank.
  std::vector<int64_t> values_;
};

/// The q-quantile of sorted values, by the nearest-rank rule on indices.
double SortedQuantile(const std::vector<double>& sorted, double q) {
  const auto n = static_cast<double>(sorted.size());
  const auto index = static_cast<size_t>(std::clamp(std::ceil(q * n) - 1.0, 0.0, n - 1.0));
  return sorted[index];
}

}  // namespace

BucketCounts CompactBuckets(const Histogram& histogram) {
  BucketCounts b;
  const int64_t min = histogram.min();
  const int64_t max = histogram.max();
  histogram.ForEachBucket([&](Histogram::Range range, uint64_t count) {
    b.value_ns.push_back(std::clamp(range.hi, min, max));
    b.count.push_back(count);
    b.total += count;
  });
  return b;
}

int64_t PercentileOfCounts(const std::vector<int64_t>& value_ns,
                           const std::vector<uint64_t>& counts, uint64_t total, double p) {
  if (total == 0 || value_ns.empty()) return 0;
  const uint64_t rank = Histogram::NearestRank(p, total);
  uint64_t seen = 0;
  for (size_t i = 0; i < counts.size(); ++i) {
    seen += counts[i];
    if (seen >= rank) return value_ns[i];
  }
  return value_ns.back();
}

std::vector<PercentileDifference> BootstrapPercentileDifferences(
    const Histogram& baseline, const Histogram& other, std::span<const double> percentiles,
    const BootstrapOptions& options) {
  const BucketCounts a = CompactBuckets(baseline);
  const BucketCounts b = CompactBuckets(other);
  std::vector<PercentileDifference> out;
  for (const double p : percentiles) {
    PercentileDifference d;
    d.percentile = p;
    d.baseline_ns = PercentileOfCounts(a.value_ns, a.count, a.total, p);
    d.other_ns = PercentileOfCounts(b.value_ns, b.count, b.total, p);
    out.push_back(d);
  }
  if (a.total == 0 || b.total == 0 || options.replicates < 1) return out;

  std::mt19937_64 rng(options.seed);
  const auto replicates = static_cast<size_t>(options.replicates);
  std::vector<std::vector<double>> diffs(percentiles.size());
  for (auto& v : diffs) v.reserve(replicates);
  RankSampler sample_a(a, percentiles);
  RankSampler sample_b(b, percentiles);
  for (size_t r = 0; r < replicates; ++r) {
    const std::vector<int64_t>& va = sample_a.Draw(rng);
    const std::vector<int64_t>& vb = sample_b.Draw(rng);
    for (size_t i = 0; i < percentiles.size(); ++i) {
      diffs[i].push_back(static_cast<double>(vb[i] - va[i]));
    }
  }
  const double alpha = 1.0 - std::clamp(options.confidence, 0.0, 1.0);
  for (size_t i = 0; i < percentiles.size(); ++i) {
    std::sort(diffs[i].begin(), diffs[i].end());
    out[i].lo_ns = SortedQuantile(diffs[i], alpha / 2);
    out[i].hi_ns = SortedQuantile(diffs[i], 1.0 - alpha / 2);
  }
  return out;
}

double KolmogorovQ(double x) {
  if (x <= 0) return 1.0;
  if (x < 1.18) {
    // The alternating series converges slowly for small x; use the Jacobi-theta form
    // K(x) = sqrt(2 pi)/x * sum_k exp(-(2k-1)^2 pi^2 / (8 x^2)), which converges fast there.
    const double pi = std::numbers::pi;
    double cdf = 0;
    for (int k = 1; k <= 20; ++k) {
      const double odd = 2.0 * k - 1.0;
      cdf += std::exp(-odd * odd * pi * pi / (8.0 * x * x));
    }
    cdf *= std::sqrt(2.0 * pi) / x;
    return std::clamp(1.0 - cdf, 0.0, 1.0);
  }
  double q = 0;
  double sign = 1;
  for (int j = 1; j <= 100; ++j) {
    const double term = std::exp(-2.0 * j * j * x * x);
    q += sign * 2.0 * term;
    if (term < 1e-17) break;
    sign = -sign;
  }
  return std::clamp(q, 0.0, 1.0);
}

KsResult KolmogorovSmirnov(const Histogram& baseline, const Histogram& other) {
  KsResult r;
  r.n_baseline = baseline.count();
  r.n_other = other.count();
  if (r.n_baseline == 0 || r.n_other == 0) return r;
  // Both histograms share one bucket layout, so walking the two ascending bucket lists
  // together visits every edge where either empirical CDF steps.
  const BucketCounts a = CompactBuckets(baseline);
  const BucketCounts b = CompactBuckets(other);
  std::vector<int64_t> lo_a;
  std::vector<int64_t> lo_b;
  baseline.ForEachBucket([&](Histogram::Range range, uint64_t) { lo_a.push_back(range.lo); });
  other.ForEachBucket([&](Histogram::Range range, uint64_t) { lo_b.push_back(range.lo); });
  uint64_t seen_a = 0;
  uint64_t seen_b = 0;
  size_t i = 0;
  size_t j = 0;
  const auto na = static_cast<double>(r.n_baseline);
  const auto nb = static_cast<double>(r.n_other);
  while (i < lo_a.size() || j < lo_b.size()) {
    const int64_t key =
        std::min(i < lo_a.size() ? lo_a[i] : INT64_MAX, j < lo_b.size() ? lo_b[j] : INT64_MAX);
    if (i < lo_a.size() && lo_a[i] == key) seen_a += a.count[i++];
    if (j < lo_b.size() && lo_b[j] == key) seen_b += b.count[j++];
    const double gap =
        std::fabs(static_cast<double>(seen_a) / na - static_cast<double>(seen_b) / nb);
    r.d = std::max(r.d, gap);
  }
  const double ne = na * nb / (na + nb);
  const double root = std::sqrt(ne);
  r.p_value = KolmogorovQ((root + 0.12 + 0.11 / root) * r.d);
  return r;
}

std::string RatioWording(double baseline, double other) {
  if (ExactlyEqual(baseline, other)) return "same";
  if (baseline <= 0 || other <= 0) return other < baseline ? "lower" : "higher";
  // Below 1.1 one decimal would print "1.0 x lower" for a real, if small, difference.
  auto factor = [](double ratio) {
    return ratio < 1.1 ? fmt::format("{:.2f}", ratio) : fmt::format("{:.1f}", ratio);
  };
  if (other < baseline) return factor(baseline / other) + " x lower";
  return factor(other / baseline) + " x higher";
}

std::string PercentChange(double baseline, double other) {
  if (ExactlyEqual(baseline, other)) return "0 %";
  if (ExactlyEqual(baseline, 0)) return "n/a";
  const double percent = std::round((other - baseline) / std::fabs(baseline) * 100.0);
  if (ExactlyEqual(percent, 0)) return "0 %";
  return fmt::format("{:+.0f} %", percent);
}

std::string DifferenceWording(double baseline, double other, const PercentileDifference* ci) {
  if (ci != nullptr && !ci->Significant()) return "no significant difference";
  const std::string ratio = RatioWording(baseline, other);
  if (ratio == "same") return ratio;
  return fmt::format("{} ({})", ratio, PercentChange(baseline, other));
}

}  // namespace rtpulse::stats
