#include "report/figure.h"

#include <fmt/format.h>
#include <sys/stat.h>

#include <algorithm>
#include <cmath>
#include <sstream>

#include "core/atomic_file.h"
#include "core/file_owner.h"
#include "core/float_compare.h"

namespace rtpulse::report {
namespace {

std::string Num(double v) {
  if (std::isnan(v)) return "NaN";
  return fmt::format("{:.10g}", v);
}

bool ValidName(const std::string& name) {
  if (name.empty() || name[0] == '.') return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '-' || c == '.';
  });
}

const std::vector<Box>& SeriesBoxes(const Figure& figure, size_t i) {
  static const std::vector<Box> kNoBoxes;
  return i < figure.boxes.size() ? figure.boxes[i] : kNoBoxes;
}

size_t SeriesPointCount(const Figure& figure, size_t i) {
  return figure.kind == PlotKind::kBoxes ? SeriesBoxes(figure, i).size()
                                         : figure.series[i].points.size();
}

size_t PointCount(const Figure& figure) {
  size_t n = 0;
  for (size_t i = 0; i < figure.series.size(); ++i) n += SeriesPointCount(figure, i);
  return n;
}

/// The x offset of series i of n within a category group (kBars, kBoxes): side by side,
/// centred on the category index, 0.8 wide in all.
double GroupOffset(size_t i, size_t n) {
  const double width = 0.8 / static_cast<double>(n);
  return (static_cast<double>(i) - (static_cast<double>(n) - 1) / 2) * width;
}

std::string OffsetX(double offset) {
  if (ExactlyEqual(offset, 0)) return "1";
  return fmt::format("($1{}{})", offset < 0 ? "" : "+", Num(offset));
}

bool AnyY2(const Figure& figure) {
  return std::any_of(figure.series.begin(), figure.series.end(),
                     [](const Series& s) { return s.y2; });
}

std::string Range(const std::optional<double>& lo, const std::optional<double>& hi) {
  return fmt::format("[{}:{}]", lo ? Num(*lo) : "*", hi ? Num(*hi) : "*");
}

/// The terminal line for one format; sizes follow the figure's pixel size (PDF at 100 px/in).
std::string Terminal(const Figure& figure, ImageFormat format) {
  switch (format) {
    case ImageFormat::kPng:
      return fmt::format("set terminal pngcairo size {},{} font 'sans,10' noenhanced",
                         figure.width_px, figure.height_px);
    case ImageFormat::kSvg:
      return fmt::format(
          "set terminal svg size {},{} dynamic font 'sans,10' noenhanced "
          "background rgb 'white'",
          figure.width_px, figure.height_px);
    case ImageFormat::kPdf:
      return fmt::format("set terminal pdfcairo size {}in,{}in font 'sans,8' noenhanced",
                         Num(figure.width_px / 100.0), Num(figure.height_px / 100.0));
  }
  return "";
}

}  // namespace

const char* ImageFormatExtension(ImageFormat format) {
  switch (format) {
    case ImageFormat::kPng:
      return "png";
    case ImageFormat::kSvg:
      return "svg";
    case ImageFormat::kPdf:
      return "pdf";
  }
  return "";
}

Expected<std::vector<ImageFormat>> ParseImageFormats(const std::string& text) {
  std::vector<ImageFormat> formats;
  std::stringstream in(text);
  std::string word;
  while (std::getline(in, word, ',')) {
    ImageFormat f;
    if (word == "png") {
      f = ImageFormat::kPng;
    } else if (word == "svg") {
      f = ImageFormat::kSvg;
    } else if (word == "pdf") {
      f = ImageFormat::kPdf;
    } else {
      return UsageError(
          fmt::format("--formats: unknown format '{}' (use a list of png, svg, pdf)", word));
    }
    if (std::find(formats.begin(), formats.end(), f) == formats.end()) formats.push_back(f);
  }
  if (formats.empty()) return UsageError("--formats: empty list (use e.g. png,svg,pdf)");
  return formats;
}

std::string GnuplotQuote(const std::string& text) {
  std::string out = "'";
  for (char c : text) {
    if (c == '\'') {
      out += "''";
    } else if (c == '\n') {
      out += ' ';
    } else {
      out += c;
    }
  }
  return out + "'";
}

