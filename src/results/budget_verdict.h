// The verdict of a run against a latency budget, per scenario (or wake path), with the
// margin, the basis it was judged on, whether the sample count supports the percentile, and
// one overall line; without a budget, which scenario is worst and by how much
// (docs/budget.md).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "results/latency_result.h"
#include "results/suite_result.h"
#include "stats/budget.h"

namespace rtpulse::results {

/// The statistic a verdict without a budget ranks scenarios by.
inline constexpr double kDefaultVerdictPercentile = 99.9;

/// One judged distribution: a scenario (or scenario/wake path), or a wake path of `latency`.
struct VerdictRow {
  std::string name;
  std::string status;  ///< The scenario's status ("complete", "interrupted", ...); "" for latency.
  /// Judged per period (every period once, a skipped one late from its deadline); false: per
  /// wake-up, because the per-period latencies are not known (imports).
  bool per_period = false;
  uint64_t count = 0;                     ///< Periods (per period) or samples (per wake-up) judged.
  stats::ValueRange value;                ///< Where the statistic's true value lies.
  bool from_samples = false;              ///< The value is the exact sample from the samples log.
  std::string bound_reason;               ///< Why an end of `value` is unknown (imports), or "".
  double periods_per_s = 0;               ///< All threads together (sum of 1/interval); 0: unknown.
  std::optional<stats::Outcome> outcome;  ///< With a budget.
  std::optional<int64_t> margin_ns;       ///< stats::GuaranteedMargin, with a budget.
  uint64_t samples_needed = 0;            ///< stats::SamplesNeeded of the statistic.
  bool Supported() const { return count >= samples_needed; }
};

/// The verdict of a whole result.
struct Verdict {
  std::optional<stats::Budget> budget;
  std::optional<double> percentile;  ///< The judged statistic; none: the maximum.
  std::string noun = "scenario";     ///< What a row is: "scenario" or "wake path".
  std::vector<VerdictRow> rows;
  std::vector<std::string> not_measured;  ///< Scenarios that measured nothing.
  /// True with a budget when every row PASSes (an unsupported percentile still passes, and
  /// is marked); false when one FAILs or is UNDECIDED, or nothing was measured.
  bool Met() const;
};

/// Judges every scenario (and wake path) of a suite result; `budget` none: only the ranking
/// by p99.9. Rows are judged per period where every thread's per-period latencies are known,
/// per wake-up otherwise; a scenario's exact percentiles (samples log) are used where they
/// are the judged distribution's (per wake-up, or per period with no skipped period).
Verdict JudgeSuite(const SuiteResult& suite, const std::optional<stats::Budget>& budget);
/// The same for one `rtpulse latency` run: one row per wake path.
Verdict JudgeLatencyRun(const LatencyRun& run, const std::optional<stats::Budget>& budget);

/// The text lines: per row the verdict and margin, the support mark, the overall line
/// ("meets 100 us at p99.99 in 4 of 5 scenarios; heavy fails: ...") and the worst line; ""
/// without a budget and with fewer than two rows (nothing to judge or rank).
std::string FormatVerdict(const Verdict& verdict);
/// The overall line alone (with a budget), e.g. for the report's heading; "" without one.
std::string VerdictOverallLine(const Verdict& verdict);
/// "worst: heavy, p99.9 142.000 us, +98.000 us (3.22 x) over the best, idle (44.000 us)";
/// "" with fewer than two rows whose value is known.
std::string VerdictWorstLine(const Verdict& verdict);
/// The support mark of a row: "p99.99 not supported by 5000 periods; needs >= 100000
/// periods, about 50 s at this period"; "" when supported.
std::string SupportNote(const VerdictRow& row, std::optional<double> percentile);
/// The value as the verdict states it, on the side that decides `outcome`: "45.123 us"
/// (exact), "<= 45.123 us" (upper end: PASS, or no budget), ">= 150.000 us" (lower end:
/// FAIL), "in [99.900, 100.095] us" (UNDECIDED), "unknown".
std::string VerdictValueText(const stats::ValueRange& value, std::optional<stats::Outcome> outcome);

/// result.json's and latency --json's `verdict` (docs/result-json.md#verdict).
nlohmann::json VerdictJson(const Verdict& verdict);

}  // namespace rtpulse::results
