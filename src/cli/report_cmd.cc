// rtpulse report RUN: figures (gnuplot), LaTeX tables and one self-contained HTML page from
// a run's result.json (docs/report.md). Re-runnable at any time.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <memory>
#include <string>

#include "cli/command.h"
#include "core/file_owner.h"
#include "report/e2e_figures.h"
#include "report/html_page.h"
#include "report/report.h"
#include "results/budget_verdict.h"
#include "results/e2e_result.h"
#include "results/sample_series.h"
#include "results/suite_reader.h"
#include "stats/budget.h"
#include "stats/evt.h"

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

/// The report's worst-case section: rtpulse wcet's analysis of every scenario that logged
/// its samples (the same estimate, text and warnings as `rtpulse wcet`).
std::vector<report::HtmlSection> WorstCaseSections(const results::SuiteResult& suite,
                                                   const std::string& folder) {
  std::string html =
      "<p>Extreme value estimates from the time-ordered samples (<code>rtpulse wcet</code>, "
      "docs/wcet.md). " +
      report::HtmlEscape(std::string(stats::kEvtDisclaimer)) + "</p>\n";
  size_t analysed = 0;
  for (const auto& s : suite.scenarios) {
    if (s.samples_file.empty()) continue;
    auto series = results::OpenSampleSeries(folder + "/" + s.samples_file);
    if (!series) {
      html += "<p>" + report::HtmlEscape(s.name + ": " + series.error().message) + "</p>\n";
      continue;
    }
    stats::EvtOptions options;
    options.bootstrap = 100;
    const auto evt = stats::EstimateWorstCase(series->pass, options);
    if (!evt) {
      html += "<p>" + report::HtmlEscape(s.name + ": " + evt.error().message) + "</p>\n";
      continue;
    }
    html += "<h3>" + report::HtmlEscape(s.name) + "</h3>\n<pre>" +
            report::HtmlEscape(stats::FormatEvtReport(*evt)) + "</pre>\n";
    ++analysed;
  }
  if (analysed == 0) {
    html +=
        "<p>No scenario logged its samples, so no estimate: re-run the suite with "
        "<code>--samples</code>.</p>\n";
  }
  return {report::HtmlSection{"worst-case", "Worst-case estimates (EVT)", html}};
}

/// An `rtpulse e2e` run's section: the stacked per-stage figure (docs/e2e.md, "Figures"),
/// drawn again from every scenario's frames.csv into the report's figures folder.
std::vector<report::HtmlSection> E2eReportSections(
    const results::SuiteResult& suite, const std::string& folder, const std::string& out_root,
    const std::vector<report::ImageFormat>& formats) {
  if (!suite.config.is_object() || suite.config.value("workload", "") != "e2e") return {};
  std::string html =
      "<p>Where each scenario's end-to-end time (capture to alert) goes: per scenario the p50, "
      "p90, p99 and max of every stage, stacked; a stack's height is the sum of the stages' "
      "statistics, not Total's (each scenario's <code>e2e_statistics.txt</code> has that). "
      "From <code>frames.csv</code> (docs/e2e.md).</p>\n";
  std::vector<report::E2eFigureInput> inputs;
  for (const auto& s : suite.scenarios) {
    auto rows = results::ReadFrameLog(folder + "/" + s.name + "/frames.csv");
    if (!rows) {
      html += "<p>" + report::HtmlEscape(s.name + ": " + rows.error().message) + "</p>\n";
      continue;
    }
    inputs.push_back({s.name, *rows});
  }
  std::vector<std::string> notes;
  report::RenderOptions render;
  render.formats = formats;
  if (Status st = report::WriteE2eFigures(out_root, inputs, render, &notes); !st) {
    notes.push_back("e2e_stages not drawn: " + st.error().message);
  }
  for (const auto& n : notes) html += "<p>" + report::HtmlEscape(n) + "</p>\n";
  const std::string svg_path = out_root + "/figures/e2e_stages.svg";
  std::FILE* f = std::fopen(svg_path.c_str(), "rb");
  if (f != nullptr) {
    std::string svg;
    char buf[65536];
    size_t n = 0;
    while ((n = std::fread(buf, 1, sizeof(buf), f)) > 0) svg.append(buf, n);
    std::fclose(f);
    html += "<figure>" + report::InlineSvg(svg, "e2e-stages-") +
            "<figcaption>figures/e2e_stages (data: e2e_stages.dat)</figcaption></figure>\n";
  }
  return {report::HtmlSection{"e2e-stages", "End-to-end stages (rtpulse e2e)", html}};
}

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
  options.extra_sections.push_back(
      [folder](const results::SuiteResult& suite) { return WorstCaseSections(suite, folder); });
  const std::string out_root = o.out.empty() ? folder : o.out;
  const std::vector<report::ImageFormat> image_formats = *formats;
  options.extra_sections.push_back(
      [folder, out_root, image_formats](const results::SuiteResult& suite) {
        return E2eReportSections(suite, folder, out_root, image_formats);
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
