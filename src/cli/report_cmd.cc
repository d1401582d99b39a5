// rtpulse report RUN: figures (gnuplot), LaTeX tables and one self-contained HTML page from
// a run's result.json (docs/report.md). Re-runnable at any time.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <memory>
#include <string>

#include "cli/command.h"
#include "report/report.h"

namespace rtpulse::cli {
namespace {

struct ReportCliOptions {
  std::string run;
  std::string out;
  std::string formats = "png,svg,pdf";
  bool no_html = false;
};

int RunReport(const ReportCliOptions& o) {
  auto formats = report::ParseImageFormats(o.formats);
  if (!formats) return ReportError(formats.error());
  report::ReportOptions options;
  options.out_dir = o.out;
  options.formats = *formats;
  options.html = !o.no_html;
  auto written = report::WriteReport(o.run, options);
  if (!written) return ReportError(written.error());
  for (const auto& note : written->notes) std::fprintf(stderr, "rtpulse: note: %s\n", note.c_str());
  for (const auto& path : written->written) std::printf("%s\n", path.c_str());
  return 0;
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
  return [o] { return RunReport(*o); };
}

}  // namespace rtpulse::cli
