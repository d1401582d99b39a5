#pragma once

#include <functional>
#include <string>
#include <vector>

#include "results/suite_result.h"

namespace rtpulse::report {

/// Escapes & < > " ' for HTML text and attribute values.
std::string HtmlEscape(const std::string& text);

/// A gnuplot SVG made fit to sit inline in a page: the XML prolog and doctype dropped, and
/// every id (and the references to it) prefixed with `prefix`, so several figures' ids
/// (gnuplot names its point symbols gpPt0, gpPt1, ... in every file) never collide.
std::string InlineSvg(const std::string& svg, const std::string& prefix);

/// One figure as the page shows it.
struct HtmlFigure {
  std::string name;                ///< File stem (anchor id).
  std::string caption;             ///< Plain text; escaped by the page.
  std::string svg;                 ///< The SVG file's content; "" to show only the caption.
  std::vector<std::string> files;  ///< Other formats and the .gp/.dat, relative to the page.
};

/// A section of the page: plain-text title, and body HTML that the producer has escaped.
struct HtmlSection {
  std::string id;
  std::string title;
  std::string html;
};

/// Appends sections after the built-in ones (before the per-scenario sections' end). The
/// hook for later analyses, e.g. the EVT / worst-case estimate section: a producer gets the
/// run and returns its sections.
using ExtraSectionsFn = std::function<std::vector<HtmlSection>(const results::SuiteResult&)>;

struct HtmlInputs {
  /// The verdict's short form for the first screen (HTML, escaped by its producer): one line
  /// per scenario and the worst line; "" for none.
  std::string first_screen;
  std::vector<HtmlFigure> figures;
  std::vector<std::string> notes;   ///< Figures skipped and why, other report remarks.
  std::vector<std::string> tables;  ///< Relative links to tables/*.tex.
  std::vector<ExtraSectionsFn> extra_sections;
};

/// One distinct warning text and where the run recorded it.
struct DistinctWarning {
  std::string text;
  bool whole_run = false;              ///< In result.json's run-level warnings.
  std::vector<std::string> scenarios;  ///< Scenarios that recorded it, in run order, once each.
};

/// Every warning of the run (run level, each scenario's, each scenario's latency run's) once
/// per distinct text, in order of first appearance: a machine-wide warning that every
/// scenario repeats is listed once, with the scenarios it applies to.
std::vector<DistinctWarning> DistinctWarnings(const results::SuiteResult& suite);

/// "whole run", "scenarios idle, cpu" or "whole run; scenarios idle, cpu".
std::string WarningScope(const DistinctWarning& warning);

/// report/index.html: one self-contained page (inline CSS, inline SVG, no network, no
/// external script). Order: the first screen (the run's status, `first_screen` and every
/// distinct warning), summary table, figures, extra sections, system information,
/// per-scenario sections. Every text from the run is escaped. A tiny inline
/// script records script errors into an element with id "rtpulse-errors" (checked by tests).
std::string RenderHtml(const results::SuiteResult& suite, const HtmlInputs& inputs);

}  // namespace rtpulse::report
