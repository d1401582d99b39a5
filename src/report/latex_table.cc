#include "report/latex_table.h"

#include <fmt/format.h>

#include "report/units.h"
#include "stats/summary.h"

namespace rtpulse::report {
namespace {

/// A statistic with its bound (imports) in LaTeX: $\geq$ / $\leq$ before it, "?" if unknown.
std::string LatexBounded(const std::string& value, results::Bound bound) {
  return results::WithBound(value, bound, "$\\geq$", "$\\leq$");
}

}  // namespace

std::string LatexEscape(const std::string& text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '\\':
        out += "\\textbackslash{}";
        break;
      case '{':
        out += "\\{";
        break;
      case '}':
        out += "\\}";
        break;
      case '$':
        out += "\\$";
        break;
      case '&':
        out += "\\&";
        break;
      case '#':
        out += "\\#";
        break;
      case '%':
        out += "\\%";
        break;
      case '_':
        out += "\\_";
        break;
      case '^':
        out += "\\textasciicircum{}";
        break;
      case '~':
        out += "\\textasciitilde{}";
        break;
      default:
        out += c;
    }
  }
  return out;
}

namespace {

/// The per-period table beside the per-wake-up one (docs/latency.md#per-period-statistics).
std::string PerPeriodTableTex(const std::vector<results::ScenarioStats>& rows) {
  std::string tex =
      "% Per period: every period counts once, each skipped period late from its deadline to\n"
      "% the wake-up that ended the stall (the table above is per wake-up, as cyclictest\n"
      "% counts). unknown: the result does not give the skipped periods' latencies.\n";
  tex += fmt::format("% Per-period percentiles: {}.\n", results::PerPeriodMethodStatement(rows));
  tex += "\\begin{table}[htbp]\n\\centering\n\\small\n";
  tex +=
      "\\caption{Scheduling latency per scenario, per period (\\textmu s)}\n"
      "\\label{tab:rtpulse-summary-per-period}\n";
  tex += "\\begin{tabular}{lrrrrrrrrrr}\n\\toprule\n";
  tex +=
      "Scenario & Periods & Min & Mean & p50 & p95 & p99 & p99.9 & p99.99 & Max & Jitter "
      "\\\\\n\\midrule\n";
  for (const auto& row : rows) {
    std::string name = row.scenario;
    if (!row.wake.empty()) name += " (" + row.wake + ")";
    if (row.status != "complete") name += " [" + row.status + "]";
    if (!row.per_period) {
      tex += fmt::format("{} & \\multicolumn{{10}}{{l}}{{unknown}} \\\\\n", LatexEscape(name));
      continue;
    }
    const results::PerPeriodStats& p = *row.per_period;
    tex += fmt::format("{} & {} & {} & {} & {} & {} & {} & {} & {} & {} & {} \\\\\n",
                       LatexEscape(name), p.periods, FormatUs(p.min_ns), FormatUs(p.mean_ns),
                       FormatUs(p.median_ns), FormatUs(p.p95_ns), FormatUs(p.p99_ns),
                       FormatUs(p.p999_ns), FormatUs(p.p9999_ns), FormatUs(p.max_ns),
                       FormatUs(p.stddev_ns));
  }
  return tex + "\\bottomrule\n\\end{tabular}\n\\end{table}\n";
}

}  // namespace

std::string SummaryTableTex(const results::SuiteResult& suite) {
  std::string tex =
      "% rtpulse statistical summary (written by rtpulse report). Needs \\usepackage{booktabs}.\n"
      "% Units: latencies in microseconds (us), one decimal; samples, missed activations and\n"
      "% skipped periods are counts. All threads of a scenario (and wake path) together.\n";
  tex += fmt::format("% Percentiles: {}.\n",
                     results::MethodStatement(results::SummarizeScenarios(suite)));
  tex +=
      "% Missed: wake-ups after the next period's deadline; skipped: periods with no "
      "activation because of them.\n";
  tex += "\\begin{table}[htbp]\n\\centering\n\\small\n";
  tex +=
      "\\caption{Scheduling latency per scenario, per wake-up (\\textmu "
      "s)}\n\\label{tab:rtpulse-summary}\n";
  tex += "\\begin{tabular}{lrrrrrrrrrrrr}\n\\toprule\n";
  tex +=
      "Scenario & Samples & Min & Mean & p50 & p95 & p99 & p99.9 & p99.99 & Max & Jitter & "
      "Missed & Skipped \\\\\n\\midrule\n";
  std::string notes;
  for (const auto& row : results::SummarizeScenarios(suite)) {
    const results::StatBounds& b = row.bounds;
    std::string name = row.scenario;
    if (!row.wake.empty()) name += " (" + row.wake + ")";
    if (row.status != "complete") name += " [" + row.status + "]";
    tex += fmt::format(
        "{} & {} & {} & {} & {} & {} & {} & {} & {} & {} & {} & {} & {} \\\\\n", LatexEscape(name),
        row.samples, LatexBounded(FormatUs(row.min_ns), b.min),
        LatexBounded(FormatUs(row.mean_ns), b.mean),
        LatexBounded(FormatUs(row.median_ns), b.Percentile(row.median_ns)),
        LatexBounded(FormatUs(row.p95_ns), b.Percentile(row.p95_ns)),
        LatexBounded(FormatUs(row.p99_ns), b.Percentile(row.p99_ns)),
        LatexBounded(FormatUs(row.p999_ns), b.Percentile(row.p999_ns)),
        LatexBounded(FormatUs(row.p9999_ns), b.Percentile(row.p9999_ns)),
        LatexBounded(FormatUs(row.max_ns), b.max), LatexBounded(FormatUs(row.stddev_ns), b.stddev),
        row.misses_not_counted ? std::string("n/c")
                               : LatexBounded(std::to_string(row.missed_activations),
                                              results::MissesBound(row.misses_unknown)),
        row.misses_not_counted ? std::string("n/c") : std::to_string(row.skipped_periods));
    for (const auto& reason : b.reasons) notes += "% " + name + ": " + reason + "\n";
  }
  tex += "\\bottomrule\n\\end{tabular}\n\\end{table}\n";
  if (!notes.empty()) {
    tex += "% $\\geq$ lower bound, $\\leq$ upper bound, ? unknown (imported data):\n" + notes;
  }
  return tex + PerPeriodTableTex(results::SummarizeScenarios(suite));
}

}  // namespace rtpulse::report
