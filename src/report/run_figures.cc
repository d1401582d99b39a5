#include "report/run_figures.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "core/clock.h"
#include "report/latency_per_second.h"
#include "report/units.h"
#include "stats/summary.h"

namespace rtpulse::report {
namespace {

int64_t FloorDiv(int64_t a, int64_t b) {
  const int64_t q = a / b;
  return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q;
}

/// All probes of all paths of a scenario merged.
Histogram MergedHistogram(const results::ScenarioResult& scenario) {
  Histogram merged;
  if (!scenario.latency) return merged;
  for (const auto& path : scenario.latency->paths) {
    for (const auto& probe : path.probes) merged.Merge(probe.histogram);
  }
  return merged;
}

/// ns rounded up to whole us (the percentiles are bucket upper edges).
int64_t CeilDivUs(int64_t ns) {
  return -FloorDiv(-ns, kNsPerUs);
}

bool EndsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

bool IsTemperature(const std::string& c) {
  return c.rfind("temp_", 0) == 0 && EndsWith(c, "_c");
}
bool IsFrequency(const std::string& c) {
  return EndsWith(c, "_freq_mhz");
}

/// Monitor rows in [from, to] wall-clock, as (seconds since `from`, value).
std::vector<std::pair<double, double>> MonitorWindow(const MonitorLog& log, size_t column,
                                                     int64_t from_ns, int64_t to_ns) {
  std::vector<std::pair<double, double>> points;
  const auto& values = log.columns[column].values;
  for (size_t r = 0; r < values.size(); ++r) {
    const int64_t t = log.realtime_ns[r];
    if (t < from_ns || t > to_ns || std::isnan(values[r])) continue;
    points.emplace_back(static_cast<double>(t - from_ns) / 1e9, values[r]);
  }
  return points;
}

}  // namespace

std::vector<std::pair<double, double>> MicrosecondClasses(const Histogram& histogram) {
  std::map<int64_t, uint64_t> classes;
  histogram.ForEachBucket(
      [&](Histogram::Range r, uint64_t count) { classes[FloorDiv(r.lo, kNsPerUs)] += count; });
  std::vector<std::pair<double, double>> points;
  for (const auto& [us, count] : classes) {
    points.emplace_back(static_cast<double>(us), static_cast<double>(count));
  }
  return points;
}

std::vector<std::pair<double, double>> ExceedancePoints(const Histogram& histogram) {
  std::vector<std::pair<double, double>> points;
  const uint64_t n = histogram.count();
  if (n == 0) return points;
  if (histogram.min() > 0) points.emplace_back(NsToUs(histogram.min()), 1.0);
  uint64_t seen = 0;
  histogram.ForEachBucket([&](Histogram::Range r, uint64_t count) {
    seen += count;
    const int64_t edge = std::min(r.hi, histogram.max());
    if (seen == n || edge <= 0) return;
    points.emplace_back(NsToUs(edge), static_cast<double>(n - seen) / static_cast<double>(n));
  });
  return points;
}

Figure LatencyHistogramFigure(const std::string& name, const std::string& title,
                              const std::vector<LabelledHistogram>& curves) {
  Figure f;
  f.name = name;
  f.title = title;
  f.kind = PlotKind::kSteps;
  f.logy = true;
  f.ymin = 0.8;
  int64_t max_ns = 0;
  for (const auto& c : curves) {
    if (c.histogram->count() == 0) continue;
    max_ns = std::max(max_ns, c.histogram->max());
    f.series.push_back({fmt::format("{} (max {:.1f} us)", c.label, NsToUs(c.histogram->max())),
                        MicrosecondClasses(*c.histogram), "", false});
  }
  f.xlabel = fmt::format("Latency (us), 1 us classes; maximum {:.1f} us", NsToUs(max_ns));
  f.ylabel = "Number of samples";
  f.notes = {kMicrosecondClassRule, "x: class lower edge in us; y: samples in the class"};
  return f;
}

namespace {

/// `us` rounded up to a multiple of 10 us (tics fall on round numbers; at least 10 us).
int64_t RoundUpTo10Us(int64_t us) {
  return std::max<int64_t>(1, (us + 9) / 10) * 10;
}

/// The range rule's bounds: 4 x p99 shows the body even when the tail is thin; p99.99 shows
/// the tail when it is dense; 10 x p99 stops a handful of multi-millisecond spikes (a VM's
/// stolen time) from stretching the axis until the body is a line at 0.
constexpr int64_t kRangeMinUs = 10;
constexpr int64_t kRangeP99Factor = 4;
constexpr int64_t kRangeP99Cap = 10;

}  // namespace

HistogramRange ChooseHistogramRange(const std::vector<LabelledHistogram>& curves) {
  HistogramRange range;
  Histogram merged;
  for (const auto& c : curves) {
    if (c.histogram->count() > 0) merged.Merge(*c.histogram);
  }
  if (merged.count() == 0) return range;
  range.p99_ns = merged.Percentile(99);
  range.p9999_ns = merged.Percentile(99.99);
  range.max_ns = merged.max();
  const int64_t p99_us = CeilDivUs(range.p99_ns);
  const int64_t p9999_us = CeilDivUs(range.p9999_ns);
  // p99.99, kept between 4 x p99 and 10 x p99.
  const int64_t want_us =
      std::max(kRangeP99Factor * p99_us, std::min(p9999_us, kRangeP99Cap * p99_us));
  const int64_t limit_us = RoundUpTo10Us(std::max(want_us, kRangeMinUs));
  uint64_t beyond = 0;
  for (const auto& c : curves) {
    for (const auto& [us, count] : MicrosecondClasses(*c.histogram)) {
      if (us >= static_cast<double>(limit_us)) beyond += static_cast<uint64_t>(count);
    }
  }
  if (beyond > 0) {
    range.limit_us = limit_us;
    range.beyond = beyond;
  }
  return range;
}

std::string BeyondRangeText(const HistogramRange& range, const std::string& full_name) {
  if (!range.Clipped()) return "";
  return fmt::format("{} sample{} beyond {} us (max {:.1f} us) not drawn; all classes in {}",
                     range.beyond, range.beyond == 1 ? "" : "s", range.limit_us,
                     NsToUs(range.max_ns), full_name);
}

std::vector<Figure> LatencyHistogramFigures(const std::string& name, const std::string& title,
                                            const std::vector<LabelledHistogram>& curves) {
  Figure full = LatencyHistogramFigure(name, title, curves);
  const HistogramRange range = ChooseHistogramRange(curves);
  if (!range.Clipped()) return {std::move(full)};
  const std::string full_name = name + "_full";
  Figure limited = full;
  const auto limit = static_cast<double>(range.limit_us);
  for (auto& s : limited.series) {
    std::erase_if(s.points, [&](const std::pair<double, double>& p) { return p.first >= limit; });
  }
  limited.xmax = limit;
  const std::string beyond = BeyondRangeText(range, full_name);
  limited.labels.push_back(beyond);
  limited.notes.push_back(fmt::format(
      "x range rule: p99.99 kept between 4 x p99 and 10 x p99, rounded up to a multiple of "
      "10 us: p99 {:.1f} us, p99.99 {:.1f} us: x up to {} us",
      NsToUs(range.p99_ns), NsToUs(range.p9999_ns), range.limit_us));
  limited.notes.push_back("classes at or above " + std::to_string(range.limit_us) +
                          " us are not in this file: " + beyond);
  full.name = full_name;
  full.title += " (full range)";
  return {std::move(limited), std::move(full)};
}

Figure ExceedanceFigure(const std::string& name, const std::string& title,
                        const std::vector<LabelledHistogram>& curves) {
  Figure f;
  f.name = name;
  f.title = title;
  f.logx = true;
  f.logy = true;
  f.xlabel = "Latency x (us)";
  f.ylabel = "P(latency > x)";
  f.notes = {
      "exceedance (1 - CDF) at each non-empty log-linear bucket's upper edge "
      "(exact there); first point (min, 1); the point at the max (fraction 0) is left "
      "out for the log axis"};
  for (const auto& c : curves) {
    if (c.histogram->count() == 0) continue;
    f.series.push_back({fmt::format("{} (N={})", c.label, c.histogram->count()),
                        ExceedancePoints(*c.histogram), "", false});
  }
  return f;
}

std::string KernelTitle(const nlohmann::json& system) {
  const std::string release = system.value("release", std::string("unknown kernel"));
  std::string model = system.value("preemption_model", std::string("unknown preemption model"));
  const std::string mode = system.value("preempt_dynamic_mode", std::string());
  if (!mode.empty() && model == "PREEMPT_DYNAMIC") model += " (" + mode + ")";
  return fmt::format("{} {}, {}", system.value("sysname", std::string("Linux")), release, model);
}

std::string FileStem(const std::string& text) {
  std::string out = text;
  for (char& c : out) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '_' || c == '-' || c == '.';
    if (!ok) c = '_';
  }
  if (out.empty() || out[0] == '.') out = "_" + out;
  return out;
}

