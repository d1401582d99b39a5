#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/command_runner.h"
#include "core/error.h"
#include "results/wcet_file.h"
#include "stats/evt.h"

// `rtpulse wcet RUN` (docs/wcet.md): the worst-case latency extrapolation of a run's
// per-sample logs, one scenario at a time, with its exceedance plot under RUN/wcet/. The
// command parses its options into a WcetRequest, runs AnalyseWorstCase and prints.
namespace rtpulse::report {

/// The options as typed.
struct WcetRequest {
  std::string run;                           ///< A results folder or its result.json.
  std::string scenario;                      ///< "" = every scenario with a samples log.
  size_t block = 1000;                       ///< Samples per block for block maxima.
  std::optional<double> threshold_quantile;  ///< unset = automatic.
  int bootstrap = 200;
  uint64_t seed = 1;
};

/// The request's own ranges: --block at least 10, --threshold-quantile in [0.5, 1),
/// --bootstrap 0 to 100000; each refusal a usage error naming the value and the range.
Status CheckWcetRequest(const WcetRequest& request);

/// What a scenario without samples.bin needs (the same words in every message about it).
inline constexpr const char* kWcetNoSamplesFix =
    "re-run the suite with --samples (e.g. 'rtpulse suite --samples ...') or import "
    "time-ordered data; the histogram alone has no time order for extreme value statistics";

/// One scenario analysed.
struct WcetScenarioRun {
  results::WcetScenarioEntry entry;  ///< As wcet.json records it, less its report (WcetFileOf).
  std::string samples_path;          ///< The log read (the run folder's path to it).
  stats::EvtReport report;
  std::string plot_shown;  ///< The SVG, or the gnuplot script when it was not rendered.
};

struct WcetRun {
  std::string folder;  ///< The run folder.
  std::vector<WcetScenarioRun> scenarios;
  std::vector<std::string> skipped;  ///< Chosen scenarios without a samples log.
  std::vector<std::string> notes;    ///< Plot files not written, gnuplot failures.
};

/// Reads the run, picks the scenarios (--scenario's, or every one), estimates each one's worst
/// case (stats::EstimateWorstCase, threads merged in deadline order) and writes its exceedance
/// plot under RUN/wcet/<scenario>/. Usage errors: a run that cannot be read, a scenario it
/// does not have (with the closest name), no chosen scenario with a samples log.
/// `status_note` gets the run's own status note (a run that did not end complete) as soon as
/// the run is read, so it can be said beside an error too.
Expected<WcetRun> AnalyseWorstCase(const WcetRequest& request, const CommandRunner& runner,
                                   std::string& status_note);

/// wcet.json's document of `run`.
results::WcetFile WcetFileOf(const WcetRun& run, const std::string& version,
                             const std::string& cmdline);

}  // namespace rtpulse::report
