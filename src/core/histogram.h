#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <vector>

namespace rtpulse {

/// Exact 128-bit accumulator for sums of squares (GCC/Clang extension on 64-bit targets).
__extension__ using Int128 = __int128;
__extension__ using UInt128 = unsigned __int128;

/// a + b with two's-complement wrap-around instead of signed overflow (undefined behaviour):
/// the sum of squares of values near 2^63 ns (only hostile input has them) can pass 2^127.
/// The same add instructions as `a + b`.
inline Int128 WrappingAdd(Int128 a, Int128 b) {
  return static_cast<Int128>(static_cast<UInt128>(a) + static_cast<UInt128>(b));
}

/// Latency histogram with a stated error bound, O(1) allocation-free recording and an exact
/// count of everything recorded.
///
/// Layout (log-linear, like HdrHistogram): magnitudes below 2^9 = 512 ns each have their own
/// bucket (exact). Above that, every power of two [2^e, 2^(e+1)) is split into 512 equal
/// buckets, so a bucket spans at most 1/512 (0.195 %) of its lower edge. Magnitudes from
/// 2^40 ns (about 18.3 minutes) upwards share one top bucket; they are still counted and
/// the exact min/max/sum keep their values, so nothing is ever dropped. Negative values
/// (a wake-up before its deadline) live in a mirrored set of buckets and are never wrapped.
///
/// Single writer, many readers: the probe thread records; a monitoring thread may read
/// counters concurrently through the Live*() accessors (relaxed atomics, no locks).
class Histogram {
 public:
  static constexpr int kSubBucketBits = 9;
  static constexpr int64_t kSubBuckets = int64_t{1} << kSubBucketBits;  // 512
  static constexpr int kTopExponent = 40;  ///< |v| >= 2^40 ns goes to the top bucket.
  // Magnitudes below 2^10 take indices [0, 1024); each later power of two 2^e takes the 512
  // indices after that, so 2^39 .. 2^40-1 ends at 16383 and the top bucket is 16384.
  static constexpr size_t kTopIndex =
      static_cast<size_t>((kTopExponent - kSubBucketBits + 1) * kSubBuckets);  // 16384
  static constexpr size_t kBucketsPerSign = kTopIndex + 1;
  /// Upper bound of (bucket width / bucket lower edge) for any bucket below the top one.
  static constexpr double kMaxRelativeError = 1.0 / static_cast<double>(kSubBuckets);

  /// Value range covered by one bucket (both edges inclusive).
  struct Range {
    int64_t lo;
    int64_t hi;
  };

  /// Allocates and zero-fills every bucket, so recording never touches a new page.
  Histogram();

  /// Records one value. O(1); no allocation, no lock, no branch on the value's size
  /// beyond the bucket computation.
  void Record(int64_t value_ns) {
    // The probe loop's hot path: inline, one bucket, no multiply by a count, and min/max
    // start at sentinels so there is no first-sample branch.
    const auto bits = static_cast<uint64_t>(value_ns);
    uint64_t* buckets = pos_.data();
    uint64_t magnitude = bits;
    if (value_ns < 0) {
      buckets = neg_.data();
      magnitude = ~bits + 1;  // unsigned negate: INT64_MIN does not overflow
      Store(negative_count_, negative_count_ + 1);
    }
    uint64_t& bucket = buckets[IndexOf(magnitude)];
    Store(bucket, bucket + 1);
    if (value_ns < min_) Store(min_, value_ns);
    if (value_ns > max_) Store(max_, value_ns);
    Store(count_, count_ + 1);
    Store(sum_, static_cast<int64_t>(static_cast<uint64_t>(sum_) + bits));
    sum_sq_ = WrappingAdd(sum_sq_, static_cast<Int128>(value_ns) * value_ns);
  }
  /// Records `n` values at once, with the running count, extremes and sums kept in
  /// registers between them (the importers' bulk path). Same result as n Record() calls.
  void RecordMany(const int64_t* values, size_t n);
  /// Records `n` copies of one value (used when importing other tools' histograms).
  void RecordN(int64_t value_ns, uint64_t n);
  /// Rebuilds the exact moments after buckets were restored with RecordN() from a
  /// serialised histogram (bucket lower edges): the exact min, max and sum that were saved
  /// beside the buckets, and the sum of squares from the saved standard deviation
  /// (population). Used by the result readers (report, compare, import).
  void RestoreMoments(int64_t min_ns, int64_t max_ns, int64_t sum_ns, double stddev_ns);
  /// Adds every count of `other` into this histogram (exact: counts, min, max, sums).
  void Merge(const Histogram& other);
  void Reset();

  uint64_t count() const { return count_; }
  int64_t min() const { return count_ == 0 ? 0 : min_; }  ///< Exact; 0 when empty.
  int64_t max() const { return count_ == 0 ? 0 : max_; }  ///< Exact; 0 when empty.
  int64_t sum() const { return sum_; }                    ///< Exact sum of recorded values (ns).
  /// Sum of squares, for the standard deviation: exact, unless approximate_moments().
  Int128 sum_of_squares() const { return sum_sq_; }
  /// True for a LiveCopyTo() copy (and anything merged from one): its sum of squares was
  /// rebuilt from bucket midpoints, so StdDev() is approximate to about a bucket width.
  bool approximate_moments() const { return approximate_moments_; }
  /// Values that landed in the top bucket (|v| >= 2^40 ns); reported, never hidden.
  uint64_t top_bucket_count() const { return pos_[kTopIndex] + neg_[kTopIndex]; }
  uint64_t negative_count() const { return negative_count_; }

