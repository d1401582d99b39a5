// rtpulse report RUN: figures (gnuplot), LaTeX tables and one self-contained HTML page from
// a run's result.json (docs/report.md). Re-runnable at any time.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <memory>
#include <string>

#include "cli/command.h"
#include "core/file_owner.h"
#include "report/report.h"
#include "report/workload_sections.h"
#include "results/budget_verdict.h"
#include "results/suite_reader.h"
#include "stats/budget.h"

namespace rtpulse::cli {
namespace {

struct ReportCliOptions {
  std::string run;
  std::string out;
  std::string formats = "png,svg,pdf";
  bool no_html = false;
  std::string budget;
  bool verbose = false;
};

int RunReport(const ReportCliOptions& o) {
  auto formats = report::ParseImageFormats(o.formats);
  if (!formats) return ReportError(formats.error());
  report::ReportOptions options;
  if (!o.budget.empty()) {
    auto budget = stats::ParseBudget(o.budget);
    if (!budget) return ReportError(UsageError("--budget: " + budget.error().message));
    options.budget = *budget;
  }
  options.out_dir = o.out;
  options.formats = *formats;
  options.html = !o.no_html;
  const std::string folder = results::RunFolder(o.run);
  const std::string out_root = o.out.empty() ? folder : o.out;
  const std::vector<report::ImageFormat> image_formats = *formats;
  // The workload's own figures first (each none for another workload), then the estimates.
  options.extra_sections.push_back(
      [folder, out_root, image_formats](const results::SuiteResult& suite) {
        auto sections = report::ControlReportSections(suite, folder, out_root, image_formats);
        for (auto& e : report::E2eReportSections(suite, folder, out_root, image_formats)) {
          sections.push_back(std::move(e));
        }
        return sections;
      });
  options.extra_sections.push_back([folder](const results::SuiteResult& suite) {
    return report::WorstCaseSections(suite, folder);
  });
  auto written = report::WriteReport(o.run, options);
  if (!written) return ReportError(written.error());
  for (const auto& note : written->notes) std::fprintf(stderr, "rtpulse: note: %s\n", note.c_str());
  // Every file with --verbose; else how many and where, and the page to open last.
  std::string html;
  for (const auto& path : written->written) {
    if (o.verbose) std::printf("%s\n", path.c_str());
    if (path.ends_with("/report/index.html")) html = path;
  }
  if (!o.verbose) {
    std::printf("wrote %zu files (figures, tables%s) under %s; --verbose lists them\n",
                written->written.size(), html.empty() ? "" : ", the HTML page", out_root.c_str());
  }
  // The verdict the user asked for: its lines start with "verdict:", two blanks,
  // "meets"/"does not meet", "worst:" or "per period", never with a path.
  if (options.budget) std::fputs(results::FormatVerdict(written->verdict).c_str(), stdout);
  if (!html.empty()) std::printf("open %s\n", html.c_str());
  if (!options.budget) return ToInt(ExitCode::kOk);
  return ToInt(written->verdict.Met() ? ExitCode::kOk : ExitCode::kBudgetNotMet);
}

}  // namespace

Runner SetupReport(CLI::App& sub) {
  auto o = std::make_shared<ReportCliOptions>();
  sub.add_option("RUN", o->run, "results folder, result.json, or 'latency --json' file")
      ->required();
  sub.add_option("--out", o->out,
                 "write report/, figures/ and tables/ under DIR (default: the run folder)");
  sub.add_option("--formats", o->formats, "image formats, any of png,svg,pdf")
      ->capture_default_str();
  sub.add_flag("--no-html", o->no_html, "figures and tables only");
  sub.add_flag("-v,--verbose", o->verbose, "list every file written");
  sub.add_option("--budget", o->budget,
                 "judge the run: LATENCY[@PERCENTILE], e.g. 100us@p99.99 (without: the max); "
                 "prints the verdict, exit 4 when not met (docs/budget.md)");
  return [o] { return RunReport(*o); };
}

}  // namespace rtpulse::cli
