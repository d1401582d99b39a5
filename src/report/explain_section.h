// The report's "Why was it late" part (docs/report.md#why-was-it-late): for every scenario
// that ran with --explain, the cause table by total time and by count, the verdicts of the
// worst spikes with links to their raw trace windows, or why the trace did not run.
#pragma once

#include <string>

#include "report/html_page.h"
#include "results/suite_result.h"

namespace rtpulse::report {

/// Spikes listed per scenario, the latest first among equals: the worst by lateness.
inline constexpr size_t kWorstSpikesShown = 20;

/// Whether any scenario of `suite` carries an "explain" object.
bool HasExplain(const results::SuiteResult& suite);

/// The HTML section (id "why-late"). `run_prefix` is the run folder as seen from the page
/// ("../" when the page is <run>/report/index.html): window files, relative to the run
/// folder, are linked through it; an absolute window file is linked as it is. Durations are
/// in us with three decimals (exact ns / 1000), each cell also carrying data-ns.
HtmlSection ExplainHtmlSection(const results::SuiteResult& suite, const std::string& run_prefix);

/// The same as plain text (tables/why_late.txt): per scenario the counts, both cause tables
/// and the worst spikes' verdicts with their window files, or the unavailable reason.
std::string ExplainReportText(const results::SuiteResult& suite);

}  // namespace rtpulse::report
