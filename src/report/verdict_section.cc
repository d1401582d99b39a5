#include "report/verdict_section.h"

#include <fmt/format.h>

#include "report/latex_table.h"

namespace rtpulse::report {
namespace {

std::string VerdictMarginCell(const results::VerdictRow& row) {
  if (!row.margin_ns) return "";
  const std::string at_least = row.value.exact() ? "" : "\u2265 ";
  const int64_t m = *row.margin_ns;
  const std::string us = fmt::format("{:.3f} us", static_cast<double>(m < 0 ? -m : m) / 1000.0);
  return (m >= 0 ? "margin " : "over by ") + at_least + us;
}

std::string VerdictHeading(const results::Verdict& v) {
  if (v.budget) {
    return "Budget " + stats::FormatBudget(*v.budget) + ": " + results::VerdictOverallLine(v) + ".";
  }
  return "No budget given (rtpulse report RUN --budget LATENCY[@PERCENTILE], e.g. "
         "--budget 100us@p99.99); scenarios ranked by " +
         stats::StatisticLabel(v.percentile) + ".";
}

/// Escaped for LaTeX, with "<=", ">=" and "\u2265" as math relations.
std::string VerdictLatexCell(const std::string& text) {
  const std::string escaped = LatexEscape(text);
  std::string out;
  for (size_t i = 0; i < escaped.size(); ++i) {
    if (escaped.compare(i, 2, "<=") == 0) {
      out += "$\\leq$";
      ++i;
    } else if (escaped.compare(i, 2, ">=") == 0 || escaped.compare(i, 3, "\u2265") == 0) {
      out += "$\\geq$";
      i += escaped[i] == '>' ? size_t{1} : size_t{2};
    } else {
      out += escaped[i];
    }
  }
  return out;
}

constexpr const char* kVerdictRule =
    "Judged per period (every period once, a skipped one late from its deadline to the wake-up "
    "that ended the stall) where that is known, per wake-up otherwise (imports). A percentile "
    "from a histogram is known to lie in its bucket: PASS when the bucket's upper edge is at "
    "or below the budget, FAIL when its lower edge is above it, UNDECIDED when the bucket "
    "straddles it; the maximum and samples-log values are exact. A percentile needs about "
    "10 / (1 - p) samples; below that it is marked as not supported.";

}  // namespace

std::string VerdictFirstScreenHtml(const results::Verdict& v) {
  if (v.rows.empty() && v.not_measured.empty()) return "";
  const std::string stat = stats::StatisticLabel(v.percentile);
  std::string html = "<p><strong>" + HtmlEscape(VerdictHeading(v)) + "</strong></p>\n<ul>\n";
  for (const auto& r : v.rows) {
    std::string line = r.name + ": ";
    if (r.outcome) line += std::string(stats::OutcomeName(*r.outcome)) + ", ";
    line += stat + " " + results::VerdictValueText(r.value, r.outcome);
    if (const std::string margin = VerdictMarginCell(r); !margin.empty()) line += ", " + margin;
    if (!r.Supported()) line += " (" + results::SupportNote(r, v.percentile) + ")";
    const std::string cls =
        r.outcome ? "verdict-" + std::string(stats::OutcomeName(*r.outcome)) : "note";
    html += "<li class=\"" + cls + "\">" + HtmlEscape(line) + "</li>\n";
  }
  for (const auto& name : v.not_measured) {
    html +=
        "<li class=\"warn\">" + HtmlEscape(name + ": nothing was measured, not judged") + "</li>\n";
  }
  html += "</ul>\n";
  if (const std::string worst = results::VerdictWorstLine(v); !worst.empty()) {
    html += "<p>" + HtmlEscape(worst) + "</p>\n";
  }
  return html +
         "<p class=\"note\">Each row's basis, count and the rule: <a "
         "href=\"#verdict\">Verdict</a>.</p>\n";
}

HtmlSection VerdictHtmlSection(const results::Verdict& v) {
  const std::string stat = stats::StatisticLabel(v.percentile);
  std::string html = "<p><strong>" + HtmlEscape(VerdictHeading(v)) + "</strong></p>\n";
  if (const std::string worst = results::VerdictWorstLine(v); !worst.empty()) {
    html += "<p>" + HtmlEscape(worst) + "</p>\n";
  }
  html += "<table>\n<tr><th>scenario</th><th>verdict</th><th>judged</th><th>" + HtmlEscape(stat) +
          "</th><th>margin</th><th>support</th></tr>\n";
  for (const auto& r : v.rows) {
    const std::string outcome = r.outcome ? stats::OutcomeName(*r.outcome) : "";
    std::string support = r.Supported() ? "ok" : results::SupportNote(r, v.percentile);
    if (!r.bound_reason.empty()) support += "; bounded: " + r.bound_reason;
    html += fmt::format(
        "<tr><td>{}</td><td class=\"verdict-{}\">{}</td><td>{} {}</td><td>{}</td><td>{}</td>"
        "<td>{}</td></tr>\n",
        HtmlEscape(r.name), HtmlEscape(outcome), HtmlEscape(outcome),
        r.per_period ? "per period," : "per wake-up,", r.count,
        HtmlEscape(results::VerdictValueText(r.value, r.outcome)), HtmlEscape(VerdictMarginCell(r)),
        HtmlEscape(support));
  }
  html += "</table>\n";
  for (const auto& name : v.not_measured) {
    html += "<p>" + HtmlEscape(name) + ": nothing was measured, not judged.</p>\n";
  }
  html += "<p>" + HtmlEscape(kVerdictRule) + "</p>\n";
  return HtmlSection{"verdict", "Verdict", html};
}

std::string VerdictTableTex(const results::Verdict& v) {
  const std::string stat = stats::StatisticLabel(v.percentile);
  std::string tex =
      "% rtpulse verdict (written by rtpulse report). Needs \\usepackage{booktabs}.\n"
      "% " +
      VerdictHeading(v) + "\n% " + kVerdictRule + "\n";
  for (const auto& r : v.rows) {
    if (!r.Supported()) tex += "% " + r.name + ": " + results::SupportNote(r, v.percentile) + "\n";
  }
  tex += "\\begin{table}[htbp]\n\\centering\n\\small\n";
  tex += fmt::format(
      "\\caption{{Verdict: {}}}\n\\label{{tab:rtpulse-verdict}}\n",
      LatexEscape(v.budget ? stats::FormatBudget(*v.budget) : "no budget, ranked by " + stat));
  tex += "\\begin{tabular}{llrlll}\n\\toprule\n";
  tex += "Scenario & Verdict & Count & " + LatexEscape(stat) +
         " & Margin & Supported \\\\\n\\midrule\n";
  for (const auto& r : v.rows) {
    const std::string value = VerdictLatexCell(results::VerdictValueText(r.value, r.outcome));
    const std::string margin = VerdictLatexCell(VerdictMarginCell(r));
    tex += fmt::format("{} & {} & {} & {} & {} & {} \\\\\n", LatexEscape(r.name),
                       r.outcome ? stats::OutcomeName(*r.outcome) : "-", r.count, value, margin,
                       r.Supported() ? "yes" : "no");
  }
  tex += "\\bottomrule\n\\end{tabular}\n\\end{table}\n";
  return tex;
}

}  // namespace rtpulse::report
