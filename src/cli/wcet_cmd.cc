// `rtpulse wcet RUN`: worst-case latency extrapolation (extreme value statistics) from a run's
// per-sample logs; docs/wcet.md. Writes RUN/wcet/wcet.json and an exceedance plot per
// scenario.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "cli/command.h"
#include "core/atomic_file.h"
#include "core/command_runner.h"
#include "core/exit_code.h"
#include "core/file_owner.h"
#include "core/version.h"
#include "report/exceedance_plot.h"
#include "results/sample_series.h"
#include "results/suite_reader.h"
#include "stats/evt.h"

namespace rtpulse::cli {

namespace {

namespace fs = std::filesystem;

/// wcet.json's schema (docs/wcet.md).
constexpr const char* kWcetSchema = "rtpulse.wcet";
constexpr int kWcetSchemaVersion = 1;

struct WcetOptions {
  std::string run;
  std::string scenario;
  std::string json;
  size_t block = 1000;
  std::optional<double> threshold_quantile;
  int bootstrap = 200;
  uint64_t seed = 1;
};

Status CheckOptions(const WcetOptions& o) {
  if (o.block < 10) {
    return UsageError(
        fmt::format("--block {} is too small; give at least 10 samples per block "
                    "(default 1000 = 1 s at 1 ms)",
                    o.block));
  }
  if (o.threshold_quantile && !(*o.threshold_quantile >= 0.5 && *o.threshold_quantile < 1)) {
    return UsageError(fmt::format("--threshold-quantile {} must be in [0.5, 1), e.g. 0.99",
                                  *o.threshold_quantile));
  }
  if (o.bootstrap < 0 || o.bootstrap > 100000) {
    return UsageError(fmt::format("--bootstrap {} must be between 0 and 100000", o.bootstrap));
  }
  return Status::Ok();
}

const char* kNoSamplesFix =
    "re-run the suite with --samples (e.g. 'rtpulse suite --samples ...') or import "
    "time-ordered data; the histogram alone has no time order for extreme value statistics";

int RunWcet(const WcetOptions& o) {
  if (Status s = CheckOptions(o); !s) return ReportError(s.error());
  auto suite = results::ReadSuiteResult(o.run);
  if (!suite) return ReportError(suite.error());
  if (!suite->status_note.empty()) {
    std::fprintf(stderr, "rtpulse: note: %s\n", suite->status_note.c_str());
  }
  const std::string folder = results::RunFolder(o.run);

  std::vector<const results::ScenarioResult*> chosen;
  std::vector<std::string> names;
  for (const auto& s : suite->scenarios) names.push_back(s.name);
  for (const auto& s : suite->scenarios) {
    if (o.scenario.empty() || s.name == o.scenario) chosen.push_back(&s);
  }
  if (chosen.empty()) {
    const std::string guess = DidYouMean(o.scenario, names);
    return ReportError(UsageError(
        fmt::format("--scenario '{}' is not in {}{}", o.scenario, o.run,
                    guess.empty() ? fmt::format(" (scenarios: {})", fmt::join(names, ", "))
                                  : fmt::format(". Did you mean '{}'?", guess))));
  }
  std::vector<std::pair<const results::ScenarioResult*, std::string>> with_samples;
  std::vector<std::string> skipped;
  for (const auto* s : chosen) {
    const std::string path = s->samples_file.empty() ? "" : folder + "/" + s->samples_file;
    std::error_code ec;
    if (path.empty() || !fs::exists(path, ec)) {
      skipped.push_back(s->name);
    } else {
      with_samples.emplace_back(s, path);
    }
  }
  if (with_samples.empty()) {
    return ReportError(UsageError(fmt::format(
        "{}: no per-sample log (<scenario>/samples.bin) for {}; {}", o.run,
        o.scenario.empty() ? "any scenario" : "scenario '" + o.scenario + "'", kNoSamplesFix)));
  }

  stats::EvtOptions eo;
  eo.block_size = o.block;
  eo.threshold_quantile = o.threshold_quantile;
  eo.bootstrap = o.bootstrap;
  eo.seed = o.seed;

  const bool json_stdout = o.json == "-";
  std::FILE* text = json_stdout ? stderr : stdout;
  nlohmann::json doc = {{"schema", kWcetSchema},
                        {"schema_version", kWcetSchemaVersion},
                        {"rtpulse_version", kVersion},
                        {"cmdline", Invocation()},
                        {"run", folder},
                        {"disclaimer", stats::kEvtDisclaimer},
                        {"skipped_scenarios", skipped},
                        {"scenarios", nlohmann::json::array()}};
  std::vector<std::string> notes;
  for (const auto& [scenario, path] : with_samples) {
    auto series = results::OpenSampleSeries(path);
    if (!series) return ReportError(series.error());
    std::vector<std::string> input_warnings;
    if (series->dropped > 0) {
      input_warnings.push_back(
          fmt::format("{} samples were dropped while logging (ring full): the series has gaps",
                      series->dropped));
    }
    if (!series->has_trailer) {
      input_warnings.push_back("the samples file has no trailer: the run did not end cleanly");
    }
    auto estimate = stats::EstimateWorstCase(series->pass, eo);
    if (!estimate) return ReportError(estimate.error());
    const stats::EvtReport& report = *estimate;
    const std::string dir = folder + "/wcet/" + scenario->name;
    const nlohmann::json plot = report::ExceedancePlotJson(
        report::WriteExceedancePlot(dir, scenario->name, report, SystemCommandRunner()),
        scenario->name, notes);
    fmt::print(text, "scenario {}: {} threads merged in deadline order ({})\n", scenario->name,
               series->threads, path);
    std::fputs(stats::FormatEvtReport(report).c_str(), text);
    for (const auto& w : input_warnings) fmt::print(text, "  warning: {}\n", w);
    fmt::print(text, "  plot: {}\n\n",
               plot.value("rendered", nlohmann::json()).is_string()
                   ? plot.at("rendered").get<std::string>()
                   : plot.at("script").get<std::string>());
    doc["scenarios"].push_back({{"scenario", scenario->name},
                                {"samples_file", scenario->samples_file},
                                {"threads", series->threads},
                                {"order", "all threads merged by deadline (expected_ns)"},
                                {"dropped", series->dropped},
                                {"input_warnings", input_warnings},
                                {"plot", plot},
                                {"report", stats::ToJson(report)}});
  }
  for (const auto& s : skipped) {
    fmt::print(text, "scenario {}: skipped, no samples.bin ({})\n", s, kNoSamplesFix);
  }
  for (const auto& n : notes) fmt::print(stderr, "rtpulse: warning: {}\n", n);
  const std::string body = doc.dump(1) + "\n";
  int code = ToInt(ExitCode::kOk);
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
  sub.add_option("RUN", o->run, "results folder (or its result.json) of a suite run with --samples")
      ->required();
  sub.add_option("--scenario", o->scenario, "only this scenario (default: every one with samples)");
  sub.add_option("--json", o->json, "also write the JSON here ('-' = stdout, table to stderr)");
  sub.add_option("--block", o->block, "samples per block for block maxima (default 1000)");
  sub.add_option("--threshold-quantile", o->threshold_quantile,
                 "POT threshold as a quantile, e.g. 0.99 (default: automatic, stated)");
  sub.add_option("--bootstrap", o->bootstrap,
                 fmt::format("parametric bootstrap resamples for the {} intervals (default 200, "
                             "0 = none)",
                             stats::ConfidenceLabel(stats::EvtOptions{}.confidence)));
  sub.add_option("--seed", o->seed, "bootstrap seed; the same seed gives the same intervals");
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
