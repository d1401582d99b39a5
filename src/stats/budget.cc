#include "stats/budget.h"

#include <fmt/format.h>

#include <cmath>
#include <cstdlib>

#include "core/parse.h"
#include "core/printable.h"

namespace rtpulse::stats {
namespace {

constexpr std::string_view kBudgetForms =
    "use LATENCY[@PERCENTILE]: a latency with a unit ns, us, ms or s, then optionally @pNN, "
    "@pNN.NN or @max, e.g. '100us@p99.99', '2ms@p99' or '50us' (the maximum)";

Error BudgetError(std::string_view text, const std::string& what) {
  return UsageError(
      fmt::format("invalid budget '{}': {}; {}", Printable(text), what, kBudgetForms));
}

/// "p99.99" -> 99.99: digits with at most one dot, strictly between 0 and 100.
Expected<std::optional<double>> ParseBudgetPercentile(std::string_view text,
                                                      std::string_view part) {
  if (part == "max") return std::optional<double>{};
  if (part.size() < 2 || part[0] != 'p') {
    return BudgetError(text, fmt::format("'{}' is not a percentile", Printable(part)));
  }
  const std::string digits(part.substr(1));
  int dots = 0;
  for (char c : digits) {
    if (c == '.') {
      ++dots;
    } else if (c < '0' || c > '9') {
      dots = 2;
    }
  }
  char* end = nullptr;
  const double p = std::strtod(digits.c_str(), &end);
  if (dots > 1 || end != digits.c_str() + digits.size() || digits.front() == '.') {
    return BudgetError(text, fmt::format("'{}' is not a percentile", Printable(part)));
  }
  if (p >= 100.0) {
    return BudgetError(text, fmt::format("'{}' is not below p100 (the largest value is "
                                         "'@max')",
                                         Printable(part)));
  }
  if (p <= 0.0) return BudgetError(text, fmt::format("'{}' is not above p0", Printable(part)));
  return std::optional<double>{p};
}

}  // namespace

Expected<Budget> ParseBudget(std::string_view text) {
  const std::string_view s = TrimBlanks(text);
  if (s.empty()) return BudgetError(text, "it is empty");
  const size_t at = s.find('@');
  const std::string_view latency = s.substr(0, at);
  Budget budget;
  if (at != std::string_view::npos) {
    auto p = ParseBudgetPercentile(text, s.substr(at + 1));
    if (!p) return p.error();
    budget.percentile = *p;
  }
  if (latency.empty()) return BudgetError(text, "the latency is missing");
  const char last = latency.back();
  if (last >= '0' && last <= '9') {
    return BudgetError(text, fmt::format("the latency '{}' has no unit", Printable(latency)));
  }
  auto ns = ParseTimeNs(latency);
  if (!ns) {
    return BudgetError(text, fmt::format("'{}' is not a latency", Printable(latency)));
  }
  if (*ns <= 0) {
    return BudgetError(text, fmt::format("the latency '{}' is not above 0", Printable(latency)));
  }
  budget.latency_ns = *ns;
  return budget;
}

std::string FormatBudget(const Budget& budget) {
  return FormatTimeNs(budget.latency_ns) + "@" + StatisticLabel(budget.percentile);
}

std::string StatisticLabel(std::optional<double> percentile) {
  if (!percentile) return "max";
  return fmt::format("p{:g}", *percentile);
}

ValueRange RankRange(const Histogram& histogram, std::optional<double> percentile) {
  const uint64_t n = histogram.count();
  if (n == 0) return {};
  if (!percentile) return {histogram.max(), histogram.max()};
  const uint64_t rank = Histogram::NearestRank(*percentile, n);
  uint64_t below = 0;
  ValueRange range;
  histogram.ForEachBucket([&](Histogram::Range r, uint64_t count) {
    if (range.hi_ns) return;
    below += count;
    if (below >= rank) {
      range.lo_ns = std::max(r.lo, histogram.min());
      range.hi_ns = std::min(r.hi, histogram.max());
    }
  });
  return range;
}

const char* OutcomeName(Outcome outcome) {
  switch (outcome) {
    case Outcome::kPass:
      return "PASS";
    case Outcome::kFail:
      return "FAIL";
    case Outcome::kUndecided:
      return "UNDECIDED";
  }
  return "UNDECIDED";
}

Outcome Judge(int64_t budget_ns, const ValueRange& value) {
  if (value.hi_ns && *value.hi_ns <= budget_ns) return Outcome::kPass;
  if (value.lo_ns && *value.lo_ns > budget_ns) return Outcome::kFail;
  return Outcome::kUndecided;
}

std::optional<int64_t> GuaranteedMargin(int64_t budget_ns, const ValueRange& value) {
  switch (Judge(budget_ns, value)) {
    case Outcome::kPass:
      return budget_ns - *value.hi_ns;
    case Outcome::kFail:
      return budget_ns - *value.lo_ns;
    case Outcome::kUndecided:
      break;
  }
  return std::nullopt;
}

uint64_t SamplesNeeded(std::optional<double> percentile) {
  if (!percentile) return 0;
  // 10 / (1 - 0.9999) is 100000.0000008 in floating point, 10 / (1 - 0.99999) 999999.99999:
  // a whole number within rounding noise is that number, anything else rounds up.
  const double needed = 10.0 / (1.0 - *percentile / 100.0);
  const double nearest = std::round(needed);
  if (std::fabs(needed - nearest) <= 1e-9 * needed) return static_cast<uint64_t>(nearest);
  return static_cast<uint64_t>(std::ceil(needed));
}

}  // namespace rtpulse::stats
