// rtpulse compare RUN_A RUN_B [...]: the runs' statistics side by side against the first,
// with bootstrap CIs of the percentile differences and a distribution test (docs/compare.md).
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "cli/command.h"
#include "core/atomic_file.h"
#include "core/exit_code.h"
#include "report/compare.h"
#include "report/compare_figures.h"
#include "results/suite_reader.h"

namespace rtpulse::cli {
namespace {

namespace fs = std::filesystem;

struct CompareOptions {
  std::vector<std::string> runs;
  std::string labels;
  std::string json;
  std::string html;
  std::string figures;
  int bootstrap = 500;
  uint64_t seed = stats::kDefaultBootstrapSeed;
};

/// The folder a RUN names (the folder holding result.json), absolute and normalised.
fs::path RunFolder(const std::string& path) {
  fs::path p = fs::absolute(fs::path(path)).lexically_normal();
  if (!p.has_filename()) p = p.parent_path();
  if (p.filename() == "result.json") p = p.parent_path();
  return p;
}

/// The last `parts` components of `folder`, joined with '/'.
std::string Tail(const fs::path& folder, size_t parts) {
  std::vector<std::string> names;
  for (const auto& part : folder) {
    if (part != "/") names.push_back(part.string());
  }
  const size_t from = names.size() > parts ? names.size() - parts : 0;
  std::string out;
  for (size_t i = from; i < names.size(); ++i) out += (out.empty() ? "" : "/") + names[i];
  return out.empty() ? folder.string() : out;
}

/// The runs' names in the tables: each run's folder name (the folder holding result.json, or
/// a latency --json file's name). Folders of the same name get as many parent folders as it
/// takes to tell them apart (2026-01/stock, 2026-02/stock); the same folder twice gets #2.
std::vector<std::string> DefaultLabels(const std::vector<std::string>& runs) {
  std::vector<fs::path> folders;
  for (const auto& run : runs) folders.push_back(RunFolder(run));
  std::vector<size_t> parts(runs.size(), 1);
  std::vector<std::string> labels(runs.size());
  for (bool changed = true; changed;) {
    changed = false;
    for (size_t i = 0; i < runs.size(); ++i) labels[i] = Tail(folders[i], parts[i]);
    std::vector<size_t> grown = parts;
    for (size_t i = 0; i < runs.size(); ++i) {
      bool clash = false;
      for (size_t j = 0; j < runs.size(); ++j) {
        clash = clash || (i != j && labels[i] == labels[j] && folders[i] != folders[j]);
      }
      if (clash && Tail(folders[i], parts[i] + 1) != labels[i]) {
        ++grown[i];
        changed = true;
      }
    }
    parts = grown;
  }
  return labels;
}

std::vector<std::string> SplitComma(const std::string& text) {
  std::vector<std::string> parts;
  size_t start = 0;
  for (;;) {
    const size_t comma = text.find(',', start);
    parts.push_back(text.substr(start, comma - start));
    if (comma == std::string::npos) return parts;
    start = comma + 1;
  }
}

Expected<std::vector<std::string>> Labels(const CompareOptions& o) {
  std::vector<std::string> labels;
  if (!o.labels.empty()) {
    labels = SplitComma(o.labels);
    if (labels.size() != o.runs.size()) {
      return UsageError(
          fmt::format("--labels '{}' names {} runs but {} were given; give one "
                      "label per run, comma-separated",
                      o.labels, labels.size(), o.runs.size()));
    }
  } else {
    labels = DefaultLabels(o.runs);
  }
  // The same run given twice, or --labels naming two runs alike, still needs distinct columns.
  for (size_t i = 0; i < labels.size(); ++i) {
    int copies = 1;
    for (size_t j = 0; j < i; ++j) copies += labels[j] == labels[i] ? 1 : 0;
    if (copies > 1) labels[i] += fmt::format("#{}", copies);
  }
  return labels;
}

Expected<std::vector<report::CompareRun>> ReadRuns(const CompareOptions& o) {
  if (o.runs.size() < 2) {
    return UsageError(
        fmt::format("compare needs at least two runs (got {}); the first is the baseline, e.g. "
                    "'rtpulse compare stock/ rt/'",
                    o.runs.size()));
  }
  auto labels = Labels(o);
  if (!labels) return labels.error();
  std::vector<report::CompareRun> runs;
  for (size_t i = 0; i < o.runs.size(); ++i) {
    auto suite = results::ReadSuiteResult(o.runs[i]);
    if (!suite) return suite.error();
    if (!suite->status_note.empty()) {
      std::fprintf(stderr, "rtpulse: note: %s: %s\n", o.runs[i].c_str(),
                   suite->status_note.c_str());
    }
    runs.push_back({(*labels)[i], o.runs[i], std::move(*suite)});
  }
  return runs;
}

Status Emit(const std::string& path, const std::string& text) {
  if (path == "-") {
    std::fputs(text.c_str(), stdout);
    return Status::Ok();
  }
  return WriteFileAtomic(path, text);
}

int RunCompare(const CompareOptions& o) {
  if (o.bootstrap < 1) {
    return ReportError(UsageError(
        fmt::format("--bootstrap {} must be at least 1 (default 500 replicates)", o.bootstrap)));
  }
  auto runs = ReadRuns(o);
  if (!runs) return ReportError(runs.error());
  stats::BootstrapOptions bootstrap;
  bootstrap.replicates = o.bootstrap;
  bootstrap.seed = o.seed;
  auto comparison = report::BuildComparison(std::move(*runs), bootstrap);
  if (!comparison) return ReportError(comparison.error());

  std::vector<std::string> figures_svg;
  if (!o.figures.empty()) {
    auto written = report::WriteCompareFigures(*comparison, o.figures);
    if (!written) return ReportError(written.error());
    figures_svg = std::move(*written);
  }
  if (o.json != "-") std::fputs(report::FormatCompareText(*comparison).c_str(), stdout);
  if (!o.json.empty()) {
    if (Status s = Emit(o.json, report::CompareJson(*comparison).dump(2) + "\n"); !s) {
      return ReportError(s.error());
    }
  }
  if (!o.html.empty()) {
    if (Status s = Emit(o.html, report::CompareHtml(*comparison, figures_svg)); !s) {
      return ReportError(s.error());
    }
  }
  return ToInt(ExitCode::kOk);
}

}  // namespace

Runner SetupCompare(CLI::App& sub) {
  auto o = std::make_shared<CompareOptions>();
  sub.add_option("runs", o->runs,
                 "two or more runs: results folders, result.json files or 'latency --json' "
                 "files; the first is the baseline");
  sub.add_option("--labels", o->labels,
                 "column names, one per run: stock,rt (default: folder names)");
  sub.add_option("--json", o->json,
                 "also write the comparison as JSON to FILE, or '-' for stdout "
                 "(instead of the text table)");
  sub.add_option("--html", o->html, "also write a self-contained HTML page (tables, figures)");
  sub.add_option("--figures", o->figures,
                 "write overlaid histogram and exceedance figures (.dat, .gp, .svg) to DIR");
  sub.add_option("--bootstrap", o->bootstrap, "bootstrap replicates for the CIs (default 500)");
  sub.add_option("--seed", o->seed, "bootstrap seed (default fixed: the same CIs every time)");
  sub.allow_extras(false);
  sub.footer(
      "Exit codes: 0 compared, 1 an output could not be written,\n"
      "            2 bad usage or input (fewer than two runs, an unreadable run, no common\n"
      "            scenario).\n"
      "Docs: docs/compare.md (method, JSON schema), docs/result-json.md.");
  return [o] { return RunCompare(*o); };
}

}  // namespace rtpulse::cli