std::string FigureData(const Figure& figure) {
  std::string out = fmt::format("# {}: {}\n", figure.name, figure.title);
  for (const auto& note : figure.notes) out += "# " + note + "\n";
  if (figure.kind == PlotKind::kBoxes) {
    out += fmt::format(
        "# columns: x ({}), whisker low, box low, median, box high, whisker high, dot ({})\n",
        figure.xlabel, figure.ylabel);
  } else {
    out += fmt::format("# columns: x ({}), y ({})\n", figure.xlabel, figure.ylabel);
  }
  for (size_t i = 0; i < figure.series.size(); ++i) {
    const Series& s = figure.series[i];
    if (i > 0) out += "\n\n";
    out += fmt::format("# index {}: {} ({} points)\n", i, s.title, SeriesPointCount(figure, i));
    if (figure.kind == PlotKind::kBoxes) {
      for (const Box& b : SeriesBoxes(figure, i)) {
        out += fmt::format("{} {} {} {} {} {} {}\n", Num(b.x), Num(b.whisker_low), Num(b.box_low),
                           Num(b.median), Num(b.box_high), Num(b.whisker_high), Num(b.dot));
      }
      continue;
    }
    for (size_t k = 0; k < s.points.size(); ++k) {
      const auto& [x, y] = s.points[k];
      // kSteps: a single blank line breaks the curve over empty classes, so a line across a
      // gap never suggests counts that are not there.
      if (figure.kind == PlotKind::kSteps && k > 0 && x - s.points[k - 1].first > 1) out += "\n";
      out += Num(x) + " " + Num(y) + "\n";
    }
  }
  return out;
}

std::string FigureScript(const Figure& figure) {
  std::string gp = fmt::format(
      "# {}.gp: gnuplot script for {}.dat (written by rtpulse report; edit to restyle).\n"
      "# Sets no terminal, so choose one when running it from this folder, e.g.\n"
      "#   gnuplot -e \"set terminal pngcairo size {},{}; set output '{}.png'\" {}.gp\n",
      figure.name, figure.name, figure.width_px, figure.height_px, figure.name, figure.name);
  for (const auto& note : figure.notes) gp += "# " + note + "\n";
  gp += "set encoding utf8\n";
  gp += "set title " + GnuplotQuote(figure.title) + "\n";
  gp += "set xlabel " + GnuplotQuote(figure.xlabel) + "\n";
  gp += "set ylabel " + GnuplotQuote(figure.ylabel) + "\n";
  if (AnyY2(figure)) {
    gp += "set y2label " + GnuplotQuote(figure.y2label) + "\nset y2tics\nset ytics nomirror\n";
  }
  gp += "set grid xtics ytics mxtics mytics lc rgb '#dddddd'\n";
  gp += "set key " + figure.key_position + " noenhanced\n";
  if (figure.logx) gp += "set logscale x 10\n";
  if (figure.logy) gp += "set logscale y 10\n";
  for (size_t i = 0; i < figure.labels.size(); ++i) {
    // Below the key's first lines and inside the border, in graph coordinates, so the text
    // stays put whatever the data's range.
    gp +=
        fmt::format("set label {} {} at graph 0.01, graph {} left front tc rgb '#b00000'\n", i + 1,
                    GnuplotQuote(figure.labels[i]), Num(0.96 - 0.05 * static_cast<double>(i)));
  }
  for (size_t i = 0; i < figure.markers.size(); ++i) {
    const XMarker& m = figure.markers[i];
    gp += fmt::format(
        "set arrow {} from first {}, graph 0 to first {}, graph 1 nohead dt 3 lc rgb '#707070' "
        "front\n",
        i + 1, Num(m.x), Num(m.x));
    gp += fmt::format(
        "set label {} {} at first {}, graph 0.98 rotate by 90 right offset character 1,0 front "
        "tc rgb '#505050'\n",
        figure.labels.size() + i + 1, GnuplotQuote(m.text), Num(m.x));
  }
  gp += "set xrange " + Range(figure.xmin, figure.xmax) + "\n";
  gp += "set yrange " + Range(figure.ymin, figure.ymax) + "\n";
  std::string with = "lines lw 1.5";
  if (figure.kind == PlotKind::kSteps) with = "linespoints pt 7 ps 0.4 lw 1.2";
  if (figure.kind == PlotKind::kBars || figure.kind == PlotKind::kBoxes) {
    const size_t n = figure.stacked ? 1 : std::max<size_t>(1, figure.series.size());
    const double width = 0.8 / static_cast<double>(n);
    if (figure.kind == PlotKind::kBars) {
      gp += fmt::format("set boxwidth {}\nset style fill solid 0.8 border -1\n", Num(width));
    } else {
      gp += fmt::format("set boxwidth {} absolute\nset style fill solid 0.3 border -1\n",
                        Num(0.8 * width));
    }
    std::string tics;
    for (size_t i = 0; i < figure.categories.size(); ++i) {
      // Explicit tic labels are format strings to gnuplot: a literal % must be doubled.
      std::string label;
      for (char c : figure.categories[i]) label += c == '%' ? std::string("%%") : std::string(1, c);
      tics += fmt::format("{}{} {}", i == 0 ? "" : ", ", GnuplotQuote(label), i);
    }
    gp += "set xtics (" + tics +
          ")\nset xrange [-0.5:" + Num(static_cast<double>(figure.categories.size()) - 0.5) + "]\n";
    with = figure.kind == PlotKind::kBars ? "boxes" : "candlesticks whiskerbars 0.5";
  }
  std::vector<std::string> clauses;
  const size_t n = figure.series.size();
  for (size_t i = 0; i < n; ++i) {
    const Series& s = figure.series[i];
    if (SeriesPointCount(figure, i) == 0) continue;  // gnuplot rejects an empty data block
    std::string using_clause = "1:2";
    // Series i's bar or box sits at its slot within the group centred on the category index.
    if (figure.kind == PlotKind::kBars) {
      using_clause = figure.stacked ? "1:2" : OffsetX(GroupOffset(i, n)) + ":2";
    }
    if (figure.kind == PlotKind::kBoxes) {
      // candlesticks: x:box_min:whisker_min:whisker_max:box_max; then the median as a flat
      // candle and the dot as a point, both in the series' colour.
      const std::string x = OffsetX(GroupOffset(i, n));
      const std::string lc = fmt::format(" lc {}", i + 1);
      clauses.push_back(fmt::format("'{}.dat' index {} using {}:3:2:6:5 with {}{}{} title {}",
                                    figure.name, i, x, with, lc,
                                    s.style.empty() ? "" : " " + s.style, GnuplotQuote(s.title)));
      clauses.push_back(
          fmt::format("'{}.dat' index {} using {}:4:4:4:4 with candlesticks lw 2.5{} notitle",
                      figure.name, i, x, lc));
      clauses.push_back(fmt::format(
          "'{}.dat' index {} using {}:7 with points pt 7 ps 0.8{} notitle", figure.name, i, x, lc));
      continue;
    }
    // gnuplot wants the style's modifiers right after `with STYLE`.
    std::string clause = fmt::format("'{}.dat' index {} using {}{} with {}{} title {}", figure.name,
                                     i, using_clause, s.y2 ? " axes x1y2" : "", with,
                                     s.style.empty() ? "" : " " + s.style, GnuplotQuote(s.title));
    clauses.push_back(clause);
  }
  // Stacked: the tallest (last, cumulative) bars first, so each lower one is drawn over it.
  if (figure.stacked) std::reverse(clauses.begin(), clauses.end());
  gp += "plot ";
  for (size_t i = 0; i < clauses.size(); ++i) gp += (i == 0 ? "" : ", \\\n     ") + clauses[i];
  gp += "\n";
  return gp;
}