std::vector<Figure> ScenarioHistogramFigures(const results::SuiteResult& suite,
                                             const results::ScenarioResult& scenario) {
  std::vector<LabelledHistogram> curves;
  if (scenario.latency) {
    const bool several_paths = scenario.latency->paths.size() > 1;
    for (const auto& path : scenario.latency->paths) {
      for (const auto& probe : path.probes) {
        std::string label = probe.cpu >= 0 ? fmt::format("CPU {}", probe.cpu)
                                           : fmt::format("thread {}", probe.index);
        if (several_paths) label += " (" + path.wake + ")";
        curves.push_back({label, &probe.histogram});
      }
    }
  }
  return LatencyHistogramFigures(
      "histogram_" + FileStem(scenario.name),
      fmt::format("Latency histogram, scenario {}: {}", scenario.name, KernelTitle(suite.system)),
      curves);
}

Figure ScenarioExceedanceFigure(const results::SuiteResult& suite) {
  std::vector<Histogram> merged;
  merged.reserve(suite.scenarios.size());
  std::vector<std::string> labels;
  for (const auto& s : suite.scenarios) {
    if (!s.latency) continue;
    merged.push_back(MergedHistogram(s));
    labels.push_back(s.name);
  }
  std::vector<LabelledHistogram> curves;
  for (size_t i = 0; i < merged.size(); ++i) curves.push_back({labels[i], &merged[i]});
  return ExceedanceFigure("exceedance",
                          "Exceedance, all scenarios (all threads): " + KernelTitle(suite.system),
                          curves);
}

