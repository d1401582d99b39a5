#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/histogram.h"
#include "results/suite_result.h"
#include "stats/compare.h"
#include "stats/summary.h"

namespace rtpulse::report {

/// One run given to `rtpulse compare`, as read back.
struct CompareRun {
  std::string label;  ///< Column heading: --labels, else the folder or file name.
  std::string path;
  results::SuiteResult suite;
};

/// One scenario (one wake path) of one run: every measuring thread merged.
struct ScenarioSide {
  size_t run = 0;        ///< Index into Comparison::runs.
  std::string scenario;  ///< Its name in that run ("scenario/wake" when it ran several).
  std::string wake;
  std::string status;
  Histogram histogram;
  stats::Summary summary;
  results::StatBounds bounds;  ///< Imports: statistics that are only bounds, or unknown.
  uint64_t missed_activations = 0;
  uint64_t skipped_periods = 0;
  bool misses_not_counted = false;  ///< No deadline (e2e back to back): "not counted", never 0.
  uint64_t misses_unknown = 0;      ///< Activations that may have missed too: a lower bound.
  /// Per period (docs/latency.md#per-period-statistics): every wake-up and every skipped
  /// period with its own lateness, all threads; absent when unknown (imports).
  std::optional<Histogram> per_period;
  /// The scenario's exact percentiles from its samples log (result.json), when it has them:
  /// shown in place of the bucket edges, per wake-up and per period.
  std::optional<results::ExactPercentileValues> exact;
  std::optional<results::ExactPercentileValues> exact_per_period;
  /// Why this side's figures may not be what its name says (docs/compare.md#context): the
  /// scenario's status when not complete, a degraded set-up, each of its warnings ("idle
  /// scenario was not idle: 96 % busy"). Shown beside its figures in every output.
  std::vector<std::string> flags;
};

/// A non-baseline run of one scenario against that scenario's baseline.
struct SideComparison {
  size_t run = 0;
  std::vector<stats::PercentileDifference> differences;  ///< p50, p99, p99.9.
  stats::KsResult ks;
};

struct ScenarioComparison {
  std::string name;                    ///< Scenario, or "scenario/wake" when a run had several.
  std::vector<ScenarioSide> sides;     ///< Runs that measured it, in run order; [0] = baseline.
  std::vector<SideComparison> versus;  ///< sides[1..] against sides[0].
  std::vector<std::string> notes;
};

/// A scenario some run did not measure.
struct MissingScenario {
  std::string name;
  std::vector<std::string> missing_from;  ///< Run labels.
};

struct Comparison {
  std::vector<CompareRun> runs;
  stats::BootstrapOptions bootstrap;
  std::vector<ScenarioComparison> scenarios;  ///< Measured by at least two runs.
  std::vector<MissingScenario> missing;
  std::vector<std::string> warnings;
};

/// What a run was measured on, from its system_info: "6.1.0-rpi7-rpi-2712 (PREEMPT_RT),
/// aarch64, Raspberry Pi 5 Model B Rev 1.0, not virtualized"; "unknown" for what it lacks.
std::string RunContext(const CompareRun& run);

/// The percentiles with bootstrap CIs.
inline constexpr double kCiPercentiles[] = {50.0, 99.0, 99.9};

/// Matches scenarios by name across the runs (the first run measuring a scenario is its
/// baseline: normally run 1) and computes every statistic. When no name is shared but every
/// run measured exactly one scenario (a stock-kernel file against an RT-kernel file), those
/// are compared with each other, named "A vs B" with a note saying which is which. Fewer
/// than two runs, or nothing to compare, is a usage error naming each run's scenarios.
Expected<Comparison> BuildComparison(std::vector<CompareRun> runs,
                                     const stats::BootstrapOptions& bootstrap);

/// The side-by-side tables, one per scenario, in microseconds.
std::string FormatCompareText(const Comparison& c);
/// docs/compare.md's schema `rtpulse.compare` v1, in nanoseconds, fields in schema order.
nlohmann::ordered_json CompareJson(const Comparison& c);
/// A self-contained page: inline CSS, the tables, and `figures_svg` (inline SVG elements,
/// one string each) embedded as they are.
std::string CompareHtml(const Comparison& c, const std::vector<std::string>& figures_svg);

}  // namespace rtpulse::report
