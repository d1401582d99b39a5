// `rtpulse wcet RUN`: worst-case latency extrapolation (extreme value statistics) from a run's
// per-sample logs; docs/wcet.md. The analysis is report/wcet_analysis.h's; this file parses,
// prints and writes RUN/wcet/wcet.json (results/wcet_file.h).
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <memory>
#include <string>

#include "cli/command.h"
#include "core/atomic_file.h"
#include "core/command_runner.h"
#include "core/exit_code.h"
#include "core/file_owner.h"
#include "core/version.h"
#include "report/wcet_analysis.h"
#include "results/wcet_file.h"

namespace rtpulse::cli {

namespace {

struct WcetOptions {
  report::WcetRequest request;
  std::string json;
};

/// The table of each scenario, then the skipped ones; on `text`.
void PrintWcetRun(const report::WcetRun& run, std::FILE* text) {
  for (const auto& s : run.scenarios) {
    fmt::print(text, "scenario {}: {} threads merged in deadline order ({})\n", s.entry.scenario,
               s.entry.threads, s.samples_path);
    std::fputs(stats::FormatEvtReport(s.report).c_str(), text);
    for (const auto& w : s.entry.input_warnings) fmt::print(text, "  warning: {}\n", w);
    fmt::print(text, "  plot: {}\n\n", s.plot_shown);
  }
  for (const auto& s : run.skipped) {
    fmt::print(text, "scenario {}: skipped, no samples.bin ({})\n", s, report::kWcetNoSamplesFix);
  }
  for (const auto& n : run.notes) fmt::print(stderr, "rtpulse: warning: {}\n", n);
}

int RunWcet(const WcetOptions& o) {
  std::string status_note;
  auto run = report::AnalyseWorstCase(o.request, SystemCommandRunner(), status_note);
  // First, as before the analysis: a run that did not end complete may be why a log is missing.
  if (!status_note.empty()) std::fprintf(stderr, "rtpulse: note: %s\n", status_note.c_str());
  if (!run) return ReportError(run.error());
  const bool json_stdout = o.json == "-";
  std::FILE* text = json_stdout ? stderr : stdout;
  PrintWcetRun(*run, text);
  const std::string body =
      results::ToJson(report::WcetFileOf(*run, kVersion, Invocation())).dump(1) + "\n";
  int code = ToInt(ExitCode::kOk);
  const std::string folder = run->folder;
  if (Status s = CreateFolders(folder + "/wcet"); !s) {
    code = ReportError(s.error());
  } else if (Status w = WriteFileAtomic(folder + "/wcet/wcet.json", body); !w) {
    code = ReportError(w.error());
  } else {
    fmt::print(text, "wrote {}/wcet/wcet.json\n", folder);
  }
  if (json_stdout) {
    std::fputs(body.c_str(), stdout);
  } else if (!o.json.empty()) {
    if (Status s = WriteFileAtomic(o.json, body); !s) code = ReportError(s.error());
  }
  std::fflush(stdout);
  return code;
}

}  // namespace

Runner SetupWcet(CLI::App& sub) {
  auto o = std::make_shared<WcetOptions>();
  report::WcetRequest& r = o->request;
  sub.add_option("RUN", r.run, "results folder (or its result.json) of a suite run with --samples")
      ->required();
  sub.add_option("--scenario", r.scenario, "only this scenario (default: every one with samples)");
  sub.add_option("--json", o->json, "also write the JSON here ('-' = stdout, table to stderr)");
  sub.add_option("--block", r.block, "samples per block for block maxima (default 1000)");
  sub.add_option("--threshold-quantile", r.threshold_quantile,
                 "POT threshold as a quantile, e.g. 0.99 (default: automatic, stated)");
  sub.add_option("--bootstrap", r.bootstrap,
                 fmt::format("parametric bootstrap resamples for the {} intervals (default 200, "
                             "0 = none)",
                             stats::ConfidenceLabel(stats::EvtOptions{}.confidence)));
  sub.add_option("--seed", r.seed, "bootstrap seed; the same seed gives the same intervals");
  sub.allow_extras(false);
  sub.footer(
      "Statistical extrapolation, not a guarantee (docs/wcet.md).\n"
      "Estimates are printed only down to p = 10^-2/n per activation (n samples) and only when\n"
      "there are enough exceedances and blocks and the checks pass; otherwise 'no trustworthy\n"
      "estimate: <reason>' (docs/wcet.md, \"What is reported\"; the model's numbers stay in the\n"
      "JSON's raw_fit, marked untrusted).\n"
      "Writes RUN/wcet/wcet.json and RUN/wcet/<scenario>/exceedance.{dat,gp,svg}.\n"
      "Exit codes: 0 ok, 1 a file could not be written, 2 bad usage or input (a run without\n"
      "            samples.bin: re-run the suite with --samples).");
  return [o] { return RunWcet(*o); };
}

}  // namespace rtpulse::cli
