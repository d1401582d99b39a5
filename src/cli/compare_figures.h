#pragma once

#include <string>
#include <utility>
#include <vector>

#include "cli/compare_report.h"
#include "core/error.h"

namespace rtpulse::cli {

// TODO(report): replace FigureSpec and the local .dat/.gp writer with report::Figure
// {name, title, xlabel, ylabel, logx, logy, series} and report::RenderFigure(fig, dir) once
// branch `report` lands src/report/; the figure data below maps onto it one to one.

/// One curve of a figure.
struct FigureSeries {
  std::string title;
  std::vector<std::pair<double, double>> points;  ///< (x, y), x ascending.
};

/// One overlaid figure: every run's series of one scenario.
struct FigureSpec {
  std::string name;  ///< File stem.
  std::string title;
  std::string xlabel;
  std::string ylabel;
  bool logx = false;
  bool logy = false;
  std::vector<FigureSeries> series;
};

/// Per compared scenario: the histogram in 1 us classes with a log count axis (the OSADL
/// latency-plot convention), and the exceedance curve (fraction of samples at or above x,
/// i.e. 1 - CDF just below x) on log-log axes, every run overlaid.
std::vector<FigureSpec> CompareFigures(const Comparison& c);

/// Writes every figure as NAME.dat + NAME.gp into `dir` (created), then runs gnuplot, when
/// installed, to make NAME.svg. Returns the SVGs' text (for inline embedding), empty when
/// gnuplot is absent (a warning says so; the .gp files can be rendered later).
Expected<std::vector<std::string>> WriteCompareFigures(const Comparison& c, const std::string& dir);

}  // namespace rtpulse::cli
