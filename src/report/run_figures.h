#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "core/histogram.h"
#include "report/figure.h"
#include "report/monitor_log.h"
#include "results/suite_result.h"

namespace rtpulse::report {

/// How MicrosecondClasses() maps the log-linear histogram onto 1 us classes (written into
/// every histogram .dat file).
inline constexpr const char* kMicrosecondClassRule =
    "1 us classes rebuilt from rtpulse's log-linear histogram: each bucket's count goes to "
    "the class of its lower edge (floor(lo_ns/1000)). Buckets are 1 ns wide below 1024 ns "
    "and at most 1024 ns wide below 2^20 ns (1.05 ms), so a count can land at most one class "
    "low; above that a class may gather several us.";

/// (class in us, count) for every non-empty 1 us class, ascending (negative classes too).
std::vector<std::pair<double, double>> MicrosecondClasses(const Histogram& histogram);

/// Exceedance (1 - CDF) points: (x_us, fraction of samples > x) at every non-empty bucket's
/// upper edge, exact there, starting with (min_us, 1). Points with fraction 0 (at and after
/// the max) and x <= 0 are left out, so the curve fits log-log axes.
std::vector<std::pair<double, double>> ExceedancePoints(const Histogram& histogram);

/// A histogram with the legend text it is drawn under.
struct LabelledHistogram {
  std::string label;
  const Histogram* histogram = nullptr;
};

/// OSADL-style latency plot over the full range: 1 us classes, linear x, log y, one curve
/// per histogram, the largest maximum in the x label.
Figure LatencyHistogramFigure(const std::string& name, const std::string& title,
                              const std::vector<LabelledHistogram>& curves);

/// Where the OSADL histogram's linear x axis ends (docs/report.md, "Histogram range"), from
/// all curves merged: the nearest-rank p99.99, kept between 4 x p99 and 10 x p99 (both in
/// whole us, rounded up), rounded up to a multiple of 10 us. Classes whose lower edge is at
/// or above the limit are not drawn; when none is, nothing is cut (limit_us = 0).
struct HistogramRange {
  int64_t p99_ns = 0;
  int64_t p9999_ns = 0;
  int64_t max_ns = 0;    ///< Largest maximum of the curves (exact).
  int64_t limit_us = 0;  ///< First class not drawn; 0 when every class is drawn.
  uint64_t beyond = 0;   ///< Samples (all curves) in the classes not drawn.
  bool Clipped() const { return beyond > 0; }
};
HistogramRange ChooseHistogramRange(const std::vector<LabelledHistogram>& curves);

/// "3 samples beyond 500 us (max 5012.3 us) not drawn; all of them in NAME_full", or "" when
/// nothing was cut.
std::string BeyondRangeText(const HistogramRange& range, const std::string& full_name);

/// The histogram figures of one set of curves under the range rule: when it cuts samples,
/// NAME (x up to the limit, the samples left out said in a label) and NAME_full (every
/// class); otherwise NAME alone, over the full range. `compare` overlays runs with it too.
std::vector<Figure> LatencyHistogramFigures(const std::string& name, const std::string& title,
                                            const std::vector<LabelledHistogram>& curves);

/// Exceedance curves on log-log axes, one per histogram.
Figure ExceedanceFigure(const std::string& name, const std::string& title,
                        const std::vector<LabelledHistogram>& curves);

/// "Linux 6.1.0-18-amd64, PREEMPT_DYNAMIC (voluntary)" from result.json's system block.
std::string KernelTitle(const nlohmann::json& system);

/// A file stem from any text: characters outside [A-Za-z0-9_.-] become '_'.
std::string FileStem(const std::string& text);

/// Figure 1: a scenario's histogram, one curve per CPU (all wake paths' probes), under the
/// range rule (LatencyHistogramFigures: one figure, or the limited one and NAME_full).
std::vector<Figure> ScenarioHistogramFigures(const results::SuiteResult& suite,
                                             const results::ScenarioResult& scenario);

/// Figure 2: every measured scenario's exceedance curve (all threads merged).
Figure ScenarioExceedanceFigure(const results::SuiteResult& suite);

/// Figure 5: p50, p99, p99.9, p99.99 and max per scenario, bars on a log y axis.
Figure PercentileBarsFigure(const std::vector<results::ScenarioStats>& rows);

/// Figures plus what could not be drawn and why (shown in the HTML).
struct FigureSet {
  std::vector<Figure> figures;
  std::vector<std::string> notes;
};

/// Figure 3: per-second maximum and p99 latency from the scenario's samples file, with the
/// monitor's temperature (or, without one, frequency) columns on the right axis over the
/// same wall-clock span. Without a samples file: no figure, a note. Without temperature or
/// frequency columns: latency alone, said in the title and a note.
FigureSet LatencyTimelineFigures(const results::ScenarioResult& scenario,
                                 const std::string& run_folder, const MonitorLog* monitor);

/// Figure 4: the monitor's numeric columns grouped by unit (temperature, frequency, power
/// and voltage, CPU use, everything else), over elapsed seconds; a note per empty group.
/// `markers` (ScenarioStartMarkers) are drawn on every figure.
FigureSet MonitorFigures(const MonitorLog& monitor, const std::vector<XMarker>& markers = {});

/// Where each scenario started (result.json's start time), on the monitor log's elapsed_s
/// axis: one marker per scenario whose start lies between the first and the last row.
std::vector<XMarker> ScenarioStartMarkers(const results::SuiteResult& suite,
                                          const MonitorLog& monitor);

}  // namespace rtpulse::report
