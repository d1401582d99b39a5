#include "report/e2e_figures.h"

#include <fmt/format.h>

#include <algorithm>

#include "core/file_owner.h"
#include "core/histogram.h"

namespace rtpulse::report {
namespace {

/// The statistic of a stage's sorted values: nearest-rank percentile, or the maximum.
int64_t E2eFigureStatistic(const std::vector<int64_t>& sorted, double percentile) {
  if (percentile >= 100) return sorted.back();
  return sorted[Histogram::NearestRank(percentile, sorted.size()) - 1];
}

struct E2eFigureStat {
  const char* label;
  double percentile;
};
constexpr E2eFigureStat kE2eFigureStats[] = {{"p50", 50}, {"p90", 90}, {"p99", 99}, {"max", 100}};

}  // namespace

Figure E2eStagesFigure(const std::vector<E2eFigureInput>& scenarios) {
  Figure f;
  f.name = "e2e_stages";
  f.title = "End-to-end time per stage (capture to alert), stacked per-stage statistics";
  f.xlabel = "Scenario and statistic";
  f.ylabel = "ms";
  f.kind = PlotKind::kBars;
  f.stacked = true;
  // The key outside, right of the plot: the labels (the stack-height note, scenarios without
  // frames) stand at the plot's top left, where a key inside was drawn over them.
  f.key_position = "outside right top";
  f.width_px = 1200;
  f.notes = {
      "each bar: one statistic (p50, p90, p99 by nearest rank, or max) of every stage over the "
      "scenario's frames, stacked bottom to top Capture, Queue, Preproc, Inference, Postproc, "
      "DecisionToAlert; a series' y is cumulative (that stage's top)",
      "a stack's height is the sum of the stages' statistics, not the statistic of Total "
      "(e2e_statistics.txt has Total's own)"};
  f.labels = {"stack height = sum of the stages' statistics (not Total's percentile)"};
  std::vector<std::vector<std::vector<int64_t>>> sorted;  // [scenario][stage]
  for (const auto& s : scenarios) {
    if (s.rows.empty()) {
      f.labels.push_back(s.scenario + ": no frames, no bar");
      sorted.emplace_back();
      continue;
    }
    std::vector<std::vector<int64_t>> stages;
    for (const char* stage : kE2eStackedStages) {
      auto v = results::StageValues(s.rows, stage);
      std::sort(v.begin(), v.end());
      stages.push_back(std::move(v));
    }
    sorted.push_back(std::move(stages));
    for (const auto& stat : kE2eFigureStats) {
      f.categories.push_back(fmt::format("{} {}", s.scenario, stat.label));
    }
  }
  for (size_t k = 0; k < std::size(kE2eStackedStages); ++k) {
    f.series.push_back(Series{kE2eStackedStages[k], {}, "", false});
  }
  size_t category = 0;
  for (const auto& stages : sorted) {
    if (stages.empty()) continue;
    for (const auto& stat : kE2eFigureStats) {
      int64_t top_ns = 0;
      for (size_t k = 0; k < stages.size(); ++k) {
        if (!stages[k].empty()) top_ns += E2eFigureStatistic(stages[k], stat.percentile);
        f.series[k].points.emplace_back(static_cast<double>(category),
                                        static_cast<double>(top_ns) / 1e6);
      }
      ++category;
    }
  }
  return f;
}

Status WriteE2eFigures(const std::string& run_dir, const std::vector<E2eFigureInput>& scenarios,
                       const RenderOptions& options, std::vector<std::string>* notes) {
  const Figure f = E2eStagesFigure(scenarios);
  if (f.categories.empty()) {
    if (notes != nullptr) notes->push_back("e2e_stages: not drawn, no scenario has a frame");
    return Status::Ok();
  }
  const std::string dir = run_dir + "/figures";
  if (Status s = CreateFolders(dir); !s) return s;
  auto files = RenderFigure(f, dir, options);
  if (!files) return files.error();
  return Status::Ok();
}

}  // namespace rtpulse::report
