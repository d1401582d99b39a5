#include "report/wcet_analysis.h"

#include <fmt/format.h>

#include <filesystem>
#include <utility>

#include "core/suggest.h"
#include "report/exceedance_plot.h"
#include "results/sample_series.h"
#include "results/suite_reader.h"

namespace rtpulse::report {

namespace fs = std::filesystem;

Status CheckWcetRequest(const WcetRequest& request) {
  if (request.block < 10) {
    return UsageError(
        fmt::format("--block {} is too small; give at least 10 samples per block "
                    "(default 1000 = 1 s at 1 ms)",
                    request.block));
  }
  if (request.threshold_quantile &&
      !(*request.threshold_quantile >= 0.5 && *request.threshold_quantile < 1)) {
    return UsageError(fmt::format("--threshold-quantile {} must be in [0.5, 1), e.g. 0.99",
                                  *request.threshold_quantile));
  }
  if (request.bootstrap < 0 || request.bootstrap > 100000) {
    return UsageError(
        fmt::format("--bootstrap {} must be between 0 and 100000", request.bootstrap));
  }
  return Status::Ok();
}

namespace {

/// The scenarios --scenario names (or all), or a usage error with the closest name.
Expected<std::vector<const results::ScenarioResult*>> ChooseScenarios(
    const results::SuiteResult& suite, const WcetRequest& request) {
  std::vector<const results::ScenarioResult*> chosen;
  std::vector<std::string> names;
  for (const auto& s : suite.scenarios) {
    names.push_back(s.name);
    if (request.scenario.empty() || s.name == request.scenario) chosen.push_back(&s);
  }
  if (!chosen.empty()) return chosen;
  const std::string guess = ClosestName(request.scenario, names);
  return UsageError(fmt::format("--scenario '{}' is not in {}{}", request.scenario, request.run,
                                guess.empty()
                                    ? fmt::format(" (scenarios: {})", fmt::join(names, ", "))
                                    : fmt::format(". Did you mean '{}'?", guess)));
}

/// One scenario's series, estimate and plot.
Expected<WcetScenarioRun> AnalyseScenario(const results::ScenarioResult& scenario,
                                          const std::string& path, const std::string& folder,
                                          const stats::EvtOptions& options,
                                          const CommandRunner& runner,
                                          std::vector<std::string>& notes) {
  auto series = results::OpenSampleSeries(path);
  if (!series) return series.error();
  WcetScenarioRun out;
  out.samples_path = path;
  results::WcetScenarioEntry& e = out.entry;
  e.scenario = scenario.name;
  e.samples_file = scenario.samples_file;
  e.threads = series->threads;
  e.order = "all threads merged by deadline (expected_ns)";
  e.dropped = series->dropped;
  if (series->dropped > 0) {
    e.input_warnings.push_back(fmt::format(
        "{} samples were dropped while logging (ring full): the series has gaps", series->dropped));
  }
  if (!series->has_trailer) {
    e.input_warnings.push_back("the samples file has no trailer: the run did not end cleanly");
  }
  auto estimate = stats::EstimateWorstCase(series->pass, options);
  if (!estimate) return estimate.error();
  out.report = std::move(*estimate);
  e.plot = ExceedancePlotJson(
      WriteExceedancePlot(folder + "/wcet/" + scenario.name, scenario.name, out.report, runner),
      scenario.name, notes);
  const auto rendered = e.plot.find("rendered");
  out.plot_shown = rendered != e.plot.end() && rendered->is_string()
                       ? rendered->get<std::string>()
                       : e.plot.value("script", std::string());
  return out;
}

}  // namespace

Expected<WcetRun> AnalyseWorstCase(const WcetRequest& request, const CommandRunner& runner,
                                   std::string& status_note) {
  if (Status s = CheckWcetRequest(request); !s) return s.error();
  auto suite = results::ReadSuiteResult(request.run);
  if (!suite) return suite.error();
  status_note = suite->status_note;
  auto chosen = ChooseScenarios(*suite, request);
  if (!chosen) return chosen.error();
  WcetRun run;
  run.folder = results::RunFolder(request.run);
  std::vector<std::pair<const results::ScenarioResult*, std::string>> with_samples;
  for (const auto* s : *chosen) {
    const std::string path = s->samples_file.empty() ? "" : run.folder + "/" + s->samples_file;
    std::error_code ec;
    if (path.empty() || !fs::exists(path, ec)) {
      run.skipped.push_back(s->name);
    } else {
      with_samples.emplace_back(s, path);
    }
  }
  if (with_samples.empty()) {
    return UsageError(fmt::format(
        "{}: no per-sample log (<scenario>/samples.bin) for {}; {}", request.run,
        request.scenario.empty() ? "any scenario" : "scenario '" + request.scenario + "'",
        kWcetNoSamplesFix));
  }
  stats::EvtOptions options;
  options.block_size = request.block;
  options.threshold_quantile = request.threshold_quantile;
  options.bootstrap = request.bootstrap;
  options.seed = request.seed;
  for (const auto& [scenario, path] : with_samples) {
    auto one = AnalyseScenario(*scenario, path, run.folder, options, runner, run.notes);
    if (!one) return one.error();
    run.scenarios.push_back(std::move(*one));
  }
  return run;
}

results::WcetFile WcetFileOf(const WcetRun& run, const std::string& version,
                             const std::string& cmdline) {
  results::WcetFile file;
  file.rtpulse_version = version;
  file.cmdline = cmdline;
  file.run = run.folder;
  file.disclaimer = std::string(stats::kEvtDisclaimer);
  file.skipped_scenarios = run.skipped;
  for (const auto& s : run.scenarios) {
    file.scenarios.push_back(s.entry);
    file.scenarios.back().report = stats::ToJson(s.report);
  }
  return file;
}

}  // namespace rtpulse::report