  double Mean() const;
  /// Population standard deviation (divides by N), computed from exact sums (approximate
  /// to about a bucket width when approximate_moments()).
  double StdDev() const;
  /// Nearest-rank value: the smallest recorded value v such that at least `rank` values
  /// are <= v, reported as its bucket's upper edge and clamped to [min, max]. 1-based rank.
  int64_t ValueAtRank(uint64_t rank) const;
  /// Nearest-rank percentile, p in [0, 100]: rank = ceil(p/100 * N), at least 1.
  int64_t Percentile(double p) const;
  /// The nearest rank itself: ceil(p/100 * n) in [1, n] (n > 0), guarded against floating
  /// point (99.9 % of 1000 is rank 999, not 1000); NaN means p = 100. Every percentile in
  /// rtpulse uses it.
  static uint64_t NearestRank(double p, uint64_t n);
  /// Number of recorded values >= threshold_ns, exact when threshold_ns is a bucket edge
  /// (and always exact below 512 ns); otherwise counts the whole bucket holding it.
  uint64_t CountAtOrAbove(int64_t threshold_ns) const;

  /// Calls fn(Range, count) for every non-empty bucket in ascending value order.
  template <typename Fn>
  void ForEachBucket(Fn&& fn) const {
    for (size_t i = kBucketsPerSign; i-- > 0;) {
      if (neg_[i] != 0) {
        const Range r = MagnitudeRange(i);
        fn(Range{-r.hi, -r.lo}, neg_[i]);
      }
    }
    for (size_t i = 0; i < kBucketsPerSign; ++i) {
      if (pos_[i] != 0) fn(MagnitudeRange(i), pos_[i]);
    }
  }

  /// Bucket index of a magnitude (|value|). Branch-free: magnitudes are clamped to 2^40,
  /// whose index is the top bucket's; OR-ing in 512 makes every magnitude below 1024 take
  /// exponent 9, shift 0, so it is its own index.
  static size_t IndexOf(uint64_t magnitude) {
    constexpr uint64_t kTopMagnitude = uint64_t{1} << kTopExponent;
    const uint64_t m = magnitude < kTopMagnitude ? magnitude : kTopMagnitude;
    const int exponent = 63 - __builtin_clzll(m | static_cast<uint64_t>(kSubBuckets));
    const int shift = exponent - kSubBucketBits;
    return (static_cast<size_t>(shift) << kSubBucketBits) + static_cast<size_t>(m >> shift);
  }
  /// Magnitudes covered by a bucket index (inclusive).
  static Range MagnitudeRange(size_t index);

  // Relaxed reads for a thread other than the writer (live view, SIGUSR1).
  uint64_t LiveCount() const { return Load(count_); }
  int64_t LiveMin() const { return LiveCount() == 0 ? 0 : Load(min_); }
  int64_t LiveMax() const { return LiveCount() == 0 ? 0 : Load(max_); }
  int64_t LiveSum() const { return Load(sum_); }
  /// Approximate percentile from a racy snapshot of the buckets (live view only).
  int64_t LivePercentile(double p) const;
  /// Copies this histogram into `out` (same layout, preallocated: no allocation) while the
  /// writer may still be recording, for checkpoints of a running measurement. Buckets are
  /// read with relaxed atomic loads, so the copy may miss the samples in flight, but it is
  /// internally consistent: count and negative_count are the sums of the copied buckets,
  /// min/max are the live extremes clamped into the lowest/highest copied bucket, and the
  /// sum (the live one) is clamped to [count*min, count*max]. The 128-bit sum of squares
  /// cannot be read atomically; it is rebuilt from bucket midpoints (exact below 1024 ns)
  /// and `out.approximate_moments()` is set. Successive copies by one reader never count
  /// fewer samples. Never call it with `out` == *this.
  void LiveCopyTo(Histogram& out) const;

 private:
  static constexpr std::memory_order kRelaxed = std::memory_order_relaxed;

  template <typename T>
  static T Load(const T& slot) {
    // atomic_ref needs a non-const object; the load itself does not modify it.
    return std::atomic_ref<T>(const_cast<T&>(slot)).load(kRelaxed);
  }
  template <typename T>
  static void Store(T& slot, T value) {
    std::atomic_ref<T>(slot).store(value, kRelaxed);
  }

  std::vector<uint64_t> pos_;
  std::vector<uint64_t> neg_;
  uint64_t count_ = 0;
  uint64_t negative_count_ = 0;
  // Sentinels while empty (min()/max() report 0 then).
  int64_t min_ = std::numeric_limits<int64_t>::max();
  int64_t max_ = std::numeric_limits<int64_t>::min();
  int64_t sum_ = 0;
  Int128 sum_sq_ = 0;
  bool approximate_moments_ = false;
};

}  // namespace rtpulse
