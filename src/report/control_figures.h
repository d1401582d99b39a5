#pragma once

#include <string>
#include <vector>

#include "core/error.h"
#include "report/figure.h"
#include "results/control_result.h"

// The figures of `rtpulse control` (docs/control.md, "Output files"): the response-time
// distribution of every configuration on one plot, and a box plot per configuration with the
// standard and stress runs of a configuration side by side.
namespace rtpulse::report {

/// One configuration's run, as the figures need it.
struct ControlFigureInput {
  std::string scenario;  ///< The scenario's name, e.g. "fifo-99-stress" (legend text).
  /// The configuration without its load, e.g. "fifo:99": the box plot's category. A standard
  /// and a stress run pair up when this text is the same (never guessed from `scenario`).
  std::string configuration;
  bool stress = false;  ///< This run had the stress load.
  std::vector<results::ControlJobRow> rows;
};

/// The whisker rule of ControlBoxFigure, written into the figure and its .dat file.
inline constexpr const char* kControlBoxRule =
    "box: p25 to p75, thick line: median, whiskers: min to p99, dot: max (nearest rank over "
    "the exact response times; no outlier rule, so every job lies between the whisker ends "
    "and the dot)";

/// Response-time distribution, one curve per input: at each distinct response time x (us,
/// exact ns / 1000), the fraction of that configuration's jobs with response >= x, on log-log
/// axes (1 at the minimum down to count(max)/N at the maximum, so the tail is drawn to its
/// last job). Inputs with no jobs get no curve and a label saying so.
Figure ControlCdfFigure(const std::vector<ControlFigureInput>& configs);

/// Box plot per configuration (categories in first-appearance order), series "standard" and
/// "stress" side by side where both exist; kControlBoxRule. A log y axis unless a response
/// is 0. Two inputs with the same configuration and load are a usage error.
Expected<Figure> ControlBoxFigure(const std::vector<ControlFigureInput>& configs);

/// Renders both figures into RUN_DIR/figures (created when missing) with RenderFigure: NAME.dat
/// (exactly the plotted values), NAME.gp and the images. A figure with nothing to draw (no
/// jobs at all) is not rendered; `notes`, when given, says so. gnuplot missing is the
/// ResourceError of RenderFigure.
Status WriteControlFigures(const std::string& run_dir,
                           const std::vector<ControlFigureInput>& configs,
                           const RenderOptions& options = {},
                           std::vector<std::string>* notes = nullptr);

}  // namespace rtpulse::report
