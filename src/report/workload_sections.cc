#include "report/workload_sections.h"

#include <fmt/format.h>

#include "core/fs_root.h"
#include "report/control_figures.h"
#include "report/e2e_figures.h"
#include "results/control_file.h"
#include "results/control_result.h"
#include "results/e2e_result.h"
#include "results/sample_series.h"
#include "stats/evt.h"

namespace rtpulse::report {
namespace {

std::string Paragraph(const std::string& text) {
  return "<p>" + HtmlEscape(text) + "</p>\n";
}

/// OUT_ROOT/figures/NAME.svg inline, with its caption; "" when the file is not there (not
/// drawn: the notes say why, or svg was not among the formats).
std::string InlineFigure(const std::string& out_root, const std::string& name,
                         const std::string& caption) {
  auto svg = ReadWholeFile(out_root + "/figures/" + name + ".svg");
  if (!svg) return "";
  return "<figure id=\"fig-" + HtmlEscape(name) + "\">" + InlineSvg(*svg, name + "-") +
         "<figcaption>" + HtmlEscape(caption) + "</figcaption></figure>\n";
}

/// Draws a workload's figures with `write` (a Write*Figures call) in `formats`: what it says
/// it did not draw, and its error, as paragraphs.
template <typename WriteFn>
std::string DrawnNotes(const std::string& what, const std::vector<ImageFormat>& formats,
                       const WriteFn& write) {
  std::vector<std::string> notes;
  RenderOptions render;
  render.formats = formats;
  if (Status st = write(render, &notes); !st) {
    notes.push_back(what + " not drawn: " + st.error().message);
  }
  std::string html;
  for (const auto& n : notes) html += Paragraph(n);
  return html;
}

bool IsWorkload(const results::SuiteResult& suite, const char* workload) {
  return suite.config.is_object() && suite.config.value("workload", "") == workload;
}

/// "fifo:99, no stress" -> "fifo:99": the configuration without its load, the box plot's
/// category (a standard and a stress run of one configuration pair up on it).
std::string WithoutLoad(const std::string& configuration) {
  for (const char* suffix : {", no stress", ", stress"}) {
    if (configuration.ends_with(suffix)) {
      return configuration.substr(0, configuration.size() - std::string(suffix).size());
    }
  }
  return configuration;
}

}  // namespace

std::vector<HtmlSection> WorstCaseSections(const results::SuiteResult& suite,
                                           const std::string& folder) {
  std::string html =
      "<p>Extreme value estimates from the time-ordered samples (<code>rtpulse wcet</code>, "
      "docs/wcet.md). " +
      HtmlEscape(std::string(stats::kEvtDisclaimer)) + "</p>\n";
  size_t analysed = 0;
  for (const auto& s : suite.scenarios) {
    if (s.samples_file.empty()) continue;
    auto series = results::OpenSampleSeries(folder + "/" + s.samples_file);
    if (!series) {
      html += Paragraph(s.name + ": " + series.error().message);
      continue;
    }
    stats::EvtOptions options;
    options.bootstrap = 100;
    const auto evt = stats::EstimateWorstCase(series->pass, options);
    if (!evt) {
      html += Paragraph(s.name + ": " + evt.error().message);
      continue;
    }
    ++analysed;
    const std::string text = "<pre>" + HtmlEscape(stats::FormatEvtReport(*evt)) + "</pre>\n";
    if (evt->pot.trust.trusted || evt->bm.trust.trusted) {
      html += "<h3>" + HtmlEscape(s.name) + "</h3>\n" + text;
      continue;
    }
    // Nothing trustworthy: one line, the tables behind it for whoever wants them.
    std::string why = evt->pot.trust.reason;
    if (!evt->bm.trust.reason.empty() && evt->bm.trust.reason != why) {
      why += (why.empty() ? "" : "; ") + std::string("block maxima: ") + evt->bm.trust.reason;
    }
    html += "<details><summary>" +
            HtmlEscape(fmt::format("{}: no trustworthy estimate{}{}", s.name,
                                   why.empty() ? "" : ": ", why)) +
            "</summary>\n" + text + "</details>\n";
  }
  if (analysed == 0) {
    html +=
        "<p>No scenario logged its samples, so no estimate: re-run the suite with "
        "<code>--samples</code>.</p>\n";
  }
  return {HtmlSection{"worst-case", "Worst-case estimates (EVT)", html}};
}

std::vector<HtmlSection> E2eReportSections(const results::SuiteResult& suite,
                                           const std::string& folder, const std::string& out_root,
                                           const std::vector<ImageFormat>& formats) {
  if (!IsWorkload(suite, "e2e")) return {};
  std::string html =
      "<p>Where each scenario's end-to-end time (capture to alert) goes: per scenario the p50, "
      "p90, p99 and max of every stage, stacked; a stack's height is the sum of the stages' "
      "statistics, not Total's (each scenario's <code>e2e_statistics.txt</code> has that). "
      "From <code>frames.csv</code> (docs/e2e.md).</p>\n";
  std::vector<E2eFigureInput> inputs;
  for (const auto& s : suite.scenarios) {
    auto rows = results::ReadFrameLog(folder + "/" + s.name + "/frames.csv");
    if (!rows) {
      html += Paragraph(s.name + ": " + rows.error().message);
      continue;
    }
    inputs.push_back({s.name, *rows});
  }
  html += DrawnNotes("e2e_stages", formats, [&](const RenderOptions& render, auto* notes) {
    return WriteE2eFigures(out_root, inputs, render, notes);
  });
  html += InlineFigure(out_root, "e2e_stages", "figures/e2e_stages (data: e2e_stages.dat)");
  return {HtmlSection{"e2e-stages", "End-to-end stages (rtpulse e2e)", html}};
}

std::vector<HtmlSection> ControlReportSections(const results::SuiteResult& suite,
                                               const std::string& folder,
                                               const std::string& out_root,
                                               const std::vector<ImageFormat>& formats) {
  if (!IsWorkload(suite, "control")) return {};
  std::string html =
      "<p>Each configuration's response time (release to the job's end, the study's "
      "quantity), from its <code>jobs.csv</code> (docs/control.md, \"Figures\"): the "
      "distribution of every configuration on one plot, and a box per configuration, standard "
      "and stress side by side.</p>\n";
  std::vector<ControlFigureInput> inputs;
  for (const auto& s : suite.scenarios) {
    const std::string dir = folder + "/" + s.name;
    auto rows = results::ReadJobLog(dir + "/jobs.csv");
    auto file = results::ReadControlFile(dir + "/control.json");
    if (!rows || !file) {
      html += Paragraph(s.name + ": " + (!rows ? rows.error() : file.error()).message);
      continue;
    }
    inputs.push_back({s.name, WithoutLoad(file->configuration), file->loaded, *rows});
  }
  html += DrawnNotes("control figures", formats, [&](const RenderOptions& render, auto* notes) {
    return WriteControlFigures(out_root, inputs, render, notes);
  });
  html += InlineFigure(out_root, "control_response_cdf",
                       "Response time per configuration: P(response >= x), log-log "
                       "(figures/control_response_cdf, data: control_response_cdf.dat).");
  html += InlineFigure(out_root, "control_response_boxes",
                       std::string(kControlBoxRule) +
                           " (figures/control_response_boxes, data: control_response_boxes.dat).");
  return {HtmlSection{"control-figures", "Control response times (rtpulse control)", html}};
}

}  // namespace rtpulse::report
