#pragma once

#include <array>
#include <cstdint>
#include <string_view>

#include "core/histogram.h"

namespace rtpulse::stats {

/// The percentiles every rtpulse summary reports, in percent.
inline constexpr std::array<double, 6> kPercentiles = {50.0, 90.0, 99.0, 99.9, 99.99, 99.999};

/// Short label for a percentile: 50 -> "p50", 99.9 -> "p99.9".
std::string_view PercentileLabel(double p);

/// Summary of one histogram. Percentiles use the nearest-rank method on the recorded values
/// (rank = ceil(p/100 * N)); each is reported as the upper edge of its histogram bucket,
/// clamped to the exact max, so it is never below the true value and at most 0.195 % above
/// it (exact below 512 ns). Mean and standard deviation are exact (population, divide by N).
struct Summary {
  uint64_t count = 0;
  int64_t min_ns = 0;
  int64_t max_ns = 0;
  double mean_ns = 0;
  double stddev_ns = 0;
  std::array<int64_t, kPercentiles.size()> percentile_ns{};
  uint64_t negative = 0;    ///< Samples below zero (early wake-ups).
  uint64_t top_bucket = 0;  ///< Samples >= 2^40 ns (histogram top bucket).
};

Summary Summarize(const Histogram& histogram);

/// The method statement every output carries next to its percentiles.
inline constexpr std::string_view kPercentileMethod =
    "nearest-rank (rank = ceil(p/100*N)); value = upper edge of its log-linear histogram "
    "bucket, clamped to the exact max: never below the true sample, at most 0.195% above it "
    "(exact below 512 ns)";

/// The statement for percentiles computed from a samples log (stats/exact_percentiles.h).
inline constexpr std::string_view kExactPercentileMethod =
    "nearest-rank (rank = ceil(p/100*N)); value = the sample of that rank, exact (from the "
    "samples log)";

}  // namespace rtpulse::stats
