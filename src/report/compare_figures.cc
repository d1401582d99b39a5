#include "report/compare_figures.h"

#include <fmt/format.h>

#include <cstdio>
#include <filesystem>

#include "core/atomic_file.h"
#include "core/file_owner.h"
#include "core/fs_root.h"
#include "report/html_page.h"
#include "report/run_figures.h"

namespace rtpulse::report {
namespace {

namespace fs = std::filesystem;

/// Without gnuplot: the data and scripts alone, to render elsewhere.
Status WriteSources(const Figure& figure, const std::string& dir) {
  if (Status s = WriteFileAtomic(dir + "/" + figure.name + ".dat", FigureData(figure)); !s) {
    return s;
  }
  return WriteFileAtomic(dir + "/" + figure.name + ".gp", FigureScript(figure));
}

}  // namespace

std::vector<Figure> CompareFigures(const Comparison& c) {
  std::vector<Figure> figures;
  for (const auto& s : c.scenarios) {
    std::vector<LabelledHistogram> curves;
    for (const auto& side : s.sides) {
      curves.push_back({c.runs[side.run].label, &side.histogram});
    }
    const std::string stem = FileStem(s.name);
    for (auto& f : LatencyHistogramFigures(stem + "_histogram",
                                           s.name + ": latency histogram, 1 us classes", curves)) {
      figures.push_back(std::move(f));
    }
    figures.push_back(ExceedanceFigure(
        stem + "_exceedance", s.name + ": exceedance (fraction of samples above x)", curves));
  }
  return figures;
}

Expected<std::vector<std::string>> WriteCompareFigures(const Comparison& c,
                                                       const std::string& dir) {
  if (Status s = CreateFolders(dir); !s) {
    return Error{s.error().code, fmt::format("--figures '{}': {}", dir, s.error().message)};
  }
  RenderOptions options;
  options.formats = {ImageFormat::kSvg, ImageFormat::kPng};
  std::vector<std::string> svgs;
  bool no_gnuplot = false;
  for (const auto& figure : CompareFigures(c)) {
    if (no_gnuplot) {
      if (Status s = WriteSources(figure, dir); !s) return s.error();
      continue;
    }
    auto files = RenderFigure(figure, dir, options);
    if (!files && files.error().code == ExitCode::kResource) {
      // gnuplot is missing: the figures' data is still worth having.
      std::fprintf(stderr, "rtpulse: warning: %s; wrote only the .dat/.gp files to %s\n",
                   files.error().message.c_str(), dir.c_str());
      no_gnuplot = true;
      if (Status s = WriteSources(figure, dir); !s) return s.error();
      continue;
    }
    if (!files) return files.error();
    svgs.push_back(InlineSvg(ReadWholeFile(files->svg).value_or(""), figure.name + "_"));
  }
  return svgs;
}

}  // namespace rtpulse::report
