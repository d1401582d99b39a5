#pragma once

#include <string>
#include <vector>

#include "core/command_runner.h"
#include "core/error.h"
#include "report/figure.h"
#include "report/html_page.h"
#include "results/budget_verdict.h"
#include "stats/budget.h"

namespace rtpulse::report {

struct ReportOptions {
  /// Where report/, figures/ and tables/ go; "" = the run folder itself.
  std::string out_dir;
  std::vector<ImageFormat> formats = kAllImageFormats;
  bool html = true;
  const CommandRunner* runner = nullptr;  ///< gnuplot runner; null = the real one.
  /// Later analyses (EVT / worst-case estimate, ...) add their HTML sections here.
  std::vector<ExtraSectionsFn> extra_sections;
  /// --budget: judge the run against it; none: the budget the run was judged against, if any.
  std::optional<stats::Budget> budget;
};

struct ReportOutput {
  std::vector<std::string> written;  ///< Every file written, in order.
  std::vector<std::string> notes;    ///< Figures skipped or reduced, and why.
  results::Verdict verdict;          ///< What tables/verdict.tex and the page's Verdict say.
};

/// `rtpulse report`: reads RUN (a results folder, a result.json or a latency --json file,
/// results::ReadSuiteResult) and writes OUT/figures/ (.dat, .gp and images),
/// OUT/tables/summary.tex and OUT/report/index.html. Re-runnable: it overwrites its own
/// files. Errors: the reader's UsageError for a bad RUN; ResourceError without gnuplot.
Expected<ReportOutput> WriteReport(const std::string& run, const ReportOptions& options);

}  // namespace rtpulse::report
