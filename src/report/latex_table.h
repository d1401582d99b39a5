#pragma once

#include <string>

#include "results/suite_result.h"

namespace rtpulse::report {

/// Escapes LaTeX's special characters (\ { } $ & # ^ _ % ~) for text mode.
std::string LatexEscape(const std::string& text);

/// tables/summary.tex: the statistical summary as a booktabs table (needs \usepackage{booktabs}),
/// one row per scenario (and wake path), latencies in microseconds, missed activations and
/// skipped periods beside them. A comment header states the units and the percentile method.
std::string SummaryTableTex(const results::SuiteResult& suite);

}  // namespace rtpulse::report
