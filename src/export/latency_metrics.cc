#include "export/latency_metrics.h"

#include <fmt/format.h>

#include <array>

namespace rtpulse::exporter {
namespace {

constexpr double kNsPerSecond = 1e9;

constexpr std::array<int64_t, 51> kBoundsNs = [] {
  constexpr std::array<int64_t, 10> kMantissa = {100, 125, 160, 200, 250, 320, 400, 500, 640, 800};
  std::array<int64_t, 51> bounds{};
  int64_t decade = 10;  // 1 us = 100 * 10 ns
  size_t i = 0;
  for (int d = 0; d < 5; ++d, decade *= 10) {
    for (int64_t m : kMantissa) bounds[i++] = m * decade;
  }
  bounds[i] = 100 * decade;  // 100 ms
  return bounds;
}();
static_assert(kBoundsNs.front() == 1'000 && kBoundsNs.back() == 100'000'000);

double Seconds(int64_t ns) {
  return static_cast<double>(ns) / kNsPerSecond;
}

Labels With(Labels labels, std::string name, std::string value) {
  labels.push_back({std::move(name), std::move(value)});
  return labels;
}

MetricFamily Family(std::string name, std::string help, MetricType type, std::string unit = "") {
  MetricFamily f;
  f.name = std::move(name);
  f.help = std::move(help);
  f.type = type;
  f.unit = std::move(unit);
  return f;
}

void AppendHistogram(const ProbeSeries& s, MetricFamily& family) {
  const Histogram& h = s.probe->histogram;
  const std::vector<uint64_t> counts = CumulativeCounts(h, kBoundsNs);
  for (size_t i = 0; i < kBoundsNs.size(); ++i) {
    family.samples.push_back({"_bucket", With(s.labels, "le", FormatValue(Seconds(kBoundsNs[i]))),
                              static_cast<double>(counts[i])});
  }
  family.samples.push_back(
      {"_bucket", With(s.labels, "le", "+Inf"), static_cast<double>(counts.back())});
  family.samples.push_back({"_sum", s.labels, Seconds(h.sum())});
  family.samples.push_back({"_count", s.labels, static_cast<double>(h.count())});
}

}  // namespace

std::span<const int64_t> LatencyBucketBoundsNs() {
  return kBoundsNs;
}

std::vector<uint64_t> CumulativeCounts(const Histogram& histogram,
                                       std::span<const int64_t> bounds_ns) {
  std::vector<uint64_t> counts(bounds_ns.size() + 1, 0);
  size_t bound = 0;
  histogram.ForEachBucket([&](Histogram::Range r, uint64_t n) {
    // Buckets come in ascending order: the first bound at or above the bucket's upper edge
    // only moves up.
    while (bound < bounds_ns.size() && bounds_ns[bound] < r.hi) ++bound;
    counts[bound] += n;
  });
  for (size_t i = 1; i < counts.size(); ++i) counts[i] += counts[i - 1];
  return counts;
}

Labels ProbeLabels(const results::ProbeResult& probe) {
  return {{"cpu", probe.cpu >= 0 ? fmt::format("{}", probe.cpu) : "any"},
          {"thread", fmt::format("{}", probe.index)},
          {"wake", probe.wake}};
}

void AppendLatencyFamilies(const std::vector<ProbeSeries>& series, bool injecting,
                           std::vector<MetricFamily>& out) {
  MetricFamily histogram =
      Family("rtpulse_latency_seconds",
             "Wake-up latency of each activation (actual - expected wake-up), since the start",
             MetricType::kHistogram, "seconds");
  MetricFamily min = Family("rtpulse_latency_min_seconds", "Lowest latency since the start (exact)",
                            MetricType::kGauge, "seconds");
  MetricFamily max =
      Family("rtpulse_latency_max_seconds", "Highest latency since the start (exact)",
             MetricType::kGauge, "seconds");
  MetricFamily percentile = Family(
      "rtpulse_latency_percentile_seconds",
      "Nearest-rank percentile since the start from rtpulse's own histogram (at most 0.195 % "
      "above the sample)",
      MetricType::kGauge, "seconds");
  MetricFamily missed =
      Family("rtpulse_missed_activations", "Wake-ups that came after the next period's deadline",
             MetricType::kCounter);
  MetricFamily skipped =
      Family("rtpulse_skipped_periods",
             "Periods with no activation because an earlier one was late", MetricType::kCounter);
  MetricFamily interval =
      Family("rtpulse_probe_interval_seconds", "The probe's period", MetricType::kGauge, "seconds");
  MetricFamily degraded = Family(
      "rtpulse_probe_degraded",
      "1 when the probe runs without the policy, priority, affinity or memory lock it asked for",
      MetricType::kGauge);
  MetricFamily injected =
      Family("rtpulse_injected_delays",
             "Ground-truth delays injected on the probe's CPU (--inject)", MetricType::kCounter);
  for (const ProbeSeries& s : series) {
    const results::ProbeResult& p = *s.probe;
    AppendHistogram(s, histogram);
    if (p.histogram.count() > 0) {
      min.samples.push_back({"", s.labels, Seconds(p.histogram.min())});
      max.samples.push_back({"", s.labels, Seconds(p.histogram.max())});
      for (double q : kExportedPercentiles) {
        percentile.samples.push_back(
            {"", With(s.labels, "percentile", FormatValue(q)), Seconds(p.histogram.Percentile(q))});
      }
    }
    if (!p.misses_not_counted) {
      missed.samples.push_back({"_total", s.labels, static_cast<double>(p.missed_activations)});
      skipped.samples.push_back({"_total", s.labels, static_cast<double>(p.skipped_periods)});
    }
    if (p.interval_ns > 0) interval.samples.push_back({"", s.labels, Seconds(p.interval_ns)});
    degraded.samples.push_back({"", s.labels, p.degraded ? 1.0 : 0.0});
    if (injecting) {
      injected.samples.push_back({"_total", s.labels, static_cast<double>(p.injections)});
    }
  }
  for (MetricFamily* f :
       {&histogram, &min, &max, &percentile, &missed, &skipped, &interval, &degraded}) {
    out.push_back(std::move(*f));
  }
  if (injecting) out.push_back(std::move(injected));
}

}  // namespace rtpulse::exporter
