// Latency results as Prometheus metric families (docs/fleet.md#metrics): the histogram with
// buckets chosen for latency, the exact extremes and percentiles of rtpulse's own histogram,
// missed activations and skipped periods as counters.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "core/histogram.h"
#include "export/exposition.h"
#include "results/latency_result.h"

namespace rtpulse::exporter {

/// The upper bounds (`le`) of rtpulse_latency_seconds, in ns: 1 us to 100 ms, ten a decade
/// (1, 1.25, 1.6, 2, 2.5, 3.2, 4, 5, 6.4, 8 times a power of ten), 51 bounds and +Inf.
/// Neighbours differ by at most 28 %, which bounds histogram_quantile()'s interpolation
/// error inside a bucket (docs/fleet.md#error-bound).
std::span<const int64_t> LatencyBucketBoundsNs();

/// counts[i]: the values of `histogram` at or below bounds_ns[i]; one more entry at the end
/// for +Inf (every value). rtpulse's own bucket that straddles a bound (at most 0.195 % of
/// the bound wide; none below 1024 ns) is counted above it, so a value less than one such
/// bucket below a bound can land in the next Prometheus bucket up, never in a lower one.
/// Negative latencies are at or below every bound.
std::vector<uint64_t> CumulativeCounts(const Histogram& histogram,
                                       std::span<const int64_t> bounds_ns);

/// The percentiles rtpulse_latency_percentile_seconds carries.
inline constexpr double kExportedPercentiles[] = {50.0, 99.0, 99.9, 99.99};

/// One probe's series: its identifying labels (cpu, wake and, in a suite, scenario).
struct ProbeSeries {
  Labels labels;
  const results::ProbeResult* probe = nullptr;
};

/// The standard labels of a probe: `cpu` (the pinned CPU, "any" when free to migrate),
/// `thread` (cyclictest's thread number) and `wake` (the wake path).
Labels ProbeLabels(const results::ProbeResult& probe);

/// Appends the latency families of `series` (every family, even when `series` is empty, so
/// a scrape always describes them): rtpulse_latency_seconds (histogram),
/// rtpulse_latency_{min,max}_seconds and rtpulse_latency_percentile_seconds (from rtpulse's
/// histogram, since the start; absent for a probe with no sample yet),
/// rtpulse_missed_activations_total, rtpulse_skipped_periods_total,
/// rtpulse_probe_interval_seconds, rtpulse_probe_degraded and, when `injecting`,
/// rtpulse_injected_delays_total.
void AppendLatencyFamilies(const std::vector<ProbeSeries>& series, bool injecting,
                           std::vector<MetricFamily>& out);

}  // namespace rtpulse::exporter
