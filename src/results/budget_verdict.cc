#include "results/budget_verdict.h"

#include <fmt/format.h>

#include <algorithm>

#include "core/float_compare.h"

namespace rtpulse::results {
namespace {

std::string VerdictUs(int64_t ns) {
  return fmt::format("{:.3f}", static_cast<double>(ns) / 1000.0);
}

/// "100 us", "2 ms", "12.345 us": the budget's latency as the overall line says it.
std::string BudgetLatencyText(int64_t ns) {
  if (ns % 1'000'000'000 == 0) return fmt::format("{} s", ns / 1'000'000'000);
  if (ns >= 1'000'000 && ns % 1'000'000 == 0) return fmt::format("{} ms", ns / 1'000'000);
  if (ns % 1000 == 0) return fmt::format("{} us", ns / 1000);
  return VerdictUs(ns) + " us";
}

std::string VerdictPlural(const std::string& noun, size_t n) {
  return n == 1 ? noun : noun + "s";
}

/// "about 50 s", "about 17 min", "about 2.8 h".
std::string VerdictDurationText(double seconds) {
  seconds *= 1 - 1e-9;  // 10000 / (1e9 / 1.5e6) is 6.000000000000001: no "about 7 s"
  if (seconds < 120) return fmt::format("about {:.0f} s", std::max(1.0, std::ceil(seconds)));
  if (seconds < 7200) return fmt::format("about {:.0f} min", std::ceil(seconds / 60));
  return fmt::format("about {:.1f} h", seconds / 3600);
}

/// The exact samples-log value of `percentile`, when the scenario kept one for it.
std::optional<int64_t> ExactValueFor(const ExactPercentileValues& e, double percentile) {
  const int64_t values[] = {e.median_ns, e.p95_ns, e.p99_ns, e.p999_ns, e.p9999_ns};
  for (size_t i = 0; i < std::size(kSummaryPercentiles); ++i) {
    if (ExactlyEqual(kSummaryPercentiles[i], percentile)) return values[i];
  }
  return std::nullopt;
}

/// Widens `value` where an imported file only bounds the statistic.
void ApplyImportBounds(const StatBounds& bounds, std::optional<double> percentile,
                       VerdictRow& row) {
  if (!bounds.Any() || !row.value.hi_ns) return;
  const Bound b = percentile ? bounds.Percentile(*row.value.hi_ns) : bounds.max;
  if (b == Bound::kExact) return;
  if (b == Bound::kLowerBound || b == Bound::kUnknown) row.value.hi_ns.reset();
  if (b == Bound::kUpperBound || b == Bound::kUnknown) row.value.lo_ns.reset();
  row.from_samples = false;
  row.bound_reason = fmt::format("{}", fmt::join(bounds.reasons, "; "));
}

VerdictRow JudgePathRow(std::string name, std::string status, const PathRun& path,
                        const ExactPercentileValues* exact,
                        const ExactPercentileValues* exact_per_period, const Verdict& verdict) {
  VerdictRow row;
  row.name = std::move(name);
  row.status = std::move(status);
  row.per_period = !path.probes.empty();
  for (const auto& p : path.probes) row.per_period &= HasPerPeriod(p) && !p.bounds.Any();
  Histogram h;
  uint64_t skipped = 0;
  for (const auto& p : path.probes) {
    h.Merge(p.histogram);
    if (row.per_period) h.Merge(p.skipped_histogram);
    skipped += p.skipped_periods;
    if (p.interval_ns > 0) row.periods_per_s += 1e9 / static_cast<double>(p.interval_ns);
  }
  row.count = h.count();
  row.samples_needed = stats::SamplesNeeded(verdict.percentile);
  row.value = stats::RankRange(h, verdict.percentile);
  if (verdict.percentile && row.count > 0) {
    std::optional<int64_t> v;
    if (path.exact) {
      // The path's own samples-log values: per period (rebuilt from the log's seq gaps) when
      // that is what is judged and they were computed, else per wake-up where that is the
      // same distribution.
      const auto& e = *path.exact;
      const std::vector<int64_t>& list = row.per_period && skipped > 0 ? e.all_per_period : e.all;
      for (size_t i = 0; i < e.percentiles.size() && i < list.size(); ++i) {
        if (ExactlyEqual(e.percentiles[i], *verdict.percentile)) v = list[i];
      }
    } else if (row.per_period && skipped > 0 && exact_per_period != nullptr) {
      v = ExactValueFor(*exact_per_period, *verdict.percentile);
    } else if (exact != nullptr && (!row.per_period || skipped == 0)) {
      // The scenario's samples-log values are per wake-up: they are the per-period ones
      // only when no period was skipped.
      v = ExactValueFor(*exact, *verdict.percentile);
    }
    if (v) {
      row.value = {*v, *v};
      row.from_samples = true;
    }
  }
  if (!row.per_period) ApplyImportBounds(MergeBounds(path.probes), verdict.percentile, row);
  if (verdict.budget) {
    row.outcome = stats::Judge(verdict.budget->latency_ns, row.value);
    row.margin_ns = stats::GuaranteedMargin(verdict.budget->latency_ns, row.value);
  }
  return row;
}

Verdict EmptyVerdict(const std::optional<stats::Budget>& budget) {
  Verdict v;
  v.budget = budget;
  v.percentile = budget ? budget->percentile : std::optional<double>(kDefaultVerdictPercentile);
  return v;
}

std::string MarginText(const VerdictRow& row) {
  if (!row.margin_ns) {
    if (row.count == 0) return "no samples";
    if (!row.value.lo_ns || !row.value.hi_ns) {
      return "the file only bounds this value on the other side";
    }
    return "its histogram bucket straddles the budget";
  }
  const std::string at_least = row.value.exact() ? "" : ">= ";
  if (*row.margin_ns >= 0) return "margin " + at_least + VerdictUs(*row.margin_ns) + " us";
  return "over by " + at_least + VerdictUs(-*row.margin_ns) + " us";
}

}  // namespace

bool Verdict::Met() const {
  if (!budget || rows.empty() || !not_measured.empty()) return false;
  return std::all_of(rows.begin(), rows.end(),
                     [](const VerdictRow& r) { return r.outcome == stats::Outcome::kPass; });
}

Verdict JudgeSuite(const SuiteResult& suite, const std::optional<stats::Budget>& budget) {
  Verdict v = EmptyVerdict(budget);
  bool several_paths = false;
  for (const auto& s : suite.scenarios) several_paths |= s.latency && s.latency->paths.size() > 1;
  for (const auto& s : suite.scenarios) {
    if (!s.latency || s.latency->paths.empty()) {
      v.not_measured.push_back(s.name);
      continue;
    }
    const bool one_path = s.latency->paths.size() == 1;
    for (const auto& path : s.latency->paths) {
      const ExactPercentileValues* exact =
          one_path && s.exact_percentiles ? &*s.exact_percentiles : nullptr;
      const ExactPercentileValues* exact_per_period =
          one_path && s.exact_per_period_percentiles ? &*s.exact_per_period_percentiles : nullptr;
      v.rows.push_back(JudgePathRow(several_paths ? s.name + "/" + path.wake : s.name,
                                    ScenarioStatusName(s.status), path, exact, exact_per_period,
                                    v));
    }
  }
  return v;
}

Verdict JudgeLatencyRun(const LatencyRun& run, const std::optional<stats::Budget>& budget) {
  Verdict v = EmptyVerdict(budget);
  v.noun = "wake path";
  const std::string status = run.interrupted ? "interrupted" : "complete";
  for (const auto& path : run.paths)
    v.rows.push_back(JudgePathRow(path.wake, status, path, nullptr, nullptr, v));
  return v;
}

std::string VerdictValueText(const stats::ValueRange& value,
                             std::optional<stats::Outcome> outcome) {
  if (!value.lo_ns && !value.hi_ns) return "unknown";
  if (value.exact()) return VerdictUs(*value.lo_ns) + " us";
  if (outcome == stats::Outcome::kFail && value.lo_ns)
    return ">= " + VerdictUs(*value.lo_ns) + " us";
  if (outcome == stats::Outcome::kUndecided && value.lo_ns && value.hi_ns) {
    return fmt::format("in [{}, {}] us", VerdictUs(*value.lo_ns), VerdictUs(*value.hi_ns));
  }
  if (value.hi_ns) return "<= " + VerdictUs(*value.hi_ns) + " us";
  return ">= " + VerdictUs(*value.lo_ns) + " us";
}

std::string SupportNote(const VerdictRow& row, std::optional<double> percentile) {
  if (row.Supported()) return "";
  const std::string unit = row.per_period ? "periods" : "samples";
  std::string how_long = "how long a run that takes is unknown (the result has no period)";
  if (row.periods_per_s > 0) {
    how_long = VerdictDurationText(static_cast<double>(row.samples_needed) / row.periods_per_s) +
               " at this period";
  }
  return fmt::format("{} not supported by {} {}; needs >= {} {}, {}",
                     stats::StatisticLabel(percentile), row.count, unit, row.samples_needed, unit,
                     how_long);
}

std::string VerdictOverallLine(const Verdict& v) {
  if (!v.budget) return "";
  const std::string stat = stats::StatisticLabel(v.percentile);
  const std::string at = v.percentile ? "at " + stat : "at the maximum";
  if (v.rows.empty())
    return fmt::format("{} {}: nothing was measured, no verdict",
                       BudgetLatencyText(v.budget->latency_ns), at);
  size_t passed = 0;
  std::string failed;
  std::string undecided;
  std::vector<std::string> unsupported;
  for (const auto& r : v.rows) {
    const std::string value = stat + " " + VerdictValueText(r.value, r.outcome);
    if (r.outcome == stats::Outcome::kPass) ++passed;
    if (r.outcome == stats::Outcome::kFail) failed += fmt::format("; {} fails: {}", r.name, value);
    if (r.outcome == stats::Outcome::kUndecided) {
      undecided += fmt::format("; {} undecided: {}", r.name, value);
    }
    if (!r.Supported()) unsupported.push_back(r.name);
  }
  const size_t total = v.rows.size() + v.not_measured.size();
  std::string line = fmt::format("{} {} {} in {} of {} {}{}{}", v.Met() ? "meets" : "does not meet",
                                 BudgetLatencyText(v.budget->latency_ns), at, passed, total,
                                 VerdictPlural(v.noun, total), failed, undecided);
  if (!v.not_measured.empty()) {
    line += fmt::format("; not measured: {}", fmt::join(v.not_measured, ", "));
  }
  if (!unsupported.empty()) {
    line += fmt::format("; {} not supported by the sample count of {}", stat,
                        fmt::join(unsupported, ", "));
  }
  return line;
}

std::string VerdictWorstLine(const Verdict& v) {
  // Only rows whose count supports the statistic are ranked: a p99.9 of 750 periods is the
  // maximum under another name, and ranking by it would say more than the run measured.
  const VerdictRow* worst = nullptr;
  const VerdictRow* best = nullptr;
  std::vector<std::string> unsupported;
  for (const auto& r : v.rows) {
    if (!r.value.hi_ns) continue;
    if (!r.Supported()) {
      unsupported.push_back(r.name);
      continue;
    }
    if (worst == nullptr || *r.value.hi_ns > *worst->value.hi_ns) worst = &r;
    if (best == nullptr || *r.value.hi_ns < *best->value.hi_ns) best = &r;
  }
  const std::string stat = stats::StatisticLabel(v.percentile);
  std::string left_out;
  for (size_t i = 0; i < unsupported.size(); ++i) {
    left_out += (i == 0 ? "" : ", ") + unsupported[i];
  }
  if (worst == nullptr || worst == best) {
    if (unsupported.empty() || unsupported.size() + (worst ? 1 : 0) < 2) return "";
    return fmt::format(
        "worst: not ranked: the {} of {} {} not supported by {} count{} (a longer run "
        "supports it; the maximum is always known)",
        stat, left_out, unsupported.size() == 1 ? "is" : "are",
        unsupported.size() == 1 ? "its" : "their", unsupported.size() == 1 ? "" : "s");
  }
  const int64_t w = *worst->value.hi_ns;
  const int64_t b = *best->value.hi_ns;
  const std::string ratio =
      b > 0 ? fmt::format(" ({:.2f} x)", static_cast<double>(w) / static_cast<double>(b)) : "";
  std::string line =
      fmt::format("worst: {}, {} {}, {} us{} above the best, {} ({})", worst->name, stat,
                  VerdictValueText(worst->value, std::nullopt), VerdictUs(w - b), ratio, best->name,
                  VerdictValueText(best->value, std::nullopt));
  if (!unsupported.empty()) {
    line += fmt::format("; not ranked, their {} not supported by their counts: {}", stat, left_out);
  }
  return line;
}

std::string FormatVerdict(const Verdict& v) {
  if (!v.budget && v.rows.size() < 2) return "";  // nothing judged, nothing to rank
  const std::string stat = stats::StatisticLabel(v.percentile);
  std::string out;
  if (v.budget) {
    out += fmt::format("verdict: budget {} ({} <= {})\n", stats::FormatBudget(*v.budget), stat,
                       BudgetLatencyText(v.budget->latency_ns));
  } else {
    out += fmt::format("verdict: no budget (--budget LATENCY[@PERCENTILE]); {} by {}\n",
                       VerdictPlural(v.noun, 2), stat);
  }
  for (const auto& r : v.rows) {
    std::string line = fmt::format(
        "  {:<16} {:<10} {:<12} {} {}", r.name, r.outcome ? stats::OutcomeName(*r.outcome) : "",
        r.per_period ? "per period" : "per wake-up", stat, VerdictValueText(r.value, r.outcome));
    if (r.outcome) line += ", " + MarginText(r);
    out += line + "\n";
    if (!r.bound_reason.empty()) out += "      bounded: " + r.bound_reason + "\n";
    if (!r.Supported()) out += "      " + SupportNote(r, v.percentile) + "\n";
  }
  if (const std::string overall = VerdictOverallLine(v); !overall.empty()) out += overall + "\n";
  if (const std::string worst = VerdictWorstLine(v); !worst.empty()) out += worst + "\n";
  out +=
      "per period = every period once, a skipped one late from its deadline to the wake-up that "
      "ended the stall; per wake-up where that is not known (imports). Values: '<=' an upper "
      "bound (its histogram bucket's upper edge), '>=' a lower bound, 'in [a, b]' both, no "
      "mark: exact (the maximum, or the samples log); PASS needs the upper bound <= budget, "
      "FAIL the lower bound > budget (docs/budget.md)\n";
  return out;
}

nlohmann::json VerdictJson(const Verdict& v) {
  nlohmann::json j;
  j["budget"] = v.budget ? nlohmann::json(stats::FormatBudget(*v.budget)) : nlohmann::json();
  j["budget_ns"] = v.budget ? nlohmann::json(v.budget->latency_ns) : nlohmann::json();
  j["statistic"] = stats::StatisticLabel(v.percentile);
  j["met"] = v.budget ? nlohmann::json(v.Met()) : nlohmann::json();
  j["overall"] = VerdictOverallLine(v);
  j["worst"] = VerdictWorstLine(v);
  auto opt = [](const std::optional<int64_t>& x) {
    return x ? nlohmann::json(*x) : nlohmann::json();
  };
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& r : v.rows) {
    nlohmann::json o = {
        {"name", r.name},
        {"status", r.status},
        {"basis", r.per_period ? "per_period" : "per_wake_up"},
        {"count", r.count},
        {"value_ns", opt(r.value.hi_ns)},
        {"value_lower_ns", opt(r.value.lo_ns)},
        {"value_exact", r.value.exact()},
        {"value_from_samples", r.from_samples},
        {"verdict", r.outcome ? nlohmann::json(stats::OutcomeName(*r.outcome)) : nlohmann::json()},
        {"margin_ns", opt(r.margin_ns)},
        {"supported", r.Supported()},
        {"samples_needed", r.samples_needed},
        {"periods_per_s", r.periods_per_s}};
    if (!r.bound_reason.empty()) o["bound_reason"] = r.bound_reason;
    if (!r.Supported() && r.periods_per_s > 0) {
      o["duration_needed_s"] = static_cast<double>(r.samples_needed) / r.periods_per_s;
    }
    rows.push_back(std::move(o));
  }
  j["rows"] = rows;
  j["not_measured"] = v.not_measured;
  return j;
}

}  // namespace rtpulse::results