Figure PercentileBarsFigure(const std::vector<results::ScenarioStats>& rows) {
  Figure f;
  f.name = "percentiles";
  f.title = "Latency percentiles per scenario (nearest rank, all threads)";
  f.kind = PlotKind::kBars;
  f.logy = true;
  f.xlabel = "Scenario";
  f.ylabel = "Latency (us)";
  f.key_position = "top left";
  f.notes = {"x: scenario index (see xtics); y: latency in us",
             "percentile method: " + results::MethodStatement(rows)};
  const std::vector<std::pair<std::string, int64_t results::ScenarioStats::*>> columns = {
      {"p50", &results::ScenarioStats::median_ns},
      {"p99", &results::ScenarioStats::p99_ns},
      {"p99.9", &results::ScenarioStats::p999_ns},
      {"p99.99", &results::ScenarioStats::p9999_ns},
      {"max", &results::ScenarioStats::max_ns}};
  for (const auto& [label, member] : columns) {
    Series s{label, {}, "", false};
    for (size_t i = 0; i < rows.size(); ++i) {
      s.points.emplace_back(static_cast<double>(i), NsToUs(rows[i].*member));
    }
    f.series.push_back(std::move(s));
  }
  for (const auto& row : rows) {
    f.categories.push_back(row.wake.empty() ? row.scenario : row.scenario + " " + row.wake);
  }
  return f;
}

