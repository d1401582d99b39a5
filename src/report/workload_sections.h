#pragma once

#include <string>
#include <vector>

#include "report/figure.h"
#include "report/html_page.h"
#include "results/suite_result.h"

// The report's sections that read a run's own files beyond result.json (docs/report.md): the
// worst-case estimates from each scenario's samples log, and the figures of the `control`
// and `e2e` workloads, drawn again from every scenario's jobs.csv or frames.csv into the
// report's figures folder and shown inline.
namespace rtpulse::report {

/// The worst-case estimates (rtpulse wcet's analysis, the same text) of every scenario of
/// the run in `folder` that logged its samples. A scenario for which neither method gives a
/// trustworthy estimate is one line saying why, its full analysis folded under it.
std::vector<HtmlSection> WorstCaseSections(const results::SuiteResult& suite,
                                           const std::string& folder);

/// An `rtpulse e2e` run's stacked per-stage figure (docs/e2e.md, "Figures"), drawn into
/// OUT_ROOT/figures; none for another workload.
std::vector<HtmlSection> E2eReportSections(const results::SuiteResult& suite,
                                           const std::string& folder, const std::string& out_root,
                                           const std::vector<ImageFormat>& formats);

/// An `rtpulse control` run's response-time figures (docs/control.md, "Figures"), drawn into
/// OUT_ROOT/figures from each scenario's jobs.csv and control.json; none for another workload.
std::vector<HtmlSection> ControlReportSections(const results::SuiteResult& suite,
                                               const std::string& folder,
                                               const std::string& out_root,
                                               const std::vector<ImageFormat>& formats);

}  // namespace rtpulse::report
