#include "stats/summary.h"

#include "core/float_compare.h"

namespace rtpulse::stats {

std::string_view PercentileLabel(double p) {
  if (ExactlyEqual(p, 50.0)) return "p50";
  if (ExactlyEqual(p, 90.0)) return "p90";
  if (ExactlyEqual(p, 95.0)) return "p95";
  if (ExactlyEqual(p, 99.0)) return "p99";
  if (ExactlyEqual(p, 99.9)) return "p99.9";
  if (ExactlyEqual(p, 99.99)) return "p99.99";
  if (ExactlyEqual(p, 99.999)) return "p99.999";
  return "p?";
}

Summary Summarize(const Histogram& histogram) {
  Summary s;
  s.count = histogram.count();
  s.min_ns = histogram.min();
  s.max_ns = histogram.max();
  s.mean_ns = histogram.Mean();
  s.stddev_ns = histogram.StdDev();
  for (size_t i = 0; i < kPercentiles.size(); ++i) {
    s.percentile_ns[i] = histogram.Percentile(kPercentiles[i]);
  }
  s.negative = histogram.negative_count();
  s.top_bucket = histogram.top_bucket_count();
  return s;
}

}  // namespace rtpulse::stats
