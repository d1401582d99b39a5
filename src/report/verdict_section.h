// The report's verdict: the run judged against a latency budget (or, without one, which
// scenario is worst), as an HTML section and a LaTeX table (docs/budget.md, docs/report.md).
#pragma once

#include <string>

#include "report/html_page.h"
#include "results/budget_verdict.h"

namespace rtpulse::report {

/// The "Verdict" section of report/index.html: the overall and worst lines, one table row per
/// scenario (verdict, basis, value, margin, support), and the rule.
HtmlSection VerdictHtmlSection(const results::Verdict& verdict);

/// The verdict's short form for the report's first screen: the heading (the budget's overall
/// line, or the statistic scenarios are ranked by), one line per scenario (its verdict, value,
/// margin, and the support note when its count does not support the statistic), the worst
/// line and a link to the full section; "" when nothing was judged.
std::string VerdictFirstScreenHtml(const results::Verdict& verdict);

/// tables/verdict.tex: the same rows as a booktabs table, values and margins in us with three
/// decimals, "$\leq$" / "$\geq$" marking a bound; comment lines state the rule.
std::string VerdictTableTex(const results::Verdict& verdict);

}  // namespace rtpulse::report
