#pragma once

#include <string>
#include <vector>

#include "core/error.h"
#include "report/compare.h"
#include "report/figure.h"

namespace rtpulse::report {

/// Per compared scenario, every run overlaid: the histogram in 1 us classes with a log count
/// axis (the OSADL latency-plot convention) and the exceedance curve (1 - CDF, log-log),
/// built with report's figure functions so `report` and `compare` draw alike.
std::vector<Figure> CompareFigures(const Comparison& c);

/// Renders every figure into `dir` (created): NAME.dat, NAME.gp, NAME.svg and NAME.png.
/// Returns the SVGs made fit for inline embedding. Without gnuplot the .dat and .gp files
/// are still written, a warning says how to render them, and no SVG is returned.
Expected<std::vector<std::string>> WriteCompareFigures(const Comparison& c, const std::string& dir);

}  // namespace rtpulse::report
