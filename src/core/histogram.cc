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
  const uint64_t magnitude =
      negative ? (~static_cast<uint64_t>(value_ns) + 1) : static_cast<uint64_t>(value_ns);
  uint64_t& bucket = negative ? neg_[IndexOf(magnitude)] : pos_[IndexOf(magnitude)];
  Store(bucket, bucket + n);
  if (negative) Store(negative_count_, negative_count_ + n);
  if (value_ns < min_) Store(min_, value_ns);
  if (value_ns > max_) Store(max_, value_ns);
  Store(count_, count_ + n);
  Store(sum_,
        static_cast<int64_t>(static_cast<uint64_t>(sum_) + static_cast<uint64_t>(value_ns) * n));
  sum_sq_ = WrappingAdd(
      sum_sq_, static_cast<Int128>(static_cast<UInt128>(static_cast<Int128>(value_ns) * value_ns) *
                                   static_cast<UInt128>(n)));
}

void Histogram::RecordMany(const int64_t* values, size_t n) {
  // Two passes: the moments (no stores in the loop), then the buckets.
  int64_t lo = min_;
  int64_t hi = max_;
  uint64_t sum = static_cast<uint64_t>(sum_);
  Int128 sum_sq = sum_sq_;
  for (size_t k = 0; k < n; ++k) {
    const int64_t v = values[k];
    lo = std::min(lo, v);
    hi = std::max(hi, v);
    sum += static_cast<uint64_t>(v);
    sum_sq = WrappingAdd(sum_sq, static_cast<Int128>(v) * v);
  }
  // Buckets through Store(), like Record(): live readers may copy this histogram.
  uint64_t negatives = 0;
  if (lo >= 0) {
    for (size_t k = 0; k < n; ++k) {
      uint64_t& bucket = pos_[IndexOf(static_cast<uint64_t>(values[k]))];
      Store(bucket, bucket + 1);
    }
  } else {
    for (size_t k = 0; k < n; ++k) {
      const auto bits = static_cast<uint64_t>(values[k]);
      uint64_t& bucket = values[k] < 0 ? neg_[IndexOf(~bits + 1)] : pos_[IndexOf(bits)];
      negatives += values[k] < 0 ? 1 : 0;
      Store(bucket, bucket + 1);
    }
  }
  Store(negative_count_, negative_count_ + negatives);
  Store(min_, lo);
  Store(max_, hi);
  Store(count_, count_ + n);
  Store(sum_, static_cast<int64_t>(sum));
  sum_sq_ = sum_sq;
}

void Histogram::RestoreMoments(int64_t min_ns, int64_t max_ns, int64_t sum_ns, double stddev_ns) {
  if (count_ == 0) return;
  min_ = min_ns;
  max_ = max_ns;
  sum_ = sum_ns;
  // N * sum_sq = var * N^2 + sum^2  (population variance).
  const long double n = static_cast<long double>(count_);
  const long double mean = static_cast<long double>(sum_ns) / n;
  const long double sd = static_cast<long double>(stddev_ns);
  const long double var = sd * sd;
  sum_sq_ = static_cast<Int128>((var + mean * mean) * n + 0.5L);
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
  // Wraps like Record()'s running sum (unsigned add), never signed overflow.
  sum_ = static_cast<int64_t>(static_cast<uint64_t>(sum_) + static_cast<uint64_t>(other.sum_));
  sum_sq_ = WrappingAdd(sum_sq_, other.sum_sq_);
  approximate_moments_ = approximate_moments_ || other.approximate_moments_;
}

