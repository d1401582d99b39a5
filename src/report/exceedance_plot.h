// The exceedance plot of `rtpulse wcet` (docs/wcet.md): the measured and modelled P(latency > x)
// per activation as a gnuplot data file and script in the scenario's wcet folder, rendered to
// SVG when gnuplot is installed.
#pragma once

#include <chrono>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "core/command_runner.h"
#include "stats/evt.h"

namespace rtpulse::report {

/// What WriteExceedancePlot left in its folder.
struct ExceedancePlot {
  std::string data;    ///< DIR/exceedance.dat
  std::string script;  ///< DIR/exceedance.gp
  /// Why the folder or the two files could not be written; "" when they were (then the
  /// fields below say whether the SVG was rendered).
  std::string error;
  std::optional<std::string> rendered;  ///< DIR/exceedance.svg once gnuplot made it.
  std::string note;                     ///< Why it was not rendered ("" when it was).
  bool gnuplot_failed = false;          ///< gnuplot is there and failed (a problem to report).
};

/// The data file: the empirical points, then the models' curves (NaN outside a model).
std::string ExceedanceData(const stats::EvtReport& report);
/// The script: SVG of `exceedance.dat` in the current folder, with the supported range's
/// limit drawn when a method reports one.
std::string ExceedanceScript(const std::string& scenario, const stats::EvtReport& report);

/// Creates DIR, writes both files and renders DIR/exceedance.svg with gnuplot (RunGnuplot;
/// a missing gnuplot leaves the script and says how to render it).
ExceedancePlot WriteExceedancePlot(const std::string& dir, const std::string& scenario,
                                   const stats::EvtReport& report, const CommandRunner& runner,
                                   std::chrono::milliseconds timeout = std::chrono::seconds(30));

/// wcet.json's "plot" object of `plot` (docs/wcet.md): the data and script files, and the
/// SVG or why there is none. A folder or file that could not be written, and a gnuplot that
/// failed, are also added to `notes` (the run's warnings).
nlohmann::json ExceedancePlotJson(const ExceedancePlot& plot, const std::string& scenario,
                                  std::vector<std::string>& notes);

}  // namespace rtpulse::report
