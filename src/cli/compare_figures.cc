#include "cli/compare_figures.h"

#include <fmt/format.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "core/atomic_file.h"
#include "sys/command_runner.h"

namespace rtpulse::cli {
namespace {

namespace fs = std::filesystem;

std::string FileStem(const std::string& scenario, const char* kind) {
  std::string stem = scenario;
  for (char& ch : stem) {
    if (ch == '/' || ch == ' ') ch = '_';
  }
  return stem + "_" + kind;
}

/// Counts per 1 us class; a bucket wider than 1 us (above 512 us) lands in one class.
FigureSeries HistogramSeries(const std::string& title, const Histogram& h) {
  std::map<int64_t, uint64_t> classes;
  const int64_t min = h.min();
  const int64_t max = h.max();
  h.ForEachBucket([&](Histogram::Range range, uint64_t count) {
    const int64_t value = std::clamp(range.hi, min, max);
    const auto us = static_cast<int64_t>(std::floor(static_cast<double>(value) / 1000.0));
    classes[us] += count;
  });
  FigureSeries s{title, {}};
  for (const auto& [us, count] : classes) {
    s.points.emplace_back(static_cast<double>(us), static_cast<double>(count));
  }
  return s;
}

/// Fraction of samples at or above each bucket's value; values <= 0 cannot sit on a log axis.
FigureSeries ExceedanceSeries(const std::string& title, const Histogram& h) {
  FigureSeries s{title, {}};
  const auto n = static_cast<double>(h.count());
  uint64_t below = 0;
  const int64_t min = h.min();
  const int64_t max = h.max();
  h.ForEachBucket([&](Histogram::Range range, uint64_t count) {
    const int64_t value = std::clamp(range.hi, min, max);
    if (value > 0) {
      s.points.emplace_back(static_cast<double>(value) / 1000.0,
                            static_cast<double>(h.count() - below) / n);
    }
    below += count;
  });
  return s;
}

std::string DatText(const FigureSpec& f) {
  std::string out = fmt::format("# {}\n# x: {}; y: {}\n", f.title, f.xlabel, f.ylabel);
  for (size_t i = 0; i < f.series.size(); ++i) {
    if (i > 0) out += "\n\n";  // a new gnuplot data set ("index i")
    out += fmt::format("# {}\n", f.series[i].title);
    for (const auto& [x, y] : f.series[i].points) out += fmt::format("{} {}\n", x, y);
  }
  return out;
}

std::string Quote(const std::string& text) {
  std::string out = "'";
  for (const char ch : text) out += ch == '\'' ? std::string("''") : std::string(1, ch);
  return out + "'";
}

std::string GpText(const FigureSpec& f, bool steps) {
  std::string out = "set terminal svg size 800,450 font 'sans,11' background '#ffffff'\n";
  out += fmt::format("set output {}\n", Quote(f.name + ".svg"));
  out += fmt::format("set title {} noenhanced\nset xlabel {}\nset ylabel {}\n", Quote(f.title),
                     Quote(f.xlabel), Quote(f.ylabel));
  if (f.logx) out += "set logscale x 10\n";
  if (f.logy) out += "set logscale y 10\n";
  out += "set grid\nset key top right noenhanced\n";
  std::vector<std::string> plots;
  for (size_t i = 0; i < f.series.size(); ++i) {
    plots.push_back(fmt::format("{} index {} using 1:2 with {} lw 1.5 title {}",
                                i == 0 ? Quote(f.name + ".dat") : "''", i,
                                steps ? "histeps" : "steps", Quote(f.series[i].title)));
  }
  out += fmt::format("plot {}\n", fmt::join(plots, ", \\\n     "));
  return out;
}

std::string ReadText(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

std::vector<FigureSpec> CompareFigures(const Comparison& c) {
  std::vector<FigureSpec> figures;
  for (const auto& s : c.scenarios) {
    FigureSpec hist{FileStem(s.name, "histogram"),
                    s.name + ": latency histogram (1 us classes)",
                    "latency (us)",
                    "samples per 1 us class",
                    false,
                    true,
                    {}};
    FigureSpec exceed{FileStem(s.name, "exceedance"),
                      s.name + ": exceedance (fraction of samples >= latency)",
                      "latency (us)",
                      "fraction >= x (1 - CDF)",
                      true,
                      true,
                      {}};
    for (const auto& side : s.sides) {
      hist.series.push_back(HistogramSeries(c.runs[side.run].label, side.histogram));
      exceed.series.push_back(ExceedanceSeries(c.runs[side.run].label, side.histogram));
    }
    figures.push_back(std::move(hist));
    figures.push_back(std::move(exceed));
  }
  return figures;
}

Expected<std::vector<std::string>> WriteCompareFigures(const Comparison& c,
                                                       const std::string& dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) {
    return Failure(fmt::format("--figures '{}': cannot create the folder: {}", dir, ec.message()));
  }
  const std::string abs_dir = fs::absolute(dir).string();
  const sys::SystemCommandRunner commands;
  const bool gnuplot = !commands.Find("gnuplot").empty();
  std::vector<std::string> svgs;
  for (const auto& f : CompareFigures(c)) {
    const std::string base = abs_dir + "/" + f.name;
    if (Status s = WriteFileAtomic(base + ".dat", DatText(f)); !s) return s.error();
    if (Status s = WriteFileAtomic(base + ".gp", GpText(f, !f.logx)); !s) return s.error();
    if (!gnuplot) continue;
    auto ran = commands.Run({"gnuplot", "-e", "cd " + Quote(abs_dir), base + ".gp"},
                            std::chrono::seconds(30));
    if (!ran || ran->exit_code != 0) {
      return Failure(
          fmt::format("gnuplot failed on {}.gp: {}", base, ran ? ran->err : ran.error().message));
    }
    const std::string svg = ReadText(base + ".svg");
    const size_t start = svg.find("<svg");
    if (start != std::string::npos) svgs.push_back(svg.substr(start));
  }
  if (!gnuplot) {
    std::fprintf(stderr,
                 "rtpulse: warning: gnuplot not found: wrote the .dat/.gp figure files to %s "
                 "but no SVG (install gnuplot, then run 'gnuplot FILE.gp' there)\n",
                 dir.c_str());
  }
  return svgs;
}

}  // namespace rtpulse::cli