FigureSet LatencyTimelineFigures(const results::ScenarioResult& scenario,
                                 const std::string& run_folder, const MonitorLog* monitor) {
  FigureSet set;
  if (scenario.samples_file.empty()) {
    set.notes.push_back(fmt::format(
        "{}: no latency-over-time figure: the run kept no per-sample log (run the suite "
        "with --samples)",
        scenario.name));
    return set;
  }
  const std::string path = run_folder + "/" + scenario.samples_file;
  auto per_second = ReadLatencyPerSecond(path);
  if (!per_second) {
    set.notes.push_back(fmt::format("{}: no latency-over-time figure: {}", scenario.name,
                                    per_second.error().message));
    return set;
  }
  const int64_t start_realtime = per_second->summary.info.start_realtime_ns;
  const int64_t start_monotonic = per_second->summary.info.start_monotonic_ns;
  const bool have_start = start_realtime != 0;
  const std::vector<LatencySecond>& seconds = per_second->seconds;
  if (seconds.empty()) {
    set.notes.push_back(fmt::format("{}: no latency-over-time figure: {} holds no samples",
                                    scenario.name, scenario.samples_file));
    return set;
  }
  // x = seconds since the first sample's second; monitor rows are placed on the same axis
  // through the samples file's realtime/monotonic pair.
  const int64_t first_s = seconds.front().second;
  Series max_series{"max per second", {}, "lc rgb '#c00000'", false};
  Series p99_series{"p99 per second", {}, "lc rgb '#0060c0'", false};
  uint64_t fewest = seconds.front().count;
  uint64_t most = 0;
  uint64_t missed = 0;
  uint64_t seconds_missed = 0;
  for (const LatencySecond& s : seconds) {
    const double x = static_cast<double>(s.second - first_s);
    max_series.points.emplace_back(x, NsToUs(s.max_ns));
    p99_series.points.emplace_back(x, NsToUs(s.p99_ns));
    fewest = std::min(fewest, s.count);
    most = std::max(most, s.count);
    missed += s.missed;
    if (s.missed > 0) ++seconds_missed;
  }
  Figure f;
  f.name = "timeline_" + FileStem(scenario.name);
  f.xlabel = "Time since the scenario's first sample (s)";
  f.ylabel = "Latency (us)";
  f.series = {max_series, p99_series};
  f.notes = {
      "per-second maximum and nearest-rank p99 of the raw samples (exact, not from the "
      "histogram), grouped by the second of each sample's deadline",
      fmt::format("{} seconds with samples, {} to {} samples per second; {} missed period{} "
                  "(woke after the next deadline) in {} second{}",
                  seconds.size(), fewest, most, missed, missed == 1 ? "" : "s", seconds_missed,
                  seconds_missed == 1 ? "" : "s")};
  if (per_second->summary.dropped > 0) {
    f.notes.push_back(fmt::format(
        "{} samples were dropped while logging (ring full): the seconds they fell in count "
        "fewer samples than the run took",
        per_second->summary.dropped));
  }
  if (!per_second->summary.has_trailer) {
    f.notes.push_back(
        "the samples file has no trailer: the run did not end cleanly, the last second may be "
        "cut short");
  }
  std::vector<size_t> overlay;
  std::string overlay_what;
  if (monitor != nullptr && have_start) {
    for (const char* what : {"temperature", "frequency"}) {
      for (size_t c = 0; c < monitor->columns.size(); ++c) {
        const std::string& name = monitor->columns[c].name;
        if (std::string(what) == "temperature" ? IsTemperature(name) : IsFrequency(name)) {
          overlay.push_back(c);
        }
      }
      if (!overlay.empty()) {
        overlay_what = what;
        break;
      }
    }
  }
  if (overlay.empty()) {
    f.title = fmt::format("Latency over time, scenario {} (no temperature or frequency logged)",
                          scenario.name);
    set.notes.push_back(fmt::format(
        "{}: latency over time drawn alone: {}", scenario.name,
        monitor == nullptr ? "no thermal_power_log.csv"
                           : "thermal_power_log.csv has no temperature or frequency column"));
  } else {
    f.title = fmt::format("Latency over time, scenario {}, with {}", scenario.name, overlay_what);
    f.y2label = overlay_what == "temperature" ? "Temperature (C)" : "Frequency (MHz)";
    const int64_t from = start_realtime + (first_s * kNsPerSec - start_monotonic);
    const int64_t to = from + (seconds.back().second - first_s + 1) * kNsPerSec;
    for (size_t c : overlay) {
      Series s{monitor->columns[c].name, MonitorWindow(*monitor, c, from, to), "dt 2", true};
      if (!s.points.empty()) f.series.push_back(std::move(s));
    }
  }
  set.figures.push_back(std::move(f));
  return set;
}

