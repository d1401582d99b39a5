// A latency budget ("is this good enough?"): `--budget LATENCY[@PERCENTILE]` on latency,
// suite and report, and the rule that judges one distribution against it (docs/budget.md).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "core/error.h"
#include "core/histogram.h"

namespace rtpulse::stats {

/// What a run must meet: a latency at a percentile, or at the maximum.
struct Budget {
  int64_t latency_ns = 0;
  /// Percent, in (0, 100); none: the maximum.
  std::optional<double> percentile;
};

/// Parses "100us@p99.99", "2ms@p99", "500000ns@p99.9", "50us" or "50us@max" (the maximum).
/// Units ns, us, ms, s; the percentile pNN or pNN.NN..., strictly between 0 and 100. Errors
/// (UsageError) name the bad value and the accepted forms.
Expected<Budget> ParseBudget(std::string_view text);

/// The canonical spelling ParseBudget reads back: "100us@p99.99", "2ms@max".
std::string FormatBudget(const Budget& budget);

/// "p99.99" for 99.99, "max" for none (the statistic a budget or a verdict judges).
std::string StatisticLabel(std::optional<double> percentile);

/// Where the true value of a statistic lies: [lo_ns, hi_ns], either side absent when nothing
/// bounds it (an imported file that clipped or wrapped values). lo_ns == hi_ns: exact.
struct ValueRange {
  std::optional<int64_t> lo_ns;
  std::optional<int64_t> hi_ns;
  bool exact() const { return lo_ns && hi_ns && *lo_ns == *hi_ns; }
};

/// The nearest-rank value of `percentile` (none: the maximum) in `histogram` (N > 0), as the
/// range of the histogram bucket that holds that rank, clamped to the exact [min, max]: the
/// upper end is Histogram::Percentile(p) (the value rtpulse prints), the lower end the
/// bucket's lower edge. The maximum is exact, and so is any rank in a one-value bucket.
ValueRange RankRange(const Histogram& histogram, std::optional<double> percentile);

enum class Outcome { kPass, kFail, kUndecided };
/// "PASS", "FAIL", "UNDECIDED".
const char* OutcomeName(Outcome outcome);

/// The rule: PASS when the value is known to be at or below the budget (its upper end is
/// <= budget), FAIL when it is known to be above it (its lower end is > budget), UNDECIDED
/// otherwise (the range straddles the budget, or an end is unknown on the deciding side).
Outcome Judge(int64_t budget_ns, const ValueRange& value);

/// The margin the range guarantees, budget minus value: for PASS budget - hi (the true
/// headroom is at least this), for FAIL budget - lo (negative: the true value is over the
/// budget by at least its magnitude); none for UNDECIDED.
std::optional<int64_t> GuaranteedMargin(int64_t budget_ns, const ValueRange& value);

/// How many samples a percentile needs before a run can claim it: ceil(10 / (1 - p/100))
/// (about ten samples beyond it); 0 for the maximum, which any non-empty run has.
uint64_t SamplesNeeded(std::optional<double> percentile);

}  // namespace rtpulse::stats
