#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/command_runner.h"
#include "core/error.h"

namespace rtpulse::report {

/// How a figure's series are drawn.
enum class PlotKind {
  kLines,  ///< Points joined by lines (exceedance curves, time series).
  /// Histogram classes: each point is a class (x = lower edge, width 1 in x units) and its
  /// count; neighbouring classes are joined, empty classes between them break the line, and
  /// an isolated class shows as a dot.
  kSteps,
  kBars,  ///< Grouped bars: x = category index (0, 1, ...), one bar per series in a group.
  /// Box plots from Figure::boxes: x = category index, one box per series in a group (placed
  /// side by side as kBars places bars); a box from box_low to box_high with a line at the
  /// median, whiskers from whisker_low to whisker_high, and a dot at `dot`.
  kBoxes,
};

/// One box of a kBoxes figure, in y units.
struct Box {
  double x = 0;  ///< Category index.
  double whisker_low = 0;
  double box_low = 0;
  double median = 0;
  double box_high = 0;
  double whisker_high = 0;
  double dot = 0;  ///< Drawn as a point (e.g. the maximum beyond the upper whisker).
};

/// Image formats gnuplot renders (terminals pngcairo, svg, pdfcairo of Debian's gnuplot-nox).
enum class ImageFormat { kPng, kSvg, kPdf };
const char* ImageFormatExtension(ImageFormat format);  ///< "png", "svg", "pdf".
/// Parses "png,svg,pdf" (any subset, any order); an error names the bad word.
Expected<std::vector<ImageFormat>> ParseImageFormats(const std::string& text);
inline const std::vector<ImageFormat> kAllImageFormats = {ImageFormat::kPng, ImageFormat::kSvg,
                                                          ImageFormat::kPdf};

/// One curve (or one bar of every group).
struct Series {
  std::string title;                              ///< Legend entry.
  std::vector<std::pair<double, double>> points;  ///< (x, y), in drawing order.
  /// Extra gnuplot style appended to the plot clause, e.g. "lw 2 dt 2" or "lc rgb '#c00000'".
  /// Empty: gnuplot's default colour cycle.
  std::string style;
  bool y2 = false;  ///< Plot against the right-hand axis (y2label).
};

/// A vertical line across the plot at x (first axis units), with a label along it (e.g.
/// where a scenario starts on an over-time figure).
struct XMarker {
  double x = 0;
  std::string text;
};

/// A figure, independent of the data it came from, so the report and `rtpulse compare` can
/// both build one and render it the same way. Points that a log axis cannot show (x or y
/// <= 0) are still written to the .dat file; gnuplot skips them.
struct Figure {
  std::string name;  ///< File stem: NAME.dat, NAME.gp, NAME.png, ... ([A-Za-z0-9_.-] only).
  std::string title;
  std::string xlabel;
  std::string ylabel;
  std::string y2label;  ///< Only used when a series has y2 set.
  bool logx = false;
  bool logy = false;
  PlotKind kind = PlotKind::kLines;
  std::vector<Series> series;
  /// kBoxes: boxes[i] are series[i]'s boxes (its points are not used); missing = none.
  std::vector<std::vector<Box>> boxes;
  /// kBars, kBoxes: the x tic label of each category index.
  std::vector<std::string> categories;
  /// kBars: every series' bar at the category index itself, full width, drawn last series
  /// first, so series whose y values are cumulative (each the sum of it and the ones before)
  /// show as one stacked bar per category (the first series at the bottom).
  bool stacked = false;
  std::optional<double> xmin, xmax, ymin, ymax;
  /// Written as "# " comment lines at the top of the .dat file (units, how the data was
  /// derived) and of the .gp script.
  std::vector<std::string> notes;
  /// Text drawn inside the plot, one line each, at the top left under the title (what the
  /// axes leave out, e.g. samples beyond the x range). The report repeats them in the caption.
  std::vector<std::string> labels;
  std::vector<XMarker> markers;            ///< Vertical lines with a label, in x order.
  std::string key_position = "top right";  ///< gnuplot `set key` position.
  int width_px = 1000;
  int height_px = 600;
};

/// What RenderFigure wrote (absolute or as given by `dir`).
struct FigureFiles {
  std::string dat;
  std::string gp;
  std::vector<std::string> images;  ///< One per requested format, in request order.
  std::string svg;                  ///< The SVG image, "" when not requested.
};

/// The .dat file: the notes as comments, then one gnuplot data block per series (separated
/// by two blank lines, so `index N` selects series N), each headed by its title. Numbers are
/// printed with up to 10 significant digits ("%.10g"), so the text is deterministic. kBoxes:
/// one line per box, "x whisker_low box_low median box_high whisker_high dot".
std::string FigureData(const Figure& figure);

/// The .gp script: labels, axes, styles and the plot command reading NAME.dat from the
/// current folder. It sets no terminal, so one script serves every format:
///   gnuplot -e "set terminal pngcairo; set output 'NAME.png'" NAME.gp
std::string FigureScript(const Figure& figure);

struct RenderOptions {
  std::vector<ImageFormat> formats = kAllImageFormats;
  /// Runs gnuplot; null uses the real one (SystemCommandRunner).
  const CommandRunner* runner = nullptr;
  std::chrono::milliseconds timeout{60'000};  ///< Per gnuplot run.
};

/// Writes DIR/NAME.dat and DIR/NAME.gp, then runs gnuplot once per format (no shell, with
/// a timeout) to make DIR/NAME.<ext>. DIR must exist. Errors: ResourceError when gnuplot is
/// not installed (naming the Debian package gnuplot-nox), Failure when it fails (with its
/// stderr) or writes no image, UsageError for a figure with no points or a bad name.
Expected<FigureFiles> RenderFigure(const Figure& figure, const std::string& dir,
                                   const RenderOptions& options = {});

/// Runs `gnuplot -e "cd DIR; COMMANDS"` (no shell, within `timeout`) and checks that it made
/// DIR/IMAGE, a file that is not empty, which it then hands to the user behind sudo. The one
/// way rtpulse runs gnuplot (RenderFigure, the wcet exceedance plot). Errors: Failure naming
/// the image and the timeout, or gnuplot's exit code and stderr.
Status RunGnuplot(const CommandRunner& runner, const std::string& dir, const std::string& commands,
                  const std::string& image, std::chrono::milliseconds timeout);

/// Quotes text for a gnuplot single-quoted string ('' stands for ').
std::string GnuplotQuote(const std::string& text);

}  // namespace rtpulse::report