void Histogram::Reset() {
  std::fill(pos_.begin(), pos_.end(), 0);
  std::fill(neg_.begin(), neg_.end(), 0);
  count_ = negative_count_ = 0;
  min_ = std::numeric_limits<int64_t>::max();
  max_ = std::numeric_limits<int64_t>::min();
  sum_ = 0;
  sum_sq_ = 0;
  approximate_moments_ = false;
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
    // >= 0 by Cauchy-Schwarz for exact sums; a live copy's midpoint sum of squares may fall
    // just below it when every sample sits in one bucket.
    const Int128 n2_var = n_sum_sq - static_cast<Int128>(sum_) * sum_;
    if (n2_var <= 0) return 0.0;
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

uint64_t Histogram::NearestRank(double p, uint64_t n) {
  // NaN asks for nothing meaningful; answer with the maximum rather than undefined behaviour.
  const double clamped = std::isnan(p) ? 100.0 : std::clamp(p, 0.0, 100.0);
  // ceil(p/100 * n) computed with a guard against 99.9 * 1000 / 100 = 999.0000001.
  const long double exact = static_cast<long double>(clamped) * n / 100.0L;
  auto rank = static_cast<uint64_t>(std::ceil(exact - 1e-9L));
  return std::clamp<uint64_t>(rank, 1, n);
}

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

namespace {
/// a + b * c, saturating at the Int128 maximum (midpoint squares of 2^62 ns values times
/// large counts; only a live copy's approximate sum of squares ever gets near it).
Int128 AddProductSaturating(Int128 a, Int128 b, Int128 c) {
  constexpr Int128 kMax = (((Int128{1} << 126) - 1) << 1) + 1;  // 2^127 - 1
  Int128 product = 0;
  Int128 total = 0;
  if (__builtin_mul_overflow(b, c, &product) || __builtin_add_overflow(a, product, &total)) {
    return kMax;
  }
  return total;
}
}  // namespace

void Histogram::LiveCopyTo(Histogram& out) const {
  // Relaxed loads order nothing: the extremes and the sum may be older or newer than any
  // bucket read below. The clamps make the copy consistent with its own buckets either way.
  const int64_t live_min = Load(min_);
  const int64_t live_max = Load(max_);
  const int64_t live_sum = Load(sum_);
  uint64_t count = 0;
  uint64_t negative = 0;
  size_t lowest = 0;  // signed position: neg index i -> kBucketsPerSign - 1 - i, pos -> +i
  size_t highest = 0;
  bool any = false;
  auto note = [&](size_t position) {
    if (!any) lowest = position;
    highest = position;
    any = true;
  };
  for (size_t i = kBucketsPerSign; i-- > 0;) {
    const uint64_t c = Load(neg_[i]);
    out.neg_[i] = c;
    negative += c;
    if (c != 0) note(kBucketsPerSign - 1 - i);
  }
  for (size_t i = 0; i < kBucketsPerSign; ++i) {
    const uint64_t c = Load(pos_[i]);
    out.pos_[i] = c;
    count += c;
    if (c != 0) note(kBucketsPerSign + i);
  }
  count += negative;
  auto range_at = [](size_t position) {
    if (position >= kBucketsPerSign) return MagnitudeRange(position - kBucketsPerSign);
    const Range r = MagnitudeRange(kBucketsPerSign - 1 - position);
    // The negative top bucket also holds INT64_MIN, one past -INT64_MAX.
    return Range{
        r.hi == std::numeric_limits<int64_t>::max() ? std::numeric_limits<int64_t>::min() : -r.hi,
        -r.lo};
  };

  out.count_ = count;
  out.negative_count_ = negative;
  out.approximate_moments_ = true;
  out.sum_sq_ = 0;
  if (count == 0) {
    out.min_ = std::numeric_limits<int64_t>::max();
    out.max_ = std::numeric_limits<int64_t>::min();
    out.sum_ = 0;
    return;
  }
  const Range low = range_at(lowest);
  const Range high = range_at(highest);
  out.min_ = std::clamp(live_min, low.lo, low.hi);
  out.max_ = std::clamp(live_max, high.lo, high.hi);
  // Stale extremes can cross only inside a single shared bucket; both are in it.
  if (out.min_ > out.max_) out.max_ = out.min_;
  // Keep the mean inside [min, max]; a sum that wrapped (values near 2^63) is left alone.
  const Int128 sum_lo = static_cast<Int128>(out.min_) * count;
  const Int128 sum_hi = static_cast<Int128>(out.max_) * count;
  constexpr auto kI64Min = static_cast<Int128>(std::numeric_limits<int64_t>::min());
  constexpr auto kI64Max = static_cast<Int128>(std::numeric_limits<int64_t>::max());
  out.sum_ = live_sum;
  if (sum_lo >= kI64Min && sum_hi <= kI64Max) {
    out.sum_ = static_cast<int64_t>(std::clamp(static_cast<Int128>(live_sum), sum_lo, sum_hi));
  }
  out.ForEachBucket([&](Range r, uint64_t c) {
    // The midpoint stands for the bucket's samples; clamped so the top bucket's (2^40 ..
    // INT64_MAX) does not dwarf the real maximum.
    const int64_t mid = std::clamp(r.lo + (r.hi - r.lo) / 2, out.min_, out.max_);
    out.sum_sq_ =
        AddProductSaturating(out.sum_sq_, static_cast<Int128>(mid) * mid, static_cast<Int128>(c));
  });
}

}  // namespace rtpulse