Status RunGnuplot(const CommandRunner& runner, const std::string& dir, const std::string& commands,
                  const std::string& image, std::chrono::milliseconds timeout) {
  const std::string path = dir + "/" + image;
  // gnuplot's own `cd` keeps a script's relative file names working, without a shell.
  auto out =
      runner.Run({"gnuplot", "-e", fmt::format("cd {}; {}", GnuplotQuote(dir), commands)}, timeout);
  if (!out) return out.error();
  if (out->timed_out) {
    return Failure(
        fmt::format("gnuplot timed out after {} s rendering {}", timeout.count() / 1000, path));
  }
  struct stat st {};
  if (out->exit_code != 0 || ::stat(path.c_str(), &st) != 0 || st.st_size == 0) {
    return Failure(
        fmt::format("gnuplot failed rendering {} (exit {}): {}", path, out->exit_code, out->err));
  }
  HandOver(path);  // gnuplot, run by this process, wrote it as root under sudo
  return Status::Ok();
}

Expected<FigureFiles> RenderFigure(const Figure& figure, const std::string& dir,
                                   const RenderOptions& options) {
  if (!ValidName(figure.name)) {
    return UsageError(fmt::format(
        "figure name '{}' is not a plain file stem (use letters, digits, _ . -)", figure.name));
  }
  if (PointCount(figure) == 0) {
    return UsageError(fmt::format("figure '{}' has no points to plot", figure.name));
  }
  const SystemCommandRunner system_runner;
  const CommandRunner& runner = options.runner ? *options.runner : system_runner;
  if (runner.Find("gnuplot").empty()) {
    return ResourceError(
        "gnuplot not found on PATH; install it: apt-get install gnuplot-nox "
        "(or scripts/install-deps)");
  }
  FigureFiles files;
  const std::string stem = dir + "/" + figure.name;
  files.dat = stem + ".dat";
  files.gp = stem + ".gp";
  if (Status s = WriteFileAtomic(files.dat, FigureData(figure)); !s) return s.error();
  if (Status s = WriteFileAtomic(files.gp, FigureScript(figure)); !s) return s.error();
  for (ImageFormat format : options.formats) {
    const std::string image = figure.name + "." + ImageFormatExtension(format);
    const std::string path = dir + "/" + image;
    ::remove(path.c_str());
    const std::string commands =
        fmt::format("{}; set output {}; load {}", Terminal(figure, format), GnuplotQuote(image),
                    GnuplotQuote(figure.name + ".gp"));
    if (Status s = RunGnuplot(runner, dir, commands, image, options.timeout); !s) return s.error();
    files.images.push_back(path);
    if (format == ImageFormat::kSvg) files.svg = path;
  }
  return files;
}

}  // namespace rtpulse::report
