#include "report/control_figures.h"

#include <fmt/format.h>

#include <algorithm>

#include "core/file_owner.h"
#include "core/histogram.h"
#include "report/units.h"

namespace rtpulse::report {
namespace {

std::vector<int64_t> SortedResponsesNs(const std::vector<results::ControlJobRow>& rows) {
  std::vector<int64_t> ns;
  ns.reserve(rows.size());
  for (const auto& r : rows) {
    if (r.release_known) ns.push_back(r.end_ns - r.release_ns);
  }
  std::sort(ns.begin(), ns.end());
  return ns;
}

/// A label for the jobs left out because their release (so response) is unknown; "" for none.
std::string UnknownReleasesLabel(const std::string& scenario,
                                 const std::vector<results::ControlJobRow>& rows, size_t shown) {
  if (shown == rows.size()) return "";
  return fmt::format(
      "{}: {} of {} jobs not drawn, their release unknown (SCHED_DEADLINE "
      "restarted its period): no response",
      scenario, rows.size() - shown, rows.size());
}

int64_t ControlFigureRank(const std::vector<int64_t>& sorted, double percentile) {
  return sorted[Histogram::NearestRank(percentile, sorted.size()) - 1];
}

}  // namespace

Figure ControlCdfFigure(const std::vector<ControlFigureInput>& configs) {
  Figure f;
  f.name = "control_response_cdf";
  f.title = "Response time (end - release) per configuration: P(response >= x)";
  f.xlabel = "Response time x (us)";
  f.ylabel = "Fraction of jobs with response >= x";
  f.logx = true;
  f.logy = true;
  f.key_position = "bottom left";
  f.notes = {
      "1 - CDF just below x: at every distinct response time x (exact ns / 1000) the "
      "fraction of the configuration's jobs with response >= x; the last point is the "
      "maximum, at count(max) / N; gnuplot joins the points with straight lines"};
  for (const auto& c : configs) {
    const auto sorted = SortedResponsesNs(c.rows);
    if (auto label = UnknownReleasesLabel(c.scenario, c.rows, sorted.size()); !label.empty()) {
      f.labels.push_back(std::move(label));
    }
    if (sorted.empty()) {
      f.labels.push_back(c.scenario +
                         (c.rows.empty() ? ": no jobs, no curve" : ": no response, no curve"));
      continue;
    }
    Series s{
        fmt::format("{} (N={}, max {:.1f} us)", c.scenario, sorted.size(), NsToUs(sorted.back())),
        {},
        "",
        false};
    const auto n = static_cast<double>(sorted.size());
    size_t zero = 0;
    for (size_t i = 0; i < sorted.size(); ++i) {
      if (i > 0 && sorted[i] == sorted[i - 1]) continue;
      if (sorted[i] <= 0) ++zero;
      s.points.emplace_back(NsToUs(sorted[i]), static_cast<double>(sorted.size() - i) / n);
    }
    if (zero > 0) {
      f.labels.push_back(c.scenario +
                         ": a response of 0 us is in the data file but not on "
                         "the log axis");
    }
    f.series.push_back(std::move(s));
  }
  return f;
}

Expected<Figure> ControlBoxFigure(const std::vector<ControlFigureInput>& configs) {
  Figure f;
  f.name = "control_response_boxes";
  f.title = "Response time (end - release) per configuration, standard vs stress";
  f.xlabel = "Configuration";
  f.ylabel = "Response time (us)";
  f.kind = PlotKind::kBoxes;
  f.key_position = "top right";
  f.labels = {"box p25-p75, thick line median, whiskers min-p99, dot max (nearest rank)"};
  f.notes = {kControlBoxRule, "x: configuration index (see xtics); y: us (exact ns / 1000)"};
  for (const auto& c : configs) {
    if (std::find(f.categories.begin(), f.categories.end(), c.configuration) ==
        f.categories.end()) {
      f.categories.push_back(c.configuration);
    }
  }
  bool logy = true;
  for (const bool stress : {false, true}) {
    Series s{stress ? "stress" : "standard", {}, "", false};
    std::vector<Box> boxes;
    bool any = false;
    for (size_t k = 0; k < f.categories.size(); ++k) {
      const ControlFigureInput* input = nullptr;
      for (const auto& c : configs) {
        if (c.configuration != f.categories[k] || c.stress != stress) continue;
        if (input != nullptr) {
          return UsageError(fmt::format(
              "two runs of configuration '{}' {} ({} and {}): a box plot pairs one standard "
              "and one stress run per configuration",
              c.configuration, stress ? "with stress" : "without stress", input->scenario,
              c.scenario));
        }
        input = &c;
      }
      if (input == nullptr) continue;
      any = true;
      const auto sorted = SortedResponsesNs(input->rows);
      if (auto label = UnknownReleasesLabel(input->scenario, input->rows, sorted.size());
          !label.empty()) {
        f.labels.push_back(std::move(label));
      }
      if (sorted.empty()) {
        f.labels.push_back(input->scenario +
                           (input->rows.empty() ? ": no jobs, no box" : ": no response, no box"));
        continue;
      }
      if (sorted.front() <= 0) logy = false;
      boxes.push_back(
          Box{static_cast<double>(k), NsToUs(sorted.front()), NsToUs(ControlFigureRank(sorted, 25)),
              NsToUs(ControlFigureRank(sorted, 50)), NsToUs(ControlFigureRank(sorted, 75)),
              NsToUs(ControlFigureRank(sorted, 99)), NsToUs(sorted.back())});
    }
    if (any) {
      f.series.push_back(std::move(s));
      f.boxes.push_back(std::move(boxes));
    }
  }
  f.logy = logy;
  if (!logy)
    f.notes.push_back("linear y axis: a response time of 0 us cannot be drawn on a log one");
  return f;
}

Status WriteControlFigures(const std::string& run_dir,
                           const std::vector<ControlFigureInput>& configs,
                           const RenderOptions& options, std::vector<std::string>* notes) {
  auto boxes = ControlBoxFigure(configs);
  if (!boxes) return boxes.error();
  const std::string dir = run_dir + "/figures";
  bool dir_made = false;
  for (const Figure& f : {ControlCdfFigure(configs), *boxes}) {
    const bool empty = std::all_of(f.series.begin(), f.series.end(),
                                   [](const Series& s) { return s.points.empty(); }) &&
                       std::all_of(f.boxes.begin(), f.boxes.end(),
                                   [](const std::vector<Box>& b) { return b.empty(); });
    if (empty) {
      if (notes != nullptr) notes->push_back(f.name + ": not drawn, no configuration has a job");
      continue;
    }
    if (!dir_made) {
      if (Status s = CreateFolders(dir); !s) return s;
      dir_made = true;
    }
    auto files = RenderFigure(f, dir, options);
    if (!files) return files.error();
  }
  return Status::Ok();
}

}  // namespace rtpulse::report
