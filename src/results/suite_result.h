#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "results/latency_result.h"
#include "stats/budget.h"

namespace rtpulse::results {

/// result.json's schema name and version (docs/result-json.md). Bump the version when a
/// field changes meaning or goes away; adding a field keeps it.
inline constexpr const char* kSuiteSchema = "rtpulse.suite";
inline constexpr int kSuiteSchemaVersion = 1;

/// Where one scenario got to, written as ScenarioStatusName gives it: "pending",
/// "settling", "measuring", "complete", "interrupted", "failed" (a scenario is never
/// "refused": --strict refuses the whole suite, see SuiteResult::status). `kMeasuring` with a
/// latency snapshot is what a checkpoint holds: the run was still going (or was killed) when
/// it was written. An unknown name reads back as kFailed.
enum class ScenarioStatus { kPending, kSettling, kMeasuring, kComplete, kInterrupted, kFailed };
const char* ScenarioStatusName(ScenarioStatus status);

/// A scenario's percentiles computed exactly from its samples log (nearest rank, the
/// sample itself rather than its bucket's upper edge): kept only when the log holds exactly
/// the samples of the scenario's histogram (docs/percentiles.md).
struct ExactPercentileValues {
  int64_t median_ns = 0;
  int64_t p95_ns = 0;
  int64_t p99_ns = 0;
  int64_t p999_ns = 0;
  int64_t p9999_ns = 0;
};
/// The percentiles ExactPercentileValues holds, in its order.
inline constexpr double kSummaryPercentiles[] = {50.0, 95.0, 99.0, 99.9, 99.99};
/// ExactPercentileValues from `v`, the values at kSummaryPercentiles in that order.
inline ExactPercentileValues SummaryPercentileValues(std::span<const int64_t> v) {
  return {v[0], v[1], v[2], v[3], v[4]};
}

/// One scenario of a suite: its loads, what they achieved, and what was measured under them.
struct ScenarioResult {
  std::string name;
  std::string description;
  std::vector<std::string> load_specs;  ///< As written in the configuration.
  ScenarioStatus status = ScenarioStatus::kPending;
  std::string error;       ///< Why it failed (a load that did not start, ...).
  int64_t settle_ns = 0;   ///< Warm-up under load before measuring; not measured.
  int64_t planned_ns = 0;  ///< Measurement time asked for.
  int64_t start_realtime_ns = 0;
  int64_t end_realtime_ns = 0;
  std::optional<LatencyRun> latency;  ///< Final, or the last checkpoint while measuring.
  nlohmann::json loads = nlohmann::json::array();  ///< Load reports (rtpulse load --json).
  std::vector<std::string> warnings;
  /// The scenario integrity check's numbers (docs/result-json.md); null when not checked.
  nlohmann::json cpu_busy;
  /// The per-sample log (time-ordered samples, docs/samples-format.md), relative to the run
  /// folder, e.g. "idle/samples.bin"; "" when none was written.
  std::string samples_file;
  /// Exact percentiles from samples_file, for a scenario with one wake path; absent: the
  /// summary's percentiles are bucket upper edges.
  std::optional<ExactPercentileValues> exact_percentiles;
  /// The same for the per-period statistics (docs/latency.md#per-period-statistics);
  /// absent: their percentiles are bucket upper edges.
  std::optional<ExactPercentileValues> exact_per_period_percentiles;
};

/// A whole `rtpulse suite` run: what result.json holds.
struct SuiteResult {
  std::string rtpulse_version;
  std::string cmdline;
  /// What `rtpulse suite` writes: "running" (a checkpoint: still going, or killed),
  /// "complete", "interrupted" (SIGINT/SIGTERM), "failed" (a scenario failed) or "refused"
  /// (--strict and a failed pre-flight check: nothing was run). `rtpulse import` writes
  /// "complete"; a single `latency --json` file reads as "complete" or "interrupted".
  /// "killed": marked by the tuning guardian after rtpulse died, or a stale "running" as the
  /// reader reads it (results/killed_run.h); then `status_note` says which.
  std::string status = "running";
  /// Read back only: why the status is "killed" (one line every reader prints); "" otherwise.
  std::string status_note;
  /// The process writing the run (results/killed_run.h CurrentWriter); null when unknown.
  nlohmann::json writer;
  int64_t start_realtime_ns = 0;
  int64_t updated_realtime_ns = 0;
  nlohmann::json config = nlohmann::json::object();   ///< The suite as run.
  nlohmann::json system = nlohmann::json::object();   ///< system_info.json.
  nlohmann::json tuning = nlohmann::json::array();    ///< --tune changes; empty without.
  nlohmann::json monitor = nlohmann::json::object();  ///< Files, columns, notes.
  /// suite --tune-ab: design, blocks and effects (docs/result-json.md); null without.
  nlohmann::json tune_ab;
  std::vector<std::string> warnings;  ///< Environment and pre-flight warnings, verbatim.
  std::vector<ScenarioResult> scenarios;
  /// `suite --budget`: what result.json's `verdict` judges (docs/budget.md); none: the
  /// verdict only ranks the scenarios.
  std::optional<stats::Budget> budget;
};

/// Per period (docs/latency.md#per-period-statistics): one entry per period, each skipped
/// period late from its deadline to the wake-up that ended the stall, all threads together.
struct PerPeriodStats {
  uint64_t periods = 0;  ///< Samples + skipped periods.
  int64_t min_ns = 0;
  double mean_ns = 0;
  int64_t median_ns = 0;
  int64_t p95_ns = 0;
  int64_t p99_ns = 0;
  int64_t p999_ns = 0;
  int64_t p9999_ns = 0;
  int64_t max_ns = 0;
  double stddev_ns = 0;
  /// The percentiles are exact samples (from the samples log), not bucket upper edges.
  bool percentiles_exact = false;
};

/// One row of statistical_summary: a scenario (and wake path, when several ran), all
/// threads together.
struct ScenarioStats {
  std::string scenario;
  std::string wake;
  std::string status;
  uint64_t samples = 0;
  int64_t min_ns = 0;
  double mean_ns = 0;
  int64_t median_ns = 0;
  int64_t p95_ns = 0;
  int64_t p99_ns = 0;
  int64_t p999_ns = 0;
  int64_t p9999_ns = 0;
  int64_t max_ns = 0;
  double stddev_ns = 0;  ///< Reported as jitter.
  /// Imports: min, max, mean and jitter that are only bounds, or unknown (then written as
  /// null and printed as "?"), with the reasons.
  StatBounds bounds;
  uint64_t latencies_not_printed = 0;  ///< Imports: samples known only to be <= 0.
  /// The percentiles are exact samples (from the samples log), not bucket upper edges.
  bool percentiles_exact = false;
  uint64_t missed_activations = 0;
  uint64_t skipped_periods = 0;
  /// A probe had no deadline (e2e back to back): missed and skipped were not counted (null in
  /// JSON, "not counted" in text), never 0.
  bool misses_not_counted = false;
  /// Activations that may have missed too (ProbeResult::misses_unknown, summed):
  /// missed_activations is then a lower bound.
  uint64_t misses_unknown = 0;
  uint64_t periods_elapsed = 0;
  /// Beside the per-wake-up (cyclictest) statistics above; absent when unknown (imports:
  /// other tools do not record the skipped periods' latencies).
  std::optional<PerPeriodStats> per_period;
};

/// Rows for every scenario that has measurements, in suite order.
std::vector<ScenarioStats> SummarizeScenarios(const SuiteResult& suite);

/// The percentile method statement for these rows: exact (from the samples log) when every
/// row's percentiles are exact, the bucket-edge statement when none is, both (naming the
/// exact scenarios) when mixed. Every output of the rows carries it.
std::string MethodStatement(const std::vector<ScenarioStats>& rows);
/// The same for the rows' per-period statistics (rows without them are left out; "unknown"
/// when no row has them).
std::string PerPeriodMethodStatement(const std::vector<ScenarioStats>& rows);

nlohmann::json ToJson(const SuiteResult& suite);
/// statistical_summary.txt: the table in microseconds, the method statement, the notes.
std::string FormatStatisticalSummary(const SuiteResult& suite);
/// statistical_summary.json: the same rows in nanoseconds.
nlohmann::json StatisticalSummaryJson(const SuiteResult& suite);

}  // namespace rtpulse::results