std::vector<XMarker> ScenarioStartMarkers(const results::SuiteResult& suite,
                                          const MonitorLog& monitor) {
  std::vector<XMarker> markers;
  if (monitor.realtime_ns.empty() || monitor.realtime_ns.front() < 0) return markers;
  // elapsed_s is CLOCK_MONOTONIC since the first row; the first row's wall-clock time ties
  // result.json's (wall-clock) scenario starts to it.
  const int64_t origin_ns = monitor.realtime_ns.front();
  const double first_x = monitor.elapsed_s.front();
  const double last_x = monitor.elapsed_s.back();
  for (const auto& s : suite.scenarios) {
    if (s.start_realtime_ns <= 0) continue;  // never started
    const double x = first_x + static_cast<double>(s.start_realtime_ns - origin_ns) / 1e9;
    if (x >= first_x && x <= last_x) markers.push_back({x, s.name});
  }
  return markers;
}

FigureSet MonitorFigures(const MonitorLog& monitor, const std::vector<XMarker>& markers) {
  struct Group {
    const char* name;
    const char* title;
    const char* ylabel;
    bool (*match)(const std::string&);
  };
  static const Group kGroups[] = {
      {"monitor_temperature", "Temperatures", "Temperature (C)", &IsTemperature},
      {"monitor_frequency", "CPU frequencies", "Frequency (MHz)", &IsFrequency},
      {"monitor_power", "Power and voltages", "W / V",
       [](const std::string& c) { return EndsWith(c, "_w") || EndsWith(c, "_v"); }},
      {"monitor_throttling", "Throttling flags", "0/1",
       [](const std::string& c) {
         return EndsWith(c, "_now") || EndsWith(c, "_capped") || EndsWith(c, "_trip");
       }},
      {"monitor_cpu", "CPU use", "Percent",
       [](const std::string& c) { return EndsWith(c, "_pct"); }},
  };
  FigureSet set;
  for (const Group& g : kGroups) {
    Figure f;
    f.name = g.name;
    f.title = g.title;
    f.xlabel = "Elapsed (s)";
    f.ylabel = g.ylabel;
    f.notes = {"from thermal_power_log.csv; x: elapsed_s; empty cells left out"};
    f.markers = markers;
    if (!markers.empty()) {
      f.notes.push_back(
          "dotted vertical lines: scenario starts (result.json), on the elapsed_s axis");
    }
    for (const auto& column : monitor.columns) {
      if (!g.match(column.name)) continue;
      Series s{column.name, {}, "", false};
      for (size_t r = 0; r < column.values.size(); ++r) {
        if (!std::isnan(column.values[r]))
          s.points.emplace_back(monitor.elapsed_s[r], column.values[r]);
      }
      if (!s.points.empty()) f.series.push_back(std::move(s));
    }
    if (f.series.empty()) {
      set.notes.push_back(
          fmt::format("{}: not drawn, thermal_power_log.csv has no such column", g.title));
    } else {
      set.figures.push_back(std::move(f));
    }
  }
  return set;
}

}  // namespace rtpulse::report
