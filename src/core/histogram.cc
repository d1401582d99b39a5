#include "core/histogram.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace rtpulse {

Histogram::Histogram() : pos_(kBucketsPerSign, 0), neg_(kBucketsPerSign, 0) {}

void Histogram::RecordN(int64_t value_ns, uint64_t n) {
  if (n == 0) return;
  const bool negative = value_ns < 0;
  // Magnitude in unsigned arithmetic so INT64_MIN does not overflow.
  const uint64_t magnitude = negative ? (~static_cast<uint64_t>(value_ns) + 1)
                                      : static_cast<uint64_t>(value_ns);
  uint64_t& bucket = negative ? neg_[IndexOf(magnitude)] : pos_[IndexOf(magnitude)];
  Store(bucket, bucket + n);
  if (negative) Store(negative_count_, negative_count_ + n);
  if (value_ns < min_) Store(min_, value_ns);
  if (value_ns > max_) Store(max_, value_ns);
  Store(count_, count_ + n);
  Store(sum_, static_cast<int64_t>(static_cast<uint64_t>(sum_) +
                                   static_cast<uint64_t>(value_ns) * n));
  sum_sq_ += static_cast<Int128>(value_ns) * value_ns * static_cast<Int128>(n);
}

void Histogram::Merge(const Histogram& other) {
  if (other.count_ == 0) return;
  for (size_t i = 0; i < kBucketsPerSign; ++i) {
    pos_[i] += other.pos_[i];
    neg_[i] += other.neg_[i];
  }
  min_ = std::min(min_, other.min_);
  max_ = std::max(max_, other.max_);
  count_ += other.count_;
  negative_count_ += other.negative_count_;
  sum_ += other.sum_;
  sum_sq_ += other.sum_sq_;
}

void Histogram::Reset() {
  std::fill(pos_.begin(), pos_.end(), 0);
  std::fill(neg_.begin(), neg_.end(), 0);
  count_ = negative_count_ = 0;
  min_ = std::numeric_limits<int64_t>::max();
  max_ = std::numeric_limits<int64_t>::min();
  sum_ = 0;
  sum_sq_ = 0;
}

Histogram::Range Histogram::MagnitudeRange(size_t index) {
  if (index >= kTopIndex) {
    return {int64_t{1} << kTopExponent, std::numeric_limits<int64_t>::max()};
  }
  if (index < static_cast<size_t>(2 * kSubBuckets)) {
    return {static_cast<int64_t>(index), static_cast<int64_t>(index)};
  }
  const size_t level = index / static_cast<size_t>(kSubBuckets);  // >= 2
  const int shift = static_cast<int>(level) - 1;
  const int64_t sub = static_cast<int64_t>(index % static_cast<size_t>(kSubBuckets)) + kSubBuckets;
  const int64_t lo = sub << shift;
  return {lo, lo + (int64_t{1} << shift) - 1};
}

double Histogram::Mean() const {
  if (count_ == 0) return 0.0;
  return static_cast<double>(static_cast<long double>(sum_) / static_cast<long double>(count_));
}

double Histogram::StdDev() const {
  if (count_ < 2) return 0.0;
  // N * sum(x^2) - sum(x)^2 = N^2 * variance, in exact integers while it fits in 128 bits.
  // The long double fallback subtracts two rounded sums: above 2^64 (e.g. 10 s latencies)
  // it loses a small spread entirely.
  Int128 n_sum_sq = 0;
  if (!__builtin_mul_overflow(static_cast<Int128>(count_), sum_sq_, &n_sum_sq)) {
    const Int128 n2_var = n_sum_sq - static_cast<Int128>(sum_) * sum_;  // >= 0 (Cauchy-Schwarz)
    return static_cast<double>(std::sqrt(static_cast<long double>(n2_var)) /
                               static_cast<long double>(count_));
  }
  const auto n = static_cast<long double>(count_);
  const auto sum = static_cast<long double>(sum_);
  const long double m2 = static_cast<long double>(sum_sq_) - sum * sum / n;
  return m2 <= 0 ? 0.0 : static_cast<double>(std::sqrt(m2 / n));
}

int64_t Histogram::ValueAtRank(uint64_t rank) const {
  if (count_ == 0) return 0;
  rank = std::clamp<uint64_t>(rank, 1, count_);
  uint64_t seen = 0;
  // Scan only the buckets between min and max (latencies are rarely negative).
  if (min_ < 0) {
    const uint64_t min_magnitude = ~static_cast<uint64_t>(min_) + 1;
    for (size_t i = IndexOf(min_magnitude) + 1; i-- > 0;) {
      seen += neg_[i];
      if (seen >= rank) return std::clamp(-MagnitudeRange(i).lo, min_, max_);
    }
  }
  const size_t first = min_ > 0 ? IndexOf(static_cast<uint64_t>(min_)) : 0;
  for (size_t i = first; i < kBucketsPerSign; ++i) {
    seen += pos_[i];
    if (seen >= rank) return std::clamp(MagnitudeRange(i).hi, min_, max_);
  }
  return max_;
}

namespace {
uint64_t NearestRank(double p, uint64_t n) {
  // NaN asks for nothing meaningful; answer with the maximum rather than undefined behaviour.
  const double clamped = std::isnan(p) ? 100.0 : std::clamp(p, 0.0, 100.0);
  // ceil(p/100 * n) computed with a guard against 99.9 * 1000 / 100 = 999.0000001.
  const long double exact = static_cast<long double>(clamped) * n / 100.0L;
  auto rank = static_cast<uint64_t>(std::ceil(exact - 1e-9L));
  return std::clamp<uint64_t>(rank, 1, n);
}
}  // namespace

int64_t Histogram::Percentile(double p) const {
  if (count_ == 0) return 0;
  return ValueAtRank(NearestRank(p, count_));
}

uint64_t Histogram::CountAtOrAbove(int64_t threshold_ns) const {
  uint64_t total = 0;
  ForEachBucket([&](Range r, uint64_t c) {
    if (r.hi >= threshold_ns) total += c;
  });
  return total;
}

int64_t Histogram::LivePercentile(double p) const {
  const uint64_t n = LiveCount();
  if (n == 0) return 0;
  const uint64_t rank = NearestRank(p, n);
  uint64_t seen = 0;
  auto load = [](const uint64_t& slot) { return Load(slot); };
  const bool any_negative = Load(negative_count_) > 0;
  for (size_t i = kBucketsPerSign; any_negative && i-- > 0;) {
    seen += load(neg_[i]);
    if (seen >= rank) return std::min(-MagnitudeRange(i).lo, LiveMax());
  }
  for (size_t i = 0; i < kBucketsPerSign; ++i) {
    seen += load(pos_[i]);
    if (seen >= rank) return std::min(MagnitudeRange(i).hi, LiveMax());
  }
  return LiveMax();
}

}  // namespace rtpulse
