#include "report/report.h"

#include <fmt/format.h>

#include <filesystem>

#include "core/atomic_file.h"
#include "core/file_owner.h"
#include "core/fs_root.h"
#include "report/explain_section.h"
#include "report/latex_table.h"
#include "report/monitor_log.h"
#include "report/run_figures.h"
#include "report/verdict_section.h"
#include "results/suite_reader.h"

namespace rtpulse::report {
namespace {

namespace fs = std::filesystem;

Status MakeDir(const std::string& dir) {
  return CreateFolders(dir);
}

/// Every figure of a run, with its caption, and what could not be drawn.
struct Planned {
  std::vector<std::pair<Figure, std::string>> figures;  // figure, caption
  std::vector<std::string> notes;
};

Planned PlanFigures(const results::SuiteResult& suite, const std::string& run_folder) {
  Planned plan;
  for (const auto& s : suite.scenarios) {
    if (!s.latency) {
      plan.notes.push_back(s.name + ": no histogram, nothing was measured");
      continue;
    }
    for (auto& f : ScenarioHistogramFigures(suite, s)) {
      const bool full = f.name.ends_with("_full");
      std::string caption = "Latency histogram of scenario " + s.name +
                            (full ? ", full range" : "") +
                            " (OSADL style: 1 us classes, log counts, one curve per CPU).";
      plan.figures.emplace_back(std::move(f), caption);
    }
  }
  Figure exceedance = ScenarioExceedanceFigure(suite);
  if (!exceedance.series.empty()) {
    plan.figures.emplace_back(std::move(exceedance),
                              "Exceedance (1 - CDF): the fraction of samples above each latency.");
  }
  const auto rows = results::SummarizeScenarios(suite);
  if (!rows.empty()) {
    plan.figures.emplace_back(PercentileBarsFigure(rows),
                              "p50, p99, p99.9, p99.99 and max per scenario (log scale).");
  }
  std::optional<MonitorLog> monitor;
  const std::string csv = run_folder + "/thermal_power_log.csv";
  if (auto log = ReadMonitorLog(csv)) {
    monitor = std::move(*log);
  } else {
    plan.notes.push_back("no monitor figures: " + log.error().message);
  }
  for (const auto& s : suite.scenarios) {
    if (!s.latency) continue;
    FigureSet timeline = LatencyTimelineFigures(s, run_folder, monitor ? &*monitor : nullptr);
    for (auto& f : timeline.figures) {
      plan.figures.emplace_back(std::move(f), "Latency over time in scenario " + s.name +
                                                  ": per-second maximum and p99.");
    }
    plan.notes.insert(plan.notes.end(), timeline.notes.begin(), timeline.notes.end());
  }
  if (monitor) {
    FigureSet m = MonitorFigures(*monitor, ScenarioStartMarkers(suite, *monitor));
    for (auto& f : m.figures) {
      std::string caption = f.title + " over the whole run (thermal_power_log.csv).";
      if (!f.markers.empty()) caption += " Dotted lines: where each scenario started.";
      plan.figures.emplace_back(std::move(f), caption);
    }
    plan.notes.insert(plan.notes.end(), m.notes.begin(), m.notes.end());
  }
  return plan;
}

}  // namespace

Expected<ReportOutput> WriteReport(const std::string& run, const ReportOptions& options) {
  auto suite = results::ReadSuiteResult(run);
  if (!suite) return suite.error();
  const std::string run_folder = results::RunFolder(run);
  const std::string out = options.out_dir.empty() ? run_folder : options.out_dir;
  const std::string figures_dir = out + "/figures";
  const std::string tables_dir = out + "/tables";
  const std::string report_dir = out + "/report";
  for (const auto& dir : {figures_dir, tables_dir}) {
    if (Status s = MakeDir(dir); !s) return s.error();
  }
  ReportOutput output;
  Planned plan = PlanFigures(*suite, run_folder);
  // A killed run (marked by its guardian, or a stale 'running') is said first, never shown as
  // running.
  if (!suite->status_note.empty()) plan.notes.insert(plan.notes.begin(), suite->status_note);
  output.notes = plan.notes;

  RenderOptions render;
  render.formats = options.formats;
  render.runner = options.runner;
  HtmlInputs html;
  html.notes = plan.notes;
  html.extra_sections = options.extra_sections;
  for (const auto& [figure, caption] : plan.figures) {
    auto files = RenderFigure(figure, figures_dir, render);
    if (!files) return files.error();
    output.written.push_back(files->dat);
    output.written.push_back(files->gp);
    output.written.insert(output.written.end(), files->images.begin(), files->images.end());
    // What the plot says in its labels (samples beyond the x range), the caption says too.
    std::string text = caption;
    for (const auto& label : figure.labels) text += " " + label + ".";
    HtmlFigure f{
        figure.name, text, files->svg.empty() ? "" : ReadWholeFile(files->svg).value_or(""), {}};
    for (const auto& path : files->images) {
      f.files.push_back("../figures/" + fs::path(path).filename().string());
    }
    f.files.push_back("../figures/" + figure.name + ".gp");
    f.files.push_back("../figures/" + figure.name + ".dat");
    html.figures.push_back(std::move(f));
  }
  const std::string tex = tables_dir + "/summary.tex";
  if (Status s = WriteFileAtomic(tex, SummaryTableTex(*suite)); !s) return s.error();
  output.written.push_back(tex);
  html.tables.push_back("../tables/summary.tex");
  output.verdict = results::JudgeSuite(*suite, options.budget ? options.budget : suite->budget);
  const std::string verdict_tex = tables_dir + "/verdict.tex";
  if (Status s = WriteFileAtomic(verdict_tex, VerdictTableTex(output.verdict)); !s) {
    return s.error();
  }
  output.written.push_back(verdict_tex);
  html.tables.push_back("../tables/verdict.tex");
  html.first_screen = VerdictFirstScreenHtml(output.verdict);
  html.extra_sections.insert(html.extra_sections.begin(),
                             [verdict = output.verdict](const results::SuiteResult&) {
                               return std::vector<HtmlSection>{VerdictHtmlSection(verdict)};
                             });
  if (HasExplain(*suite)) {
    const std::string why = tables_dir + "/why_late.txt";
    if (Status s = WriteFileAtomic(why, ExplainReportText(*suite)); !s) return s.error();
    output.written.push_back(why);
    // Window files are relative to the run folder; the page links them from report/.
    std::error_code ec;
    std::string prefix =
        fs::relative(fs::weakly_canonical(run_folder, ec), fs::weakly_canonical(report_dir, ec), ec)
            .string();
    prefix = prefix.empty() ? fs::absolute(run_folder).string() + "/" : prefix + "/";
    html.extra_sections.insert(html.extra_sections.begin() + 1,
                               [prefix](const results::SuiteResult& s) {
                                 return std::vector<HtmlSection>{ExplainHtmlSection(s, prefix)};
                               });
  }
  if (options.html) {
    if (Status s = MakeDir(report_dir); !s) return s.error();
    const std::string index = report_dir + "/index.html";
    if (Status s = WriteFileAtomic(index, RenderHtml(*suite, html)); !s) return s.error();
    output.written.push_back(index);
  }
  return output;
}

}  // namespace rtpulse::report
