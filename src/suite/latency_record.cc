#include "suite/latency_record.h"

#include <fmt/format.h>

#include <optional>
#include <utility>

#include "measure/wake_path.h"
#include "results/log_percentiles.h"
#include "suite/facts.h"

namespace rtpulse::suite {
namespace {

// A field added to one side and not the other must be carried here too; these trip when the
// layouts drift apart.
static_assert(sizeof(measure::SpikeRecord) == sizeof(results::Spike));
static_assert(sizeof(measure::LinearHistogramRecord) == sizeof(results::LinearHistogram));
// ProbeResult's import-only fields (bounds, latencies_not_printed, per_period_unknown,
// misses_not_counted, misses_unknown; last)
// have no probe record: rtpulse's own measurements are exact, print every latency and record
// every skipped period's. The record with those fields added must be exactly the result.
struct ProbeRecordWithImportFields : measure::ProbeRecord {
  results::StatBounds bounds;
  uint64_t latencies_not_printed;
  bool per_period_unknown;
  bool misses_not_counted;
  uint64_t misses_unknown;
};
static_assert(sizeof(ProbeRecordWithImportFields) == sizeof(results::ProbeResult));
// PathRun's exact percentiles (last) come from the samples log after the run, not from the
// probes.
struct PathRecordWithLogFields : measure::PathRecord {
  std::optional<results::ExactPathPercentiles> exact;
};
static_assert(sizeof(PathRecordWithLogFields) == sizeof(results::PathRun));
static_assert(sizeof(measure::BreakRecord) == sizeof(results::BreakTrace));

results::LinearHistogram ToLinear(measure::LinearHistogramRecord&& record) {
  results::LinearHistogram out;
  out.limit_us = record.limit_us;
  out.counts = std::move(record.counts);
  out.overflows = record.overflows;
  out.underflows = record.underflows;
  out.overflow_seqs = std::move(record.overflow_seqs);
  out.overflow_seqs_dropped = record.overflow_seqs_dropped;
  return out;
}

}  // namespace

results::ProbeResult ToProbeResult(measure::ProbeRecord&& record) {
  results::ProbeResult out;
  out.index = record.index;
  out.cpu = record.cpu;
  out.tid = record.tid;
  out.policy = std::move(record.policy);
  out.priority = record.priority;
  out.interval_ns = record.interval_ns;
  out.wake = std::move(record.wake);
  out.histogram = std::move(record.histogram);
  out.skipped_histogram = std::move(record.skipped_histogram);
  if (record.linear) out.linear = ToLinear(std::move(*record.linear));
  out.periods_elapsed = record.periods_elapsed;
  out.missed_activations = record.missed_activations;
  out.skipped_periods = record.skipped_periods;
  out.last_latency_ns = record.last_latency_ns;
  out.grid_restarts = record.grid_restarts;
  out.spikes.reserve(record.spikes.size());
  for (const auto& s : record.spikes) out.spikes.push_back({s.seq, s.expected_ns, s.latency_ns});
  out.spikes_not_kept = record.spikes_not_kept;
  out.samples_logged = record.samples_logged;
  out.samples_dropped = record.samples_dropped;
  out.injections = record.injections;
  out.injected_histogram = std::move(record.injected_histogram);
  out.smi_count = record.smi_count;
  out.degraded = record.degraded;
  out.notes = std::move(record.notes);
  return out;
}

results::ProbeResult ToProbeResult(const measure::ProbeRecord& record) {
  return ToProbeResult(measure::ProbeRecord(record));
}

results::PathRun ToPathRun(measure::PathRecord&& record) {
  results::PathRun out;
  out.wake = std::move(record.wake);
  out.start_realtime_ns = record.start_realtime_ns;
  out.end_realtime_ns = record.end_realtime_ns;
  out.duration_ns = record.duration_ns;
  out.probes.reserve(record.probes.size());
  for (auto& p : record.probes) out.probes.push_back(ToProbeResult(std::move(p)));
  return out;
}

results::PathRun ToPathRun(const measure::PathRecord& record) {
  results::PathRun out;
  out.wake = record.wake;
  out.start_realtime_ns = record.start_realtime_ns;
  out.end_realtime_ns = record.end_realtime_ns;
  out.duration_ns = record.duration_ns;
  out.probes.reserve(record.probes.size());
  for (const auto& p : record.probes) out.probes.push_back(ToProbeResult(p));
  return out;
}

results::LatencyRun ToLatencyRun(measure::RunRecord&& record) {
  results::LatencyRun out;
  out.start_realtime_ns = record.start_realtime_ns;
  out.end_realtime_ns = record.end_realtime_ns;
  out.paths.reserve(record.paths.size());
  for (auto& p : record.paths) out.paths.push_back(ToPathRun(std::move(p)));
  out.interrupted = record.interrupted;
  out.degraded = record.degraded;
  out.warnings = std::move(record.warnings);
  if (record.breaktrace) {
    const measure::BreakRecord& b = *record.breaktrace;
    out.breaktrace = results::BreakTrace{b.thread, b.seq, b.latency_ns, b.tracing_stopped};
  }
  out.dma_latency = std::move(record.dma_latency);
  out.samples_error = std::move(record.samples_error);
  out.samples_error_code = record.samples_error_code;
  return out;
}

std::vector<std::string> AddLogPercentiles(results::LatencyRun& run,
                                           const std::string& samples_path,
                                           std::span<const double> percentiles) {
  std::vector<std::string> warnings;
  for (auto& path : run.paths) {
    results::LogPercentileRequest request;
    request.samples_path = samples_path;
    if (auto wake = measure::WakePathFromName(path.wake)) {
      request.wake_path = static_cast<uint8_t>(*wake);
    }
    request.percentiles = percentiles;
    auto exact = results::ExactPercentilesFromLog(path, request);
    if (!exact) {
      warnings.push_back(fmt::format("{}: percentiles are histogram bucket edges, not exact: {}",
                                     path.wake, exact.error().message));
      continue;
    }
    if (!exact->per_period_note.empty()) {
      warnings.push_back(
          fmt::format("{}: per-period percentiles are histogram bucket edges, not exact: {}",
                      path.wake, exact->per_period_note));
    }
    path.exact = std::move(*exact);
  }
  return warnings;
}

void NoSamplesLogClaimed(results::LatencyRun& run) {
  for (auto& path : run.paths) {
    for (auto& p : path.probes) p.samples_logged = 0;
  }
  const std::string logged = "samples not logged (ring full: the writer or the disk fell behind)";
  for (auto& w : run.warnings) {
    if (const size_t at = w.find(logged); at != std::string::npos) {
      w.replace(at, logged.size(),
                "samples not seen by --explain (ring full: the explainer fell behind)");
    }
  }
}

void AddExactPercentiles(const std::string& samples_path, bool per_period, Measured& out) {
  for (auto& w : AddLogPercentiles(out.latency, samples_path, results::kLoggedPercentiles)) {
    out.warnings.push_back(std::move(w));
  }
  if (out.latency.paths.size() != 1 || !out.latency.paths.front().exact) return;
  const results::ExactPathPercentiles& e = *out.latency.paths.front().exact;
  out.exact_percentiles = results::PickSummaryPercentiles(e, e.all);
  if (per_period) {
    out.exact_per_period_percentiles = results::PickSummaryPercentiles(e, e.all_per_period);
  }
}

std::optional<results::InjectSettings> InjectSettingsOf(const measure::LatencyPlan& plan) {
  if (!plan.inject) return std::nullopt;
  return results::InjectSettings{plan.inject->delay_ns, plan.inject->rate_hz,
                                 results::InjectDetectionThreshold(plan.inject->delay_ns)};
}

results::LatencyRun CompleteLatencyRun(measure::RunRecord&& record,
                                       const measure::LatencyPlan& plan,
                                       const sys::SystemInfo& system,
                                       const LatencyRunFacts& facts) {
  results::LatencyRun run = ToLatencyRun(std::move(record));
  if (facts.explain_only_ring) NoSamplesLogClaimed(run);
  run.rtpulse_version = facts.version;
  run.cmdline = facts.cmdline;
  FillSystem(system, run);
  run.warnings.insert(run.warnings.begin(), facts.environment.begin(), facts.environment.end());
  run.inject = InjectSettingsOf(plan);
  run.return_code = 0;
  if (!facts.samples_path.empty() && run.samples_error.empty()) {
    for (auto& w : AddLogPercentiles(run, facts.samples_path, results::kLoggedPercentiles)) {
      run.warnings.push_back(std::move(w));
    }
  }
  return run;
}

}  // namespace rtpulse::suite
