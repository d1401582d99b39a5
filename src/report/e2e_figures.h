#pragma once

#include <string>
#include <vector>

#include "core/error.h"
#include "report/figure.h"
#include "results/e2e_result.h"

// The figure of `rtpulse e2e` (docs/e2e.md, "Figures"): where each scenario's end-to-end time
// goes, as stacked per-stage percentiles.
namespace rtpulse::report {

/// One scenario, as the figure needs it.
struct E2eFigureInput {
  std::string scenario;
  std::vector<results::E2eFrameRow> rows;
};

/// The stacked stages, bottom to top (E2eStages' order).
inline constexpr const char* kE2eStackedStages[] = {"Capture",   "Queue",    "Preproc",
                                                    "Inference", "Postproc", "DecisionToAlert"};

/// e2e_stages: one bar per scenario and statistic ("SCENARIO p50", p90, p99, max), stacked
/// from each stage's own value of that statistic (nearest rank over the frames), in ms. The
/// series' y values are cumulative (Figure::stacked). A stack's height is the sum of the
/// stages' percentiles, which is not Total's percentile (e2e_statistics.txt has that); the
/// figure says so. Scenarios without frames get a label and no bar.
Figure E2eStagesFigure(const std::vector<E2eFigureInput>& scenarios);

/// Renders it into RUN_DIR/figures (created when missing): e2e_stages.dat (the plotted,
/// cumulative values), .gp and the images. Nothing to draw: not rendered, `notes` says so.
Status WriteE2eFigures(const std::string& run_dir, const std::vector<E2eFigureInput>& scenarios,
                       const RenderOptions& options = {},
                       std::vector<std::string>* notes = nullptr);

}  // namespace rtpulse::report
